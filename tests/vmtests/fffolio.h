/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the folio programs share (mthp-swap, shmem-mthp, write-folios), and
 * what a reproducer may use as they do: the folio sizes that back a range,
 * read from /proc/self/pagemap and /proc/kpageflags (Documentation/
 * admin-guide/mm/pagemap.rst), whether its pages sit in swap, and the anon
 * and shmem mTHP sizes of sysfs. Static inline, in a header alone, like
 * ffcontpte.h: `foliofarm run --repro FILE.c` offers it beside the source.
 */
#ifndef FFFOLIO_H
#define FFFOLIO_H

#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FF_PM_PRESENT (1ULL << 63)
#define FF_PM_SWAP (1ULL << 62)
#define FF_PM_PFN ((1ULL << 55) - 1)
#define FF_KPF_HEAD (1ULL << 15)        /* KPF_COMPOUND_HEAD */
#define FF_KPF_TAIL (1ULL << 16)        /* KPF_COMPOUND_TAIL */
#define FF_THP "/sys/kernel/mm/transparent_hugepage"

/* What backs [start, start + len): pages present, pages in swap, and pages in
 * folios of at least ``min_pages`` pages (a folio: a compound head followed,
 * in virtual and physical order, by its tails); pages -1 if unreadable. */
struct ff_backing {
	long pages, present, swapped, large;
	long max_folio_pages;
};

static inline int ff_backing(const char *start, size_t len, size_t page, long min_pages,
			     struct ff_backing *b)
{
	size_t n = len / page;
	uint64_t *pm = calloc(n ? n : 1, 8);
	int pfd = open("/proc/self/pagemap", O_RDONLY), kfd = open("/proc/kpageflags", O_RDONLY);
	long run = 0, run_start = 0;
	uint64_t last_pfn = 0;
	int ok = pm && pfd >= 0 && kfd >= 0 &&
		 pread(pfd, pm, n * 8, (off_t)((uintptr_t)start / page) * 8) == (ssize_t)(n * 8);

	memset(b, 0, sizeof(*b));
	b->pages = n;
	/* each run of one folio's pages ends at a page that is not its next tail */
	for (size_t i = 0; ok && i <= n; i++) {
		uint64_t e = i < n ? pm[i] : 0, flags = 0, pfn = e & FF_PM_PFN;
		int tail = 0;

		if (i < n && (e & FF_PM_SWAP))
			b->swapped++;
		if (i < n && (e & FF_PM_PRESENT)) {
			b->present++;
			if (pread(kfd, &flags, 8, (off_t)pfn * 8) != 8)
				ok = 0;
			tail = (flags & FF_KPF_TAIL) && run && pfn == last_pfn + 1;
		}
		if (!tail && run) {
			if (run >= min_pages)
				b->large += run;
			if (run > b->max_folio_pages)
				b->max_folio_pages = run;
			run = 0;
		}
		if (i < n && (e & FF_PM_PRESENT)) {
			if (!tail)
				run_start = i;
			run = (long)i - run_start + 1;
			last_pfn = pfn;
		}
	}
	if (pfd >= 0)
		close(pfd);
	if (kfd >= 0)
		close(kfd);
	free(pm);
	if (!ok)
		b->pages = -1;
	return ok ? 0 : -1;
}

/* One line of a sysfs file, its newline cut; 0, or -1. */
static inline int ff_read_line(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "r");
	int ok = f && fgets(buf, (int)n, f);

	if (f)
		fclose(f);
	if (ok)
		buf[strcspn(buf, "\n")] = 0;
	return ok ? 0 : -1;
}

/* A number of mTHP size ``kb``'s stats/``name``; -1 if there is none. */
static inline long ff_mthp_stat(long kb, const char *name)
{
	char path[160], buf[64];

	snprintf(path, sizeof(path), FF_THP "/hugepages-%ldkB/stats/%s", kb, name);
	return ff_read_line(path, buf, sizeof(buf)) ? -1 : strtol(buf, NULL, 0);
}

/* The sizes (kB, ascending, at most ``max``) whose folder holds ``file``
 * ("enabled": the anon sizes; "shmem_enabled": shmem's): how many. */
static inline int ff_mthp_sizes(const char *file, long *kb, int max)
{
	DIR *d = opendir(FF_THP);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)) && n < max) {
		char path[400];
		long v;

		if (sscanf(e->d_name, "hugepages-%ldkB", &v) != 1)
			continue;
		snprintf(path, sizeof(path), FF_THP "/%s/%s", e->d_name, file);
		if (access(path, F_OK))
			continue;
		int i = n++;
		for (; i > 0 && kb[i - 1] > v; i--)
			kb[i] = kb[i - 1];
		kb[i] = v;
	}
	if (d)
		closedir(d);
	return n;
}

/* Set size ``kb``'s ``file`` ("enabled", "shmem_enabled") to ``value``; its
 * old value (the bracketed word) into ``old`` when given. 0, or -1 said. */
static inline int ff_set_size(long kb, const char *file, const char *value, char *old, size_t n)
{
	char path[160], line[160], *l, *r;
	FILE *f;

	snprintf(path, sizeof(path), FF_THP "/hugepages-%ldkB/%s", kb, file);
	if (old && !ff_read_line(path, line, sizeof(line))) {
		l = strchr(line, '[');
		r = l ? strchr(l, ']') : NULL;
		snprintf(old, n, "%.*s", l && r ? (int)(r - l - 1) : 0, l ? l + 1 : "");
	}
	f = fopen(path, "w");
	if (!f) {
		perror(path);
		return -1;
	}
	if ((fputs(value, f) < 0) | (fclose(f) != 0)) {
		perror(path);
		return -1;
	}
	return 0;
}

#endif
