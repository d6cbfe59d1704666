// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ffguest.h"

const char *const ff_readahead_events[] = {
	"readahead/page_cache_sync_ra",
	"readahead/page_cache_async_ra",
	"readahead/page_cache_ra_order",
	NULL,
};
#include "ffprobe.h"

#define KPF_COMPOUND_HEAD (1ULL << 15)
#define KPF_COMPOUND_TAIL (1ULL << 16)
#define PM_PRESENT (1ULL << 63)
#define PM_PFN_MASK ((1ULL << 55) - 1)
/* Largest folio we walk to find a folio's ends: 2^13 pages (PMD on 64K). */
#define MAX_FOLIO_PAGES (1UL << 13)

static long read_long_file(const char *path)
{
	char buf[64];
	long v = -1;
	FILE *f = fopen(path, "r");

	if (f) {
		if (fgets(buf, sizeof(buf), f))
			v = strtol(buf, NULL, 0);
		fclose(f);
	}
	return v;
}

int ff_sizes(struct ff_sizes *s)
{
	long pmd = read_long_file("/sys/kernel/mm/transparent_hugepage/hpage_pmd_size");

	s->page = (size_t)sysconf(_SC_PAGESIZE);
	s->pmd = pmd > 0 ? (size_t)pmd : 0;
	return pmd > 0 ? 0 : -1;
}

int ff_begin(const char *name, struct ff_sizes *s)
{
	ktap_header(1);
	if (!ff_sizes(s))
		return 0;
	ktap_result(1, 1, name, "SKIP no THP sysfs (hpage_pmd_size)");
	return 1;
}

void ktap_header(int ntests)
{
	printf("KTAP version 1\n1..%d\n", ntests);
	fflush(stdout);
}

void ktap_result(int ok, int num, const char *name, const char *fmt, ...)
{
	va_list ap;

	printf("%s %d %s", ok ? "ok" : "not ok", num, name);
	if (fmt && *fmt) {
		printf(" # ");
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
	}
	printf("\n");
	fflush(stdout);
}

void ktap_diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

FILE *ff_dump_open(const char *path, const char *check, const char *fs,
		   const struct ff_sizes *s)
{
	FILE *f = fopen(path, "w");

	if (!f) {
		ktap_diag("cannot write %s: %s", path, strerror(errno));
		return NULL;
	}
	fprintf(f, "# foliofarm dump v1\n");
	fprintf(f, "meta check=%s fs=%s page_size=%zu pmd_size=%zu\n", check, fs,
		s->page, s->pmd);
	return f;
}

static int kpf_read(int fd, uint64_t pfn, uint64_t *flags)
{
	return pread(fd, flags, 8, (off_t)(pfn * 8)) == 8 ? 0 : -1;
}

/* Emit K lines for the folio pages of @pfn's folio beyond the mapped run. */
static void dump_folio_ends(FILE *f, int kfd, uint64_t pfn, uint64_t flags, int back)
{
	uint64_t p = pfn, fl = flags;
	unsigned long n;

	for (n = 0; n < MAX_FOLIO_PAGES; n++) {
		if (back) {
			if (!(fl & KPF_COMPOUND_TAIL) || p == 0)
				return;
			p--;
		} else {
			p++;
		}
		if (kpf_read(kfd, p, &fl))
			return;
		if (!back && !(fl & KPF_COMPOUND_TAIL))
			return;
		fprintf(f, "K %llu %llx\n", (unsigned long long)p, (unsigned long long)fl);
	}
}

