/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the foliofarm guest programs: KTAP output, sizes read from
 * the running kernel (never #defined: they differ between 4K, 16K and 64K), and
 * the raw dump of a mapping (pagemap, kpageflags, probe) that the host analyses.
 */
#ifndef FFGUEST_H
#define FFGUEST_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/stat.h>

struct ff_sizes {
	size_t page;   /* sysconf(_SC_PAGESIZE) */
	size_t pmd;    /* /sys/kernel/mm/transparent_hugepage/hpage_pmd_size */
};

int ff_sizes(struct ff_sizes *s);

/*
 * Start a one-test KTAP report for check @name and read the sizes. Returns
 * nonzero when the kernel has no THP sysfs: the SKIP result is printed and the
 * program should exit 0.
 */
int ff_begin(const char *name, struct ff_sizes *s);

/* KTAP */
void ktap_header(int ntests);
void ktap_result(int ok, int num, const char *name, const char *directive_fmt, ...)
	__attribute__((format(printf, 4, 5)));
void ktap_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Open a dump file and write its meta line; returns NULL and prints why on failure. */
FILE *ff_dump_open(const char *path, const char *check, const char *fs,
		   const struct ff_sizes *s);

/*
 * Append one mapping to a dump: a "map" line, one "P" line per present page
 * (index, PFN, kpageflags, probe flags) and "K" lines for the unmapped pages of
 * the folios it touches, so that the host can tell each folio's order.
 * Returns the number of present pages, or -1 with errno set.
 */
long ff_dump_mapping(FILE *f, const char *label, const void *start, size_t len,
		     size_t page);

/* Pin a block device's readahead window; returns the old value in kB or -1. */
long ff_set_read_ahead_kb(const char *dev, long kb);

/* Drop clean page cache so that the next access is cold. */
int ff_drop_caches(void);
/* Drop the page cache, then open PATH read-only and fstat it: the cold start of
 * every file check. Returns the fd, or -1 after saying why in a KTAP diagnostic. */
int ff_open_cold(const char *path, struct stat *st);

/*
 * Tracepoints: enable the named events ("readahead/page_cache_sync_ra", ...) that
 * this kernel has, with an empty buffer. Returns how many were enabled.
 */
int ff_trace_start(const char *const *events);
/* Disable them and append the buffer to the dump as "T <label> <line>" records,
 * keeping only lines about inode @ino (0 keeps all). Returns lines kept. */
long ff_trace_stop(FILE *dump, const char *label, const char *const *events,
		   unsigned long ino);

/* Number of resident pages in [addr, addr + len) by mincore(). */
long ff_resident_pages(const void *addr, size_t len, size_t page);
/*
 * The same for a file mapping @map of @fd from file offset 0, counted once
 * readahead I/O on the range has finished: mincore() sees only uptodate pages,
 * and a window still being read (under TCG on a busy host, for long) would be
 * missed by chance of timing. cachestat() counts pages being read too; the
 * count is taken when both agree. Pages in the page cache, uptodate or not.
 */
long ff_resident_settled(int fd, const char *map, size_t off, size_t len, size_t page);
/* Pages of the file range in the page cache, being read or not (cachestat(),
 * Linux 6.5); -1 without it. */
long ff_cached_pages(int fd, size_t off, size_t len);

/* The readahead tracepoints the checks keep (7.x), NULL-terminated. */
extern const char *const ff_readahead_events[];

#endif
