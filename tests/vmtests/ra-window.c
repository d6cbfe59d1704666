// SPDX-License-Identifier: GPL-2.0
/*
 * ra-window: where readahead's window lands for each fault on a file mapping,
 * for exec and non-exec mappings under each madvise hint.
 *
 * Part of a large file is mapped at a file offset and length that are not
 * aligned to any folio size. For each mapping kind (exec, data) and hint (none,
 * MADV_RANDOM, MADV_SEQUENTIAL, MADV_HUGEPAGE, MADV_NOHUGEPAGE), with a cold
 * cache and a fresh descriptor (fresh file_ra_state), it faults the mapping's
 * first page, its last page and pages at offsets drawn from a fixed seed. A
 * second mapping of the whole file, never touched, shows through mincore() what
 * each fault brought into the page cache: how many pages, where the new run
 * starts and ends relative to the faulting page, and how many pages lie outside
 * the faulting mapping. Then:
 *  - async: the pages the first drawn fault brought are touched in order; pages
 *    that arrive beyond them can only come from asynchronous readahead;
 *  - mapped: the mapping is made again over the warm cache, one page is touched,
 *    and pagemap counts the PTEs that one read fault installed (fault-around).
 * The readahead tracepoints of each pass are kept for the host (7.x).
 *
 * usage: ra-window FILE FS BLOCKDEV DUMP [FAULTS [SEED]]
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ffguest.h"

#define READ_AHEAD_KB 128


static const struct {
	const char *name;
	int advice;	/* -1: none */
} hints[] = {
	{ "none", -1 },
	{ "random", MADV_RANDOM },
	{ "sequential", MADV_SEQUENTIAL },
	{ "hugepage", MADV_HUGEPAGE },
	{ "nohugepage", MADV_NOHUGEPAGE },
};

struct layout {
	size_t page;
	size_t vma_first;	/* first file page of the mapping */
	size_t vma_pages;	/* its length in pages */
	size_t lo, hi;		/* file pages watched through mincore: [lo, hi) */
};

static uint64_t seed_state;

static uint64_t next_rand(void)
{
	/* xorshift64: the same offsets on every kernel and every boot */
	seed_state ^= seed_state << 13;
	seed_state ^= seed_state >> 7;
	seed_state ^= seed_state << 17;
	return seed_state;
}

/*
 * Residency of file pages [lo, hi) through the untouched whole-file mapping,
 * once readahead I/O has finished: mincore() counts a page only when it is
 * uptodate, and readahead may still be reading (under TCG on a busy host, for
 * a long time). cachestat() counts the pages being read too: the snapshot is
 * taken when both agree. Without cachestat(), when two snapshots 20 ms apart do.
 */
static int residency(int fd, const char *whole, const struct layout *l, unsigned char *vec)
{
	size_t n = l->hi - l->lo, len = n * l->page, i;
	long in_cache, uptodate, prev = -1;
	int tries;

	for (tries = 0; tries < 2500; tries++) {
		if (mincore((void *)(whole + l->lo * l->page), len, vec))
			return -1;
		for (uptodate = 0, i = 0; i < n; i++)
			uptodate += vec[i] & 1;
		in_cache = ff_cached_pages(fd, l->lo * l->page, (l->hi - l->lo) * l->page);
		if (in_cache >= 0 ? uptodate >= in_cache : uptodate == prev)
			return 0;
		prev = uptodate;
		usleep(in_cache >= 0 ? 2000 : 20000);
	}
	ktap_diag("readahead I/O still in flight after 5 s: taking the snapshot as it is");
	return 0;
}

/* Compare two residency snapshots: pages new in @after, the first and last new
 * page relative to @fault (file page), and how many new pages lie outside the
 * mapping. */