long ff_dump_mapping(FILE *f, const char *label, const void *start, size_t len,
		     size_t page)
{
	size_t npages = len / page, i;
	uint64_t *pm = calloc(npages, 8), *probe = calloc(npages, 8);
	uint64_t prev_pfn = 0, prev_flags = 0;
	int pfd = -1, kfd = -1, probe_fd = -1, prev_present = 0;
	long present = 0;
	struct ffprobe_req req;

	if (!pm || !probe)
		goto fail;
	pfd = open("/proc/self/pagemap", O_RDONLY);
	kfd = open("/proc/kpageflags", O_RDONLY);
	probe_fd = open(FFPROBE_PATH, O_RDONLY);
	if (pfd < 0 || kfd < 0 || probe_fd < 0)
		goto fail;
	if (pread(pfd, pm, npages * 8, (off_t)((uintptr_t)start / page * 8)) !=
	    (ssize_t)(npages * 8))
		goto fail;
	req.start = (uintptr_t)start;
	req.npages = npages;
	req.out = (uintptr_t)probe;
	if (ioctl(probe_fd, FFPROBE_IOC_WALK, &req))
		goto fail;

	fprintf(f, "map %s %#lx %zu\n", label, (unsigned long)(uintptr_t)start, npages);
	for (i = 0; i < npages; i++) {
		uint64_t pfn = pm[i] & PM_PFN_MASK, flags = 0;
		char pf[4] = "-", *q = pf;

		if (!(pm[i] & PM_PRESENT)) {
			if (prev_present)
				dump_folio_ends(f, kfd, prev_pfn, prev_flags, 0);
			prev_present = 0;
			continue;
		}
		if (kpf_read(kfd, pfn, &flags))
			goto fail;
		if (prev_present && prev_pfn + 1 != pfn)
			dump_folio_ends(f, kfd, prev_pfn, prev_flags, 0);
		if (!prev_present || prev_pfn + 1 != pfn)
			dump_folio_ends(f, kfd, pfn, flags, 1);
		if (probe[i] & FFPROBE_PRESENT) {
			q = pf;
			*q++ = 'p';
			if (probe[i] & FFPROBE_CONT)
				*q++ = 'c';
			if (probe[i] & (FFPROBE_PMD | FFPROBE_PUD))
				*q++ = 'm';
			*q = 0;
		}
		fprintf(f, "P %zu %llu %llx %s %llu\n", i, (unsigned long long)pfn,
			(unsigned long long)flags, pf,
			(unsigned long long)(probe[i] & FFPROBE_PFN_MASK));
		present++;
		prev_present = 1;
		prev_pfn = pfn;
		prev_flags = flags;
	}
	if (prev_present)
		dump_folio_ends(f, kfd, prev_pfn, prev_flags, 0);
	fprintf(f, "endmap %s\n", label);
	goto out;
fail:
	ktap_diag("dump of %s failed: %s", label, strerror(errno));
	present = -1;
out:
	if (pfd >= 0)
		close(pfd);
	if (kfd >= 0)
		close(kfd);
	if (probe_fd >= 0)
		close(probe_fd);
	free(pm);
	free(probe);
	fflush(f);
	return present;
}

long ff_set_read_ahead_kb(const char *dev, long kb)
{
	char path[128];
	long old;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/block/%s/queue/read_ahead_kb", dev);
	old = read_long_file(path);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "%ld\n", kb);
	return fclose(f) ? -1 : old;
}

int ff_drop_caches(void)
{
	int fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
	int ret;

	sync();
	if (fd < 0)
		return -1;
	ret = write(fd, "3\n", 2) == 2 ? 0 : -1;
	close(fd);
	return ret;
}

/*
 * Pages of @fd's file still in the page cache. drop_caches cannot drop a folio
 * under I/O: asynchronous readahead of an earlier pass may still be in flight,
 * and would then be found cached, by chance of timing.
 */
static long file_resident(int fd, off_t size)
{
	size_t page = sysconf(_SC_PAGESIZE);
	void *map;
	long n;

	if (!size)
		return 0;
	map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED)
		return -1;
	n = ff_resident_pages(map, size, page);
	munmap(map, size);
	return n;
}

int ff_open_cold(const char *path, struct stat *st)
{
	long left = 0;
	int fd, tries;

	fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, st)) {
		ktap_diag("open %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	/* drop until nothing of the file is cached: a cold start every time */
	for (tries = 0; tries < 200; tries++) {
		if (ff_drop_caches())
			ktap_diag("drop_caches failed: %s", strerror(errno));
		left = file_resident(fd, st->st_size);
		if (left <= 0)
			break;
		usleep(10000);
	}
	if (left > 0)
		ktap_diag("%s: %ld pages stay cached after drop_caches", path, left);
	/* a fresh descriptor: a fresh file_ra_state */
	close(fd);
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		ktap_diag("open %s: %s", path, strerror(errno));
		return -1;
	}
	return fd;
}

#define TRACEFS "/sys/kernel/tracing"

static int write_str(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY | O_TRUNC);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, val, strlen(val));
	close(fd);
	return n == (ssize_t)strlen(val) ? 0 : -1;
}

static int trace_enable(const char *const *events, const char *val)
{
	char path[256];
	int n = 0;

	for (; *events; events++) {
		snprintf(path, sizeof(path), TRACEFS "/events/%s/enable", *events);
		if (!write_str(path, val))
			n++;
	}
	return n;
}

int ff_trace_start(const char *const *events)
{
	write_str(TRACEFS "/tracing_on", "0\n");
	write_str(TRACEFS "/trace", "");
	write_str(TRACEFS "/buffer_size_kb", "8192\n");
	if (!trace_enable(events, "1\n"))
		return 0;
	write_str(TRACEFS "/tracing_on", "1\n");
	return 1;
}

long ff_trace_stop(FILE *dump, const char *label, const char *const *events,
		   unsigned long ino)
{
	char line[1024], needle[64], needle2[64];
	long kept = 0;
	FILE *t;

	write_str(TRACEFS "/tracing_on", "0\n");
	trace_enable(events, "0\n");
	t = fopen(TRACEFS "/trace", "r");
	if (!t)
		return -1;
	/* readahead events print "ino=%llx", the filemap ones "ino %llx" */
	snprintf(needle, sizeof(needle), "ino=%lx ", ino);
	snprintf(needle2, sizeof(needle2), "ino %lx ", ino);
	while (fgets(line, sizeof(line), t)) {
		if (line[0] == '#' ||
		    (ino && !strstr(line, needle) && !strstr(line, needle2)))
			continue;
		fprintf(dump, "T %s %s", label, line);
		kept++;
	}
	fclose(t);
	write_str(TRACEFS "/trace", "");
	return kept;
}

#ifndef __NR_cachestat
#define __NR_cachestat 451	/* asm-generic, since Linux 6.5 */
#endif

long ff_cached_pages(int fd, size_t off, size_t len)
{
	struct {
		uint64_t off, len;
	} range = { off, len };
	struct {
		uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
	} cs;

	if (syscall(__NR_cachestat, fd, &range, &cs, 0))
		return -1;
	return (long)cs.nr_cache;
}

long ff_resident_settled(int fd, const char *map, size_t off, size_t len, size_t page)
{
	long uptodate = -1, prev, in_cache;
	int tries;

	for (tries = 0; tries < 2500; tries++) {
		prev = uptodate;
		uptodate = ff_resident_pages(map + off, len, page);
		in_cache = ff_cached_pages(fd, off, len);
		if (uptodate < 0 || (in_cache >= 0 ? uptodate >= in_cache : uptodate == prev))
			return uptodate;
		usleep(in_cache >= 0 ? 2000 : 20000);
	}
	ktap_diag("readahead I/O still in flight after 5 s");
	return uptodate;
}

long ff_resident_pages(const void *addr, size_t len, size_t page)
{
	size_t n = (len + page - 1) / page, i;
	unsigned char *vec = malloc(n);
	long count = 0;

	if (!vec)
		return -1;
	if (mincore((void *)addr, len, vec)) {
		free(vec);
		return -1;
	}
	for (i = 0; i < n; i++)
		count += vec[i] & 1;
	free(vec);
	return count;
}