static long diff(const unsigned char *before, const unsigned char *after,
		 const struct layout *l, size_t fault, long *first, long *last, long *outside)
{
	long n = 0;
	size_t i;

	*first = *last = 0;
	*outside = 0;
	for (i = 0; i < l->hi - l->lo; i++) {
		size_t pg = l->lo + i;

		if (!(after[i] & 1) || (before[i] & 1))
			continue;
		if (!n)
			*first = (long)pg - (long)fault;
		*last = (long)pg - (long)fault;
		if (pg < l->vma_first || pg >= l->vma_first + l->vma_pages)
			(*outside)++;
		n++;
	}
	return n;
}

/* PTEs present in [addr, addr + pages * page) by /proc/self/pagemap. */
static long present_ptes(const void *addr, size_t pages, size_t page)
{
	uint64_t *pm = malloc(pages * sizeof(*pm));
	long n = 0;
	size_t i;
	int fd;

	fd = open("/proc/self/pagemap", O_RDONLY);
	if (fd < 0 || !pm) {
		free(pm);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (pread(fd, pm, pages * sizeof(*pm), (uintptr_t)addr / page * sizeof(*pm)) !=
	    (ssize_t)(pages * sizeof(*pm)))
		n = -1;
	for (i = 0; n >= 0 && i < pages; i++)
		n += pm[i] >> 63 & 1;
	close(fd);
	free(pm);
	return n;
}

static int pass(const char *path, const char *kind, int prot, int h, long faults,
		const struct layout *l, FILE *dump)
{
	unsigned char *before, *after;
	size_t npg = l->hi - l->lo, fpg, drawn = 0, slot;
	long i, n, first, last, outside, traced;
	char label[64], *map, *whole;
	volatile const char *p;
	struct stat st;
	int fd, ret = -1;

	snprintf(label, sizeof(label), "%s-%s", kind, hints[h].name);
	before = malloc(npg);
	after = malloc(npg);
	fd = ff_open_cold(path, &st);
	if (fd < 0 || !before || !after)
		goto out;
	whole = mmap(NULL, st.st_size, PROT_READ, MAP_SHARED, fd, 0);
	map = mmap(NULL, l->vma_pages * l->page, prot, MAP_PRIVATE, fd, l->vma_first * l->page);
	if (whole == MAP_FAILED || map == MAP_FAILED) {
		ktap_diag("%s: mmap: %s", label, strerror(errno));
		goto out_fd;
	}
	if (hints[h].advice >= 0 && madvise(map, l->vma_pages * l->page, hints[h].advice)) {
		ktap_diag("%s: madvise: %s", label, strerror(errno));
		goto out_map;
	}
	ff_trace_start(ff_readahead_events);
	slot = (l->vma_pages - 2) / (faults - 2);
	for (i = 0; i < faults; i++) {
		/* the mapping's first and last page, then one drawn page per slot,
		 * away from the slot's edges so that windows do not meet */
		if (i == 0)
			fpg = 0;
		else if (i == faults - 1)
			fpg = l->vma_pages - 1;
		else
			fpg = 1 + (i - 1) * slot + slot / 4 + next_rand() % (slot / 2);
		if (i == 1)
			drawn = fpg;
		if (residency(fd, whole, l, before))
			goto out_trace;
		p = map + fpg * l->page;
		(void)*p;
		if (residency(fd, whole, l, after))
			goto out_trace;
		n = diff(before, after, l, l->vma_first + fpg, &first, &last, &outside);
		fprintf(dump, "W %s fault=%ld page=%zu new=%ld first=%ld last=%ld outside=%ld\n",
			label, i, fpg, n, first, last, outside);
		if (i == 1) {
			/* async: walk what this fault brought, in order */
			size_t a, from = l->vma_first + fpg + first, to = l->vma_first + fpg + last;
			long far = 0;

			for (a = from; n > 0 && a <= to; a++) {
				if (a < l->vma_first || a >= l->vma_first + l->vma_pages)
					continue;
				p = map + (a - l->vma_first) * l->page;
				(void)*p;
			}
			if (residency(fd, whole, l, after))
				goto out_trace;
			far = diff(before, after, l, l->vma_first + fpg, &first, &last, &outside) - n;
			fprintf(dump, "W %s async=%ld\n", label, n > 0 ? far : 0);
		}
	}
	traced = ff_trace_stop(dump, label, ff_readahead_events, (unsigned long)st.st_ino);
	/* mapped: one read fault on a warm page of a fresh mapping */
	munmap(map, l->vma_pages * l->page);
	map = mmap(NULL, l->vma_pages * l->page, prot, MAP_PRIVATE, fd, l->vma_first * l->page);
	if (map == MAP_FAILED)
		goto out_whole;
	if (hints[h].advice >= 0)
		madvise(map, l->vma_pages * l->page, hints[h].advice);
	p = map + drawn * l->page;
	(void)*p;
	fprintf(dump, "W %s mapped=%ld traced=%ld\n", label,
		present_ptes(map, l->vma_pages, l->page), traced);
	ret = 0;
	goto out_map;
out_trace:
	ff_trace_stop(dump, label, ff_readahead_events, (unsigned long)st.st_ino);
out_map:
	munmap(map, l->vma_pages * l->page);
out_whole:
	munmap(whole, st.st_size);
out_fd:
	close(fd);
out:
	free(before);
	free(after);
	return ret;
}

int main(int argc, char **argv)
{
	struct ff_sizes sz;
	struct layout l;
	long faults, old_ra;
	unsigned long seed;
	struct stat st;
	int h, ok = 1;
	FILE *dump;

	if (argc < 5) {
		fprintf(stderr, "usage: %s FILE FS BLOCKDEV DUMP [FAULTS [SEED]]\n", argv[0]);
		return 2;
	}
	faults = argc > 5 ? strtol(argv[5], NULL, 0) : 8;
	seed = argc > 6 ? strtoul(argv[6], NULL, 0) : 20261123;
	if (faults < 3) {
		fprintf(stderr, "%s: FAULTS must be at least 3\n", argv[0]);
		return 2;
	}
	if (ff_begin("ra-window", &sz))
		return 0;	/* skipped, and said why */
	if (stat(argv[1], &st)) {
		ktap_diag("stat %s: %s", argv[1], strerror(errno));
		ktap_result(0, 1, "ra-window", NULL);
		return 1;
	}
	/* 64MB at 16MB into the file, both moved by a few pages off any folio size */
	l.page = sz.page;
	l.vma_first = (16UL << 20) / sz.page + 3;
	l.vma_pages = (64UL << 20) / sz.page - 7;
	/* watch 8MB either side: the largest window (2 x 2M) cannot reach further */
	l.lo = l.vma_first - (8UL << 20) / sz.page;
	l.hi = l.vma_first + l.vma_pages + (8UL << 20) / sz.page;
	if ((size_t)st.st_size < l.hi * sz.page) {
		ktap_diag("%s: %lld bytes, need %zu", argv[1], (long long)st.st_size, l.hi * sz.page);
		ktap_result(0, 1, "ra-window", NULL);
		return 1;
	}
	old_ra = ff_set_read_ahead_kb(argv[3], READ_AHEAD_KB);
	dump = ff_dump_open(argv[4], "ra-window", argv[2], &sz);
	if (!dump) {
		ktap_result(0, 1, "ra-window", NULL);
		return 1;
	}
	fprintf(dump, "figure read_ahead_kb=%d seed=%lu faults=%ld vma_first=%zu vma_pages=%zu\n",
		READ_AHEAD_KB, seed, faults, l.vma_first, l.vma_pages);
	for (h = 0; h < (int)(sizeof(hints) / sizeof(hints[0])); h++) {
		/* the same draws for every pass */
		seed_state = seed;
		if (pass(argv[1], "exec", PROT_READ | PROT_EXEC, h, faults, &l, dump))
			ok = 0;
		seed_state = seed;
		if (pass(argv[1], "data", PROT_READ, h, faults, &l, dump))
			ok = 0;
	}
	fclose(dump);
	if (old_ra >= 0)
		ff_set_read_ahead_kb(argv[3], old_ra);
	ktap_result(ok, 1, "ra-window", NULL);
	return ok ? 0 : 1;
}
