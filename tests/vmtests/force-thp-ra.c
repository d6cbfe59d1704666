// SPDX-License-Identifier: GPL-2.0
/*
 * force-thp-ra: MADV_HUGEPAGE on a file mapping asks readahead for PMD-sized
 * (7.x: at most 2M) folios. On 64K pages HPAGE_PMD_ORDER (13) exceeds
 * MAX_PAGECACHE_ORDER (11), which 6.12's gate refused.
 *
 * The file is mapped read-only at a 2M-aligned address (so a 2M folio can be
 * contpte- or PMD-mapped), MADV_HUGEPAGE, then touched a few times with a cold
 * cache. Per touch: pages brought in (mincore). Then the mapping is dumped.
 *
 * usage: force-thp-ra FILE FS BLOCKDEV DUMP [TOUCHES [MAP_MB]]
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
#define ALIGN_2M (2UL << 20)

static const char *const events[] = {
	"readahead/page_cache_ra_order",
	"filemap/mm_filemap_add_to_page_cache",
	NULL,
};

int main(int argc, char **argv)
{
	struct ff_sizes sz;
	struct stat st;
	long touches, i, before, present, old_ra, traced;
	size_t len, stride;
	volatile const char *p;
	char *res, *map;
	uintptr_t aligned;
	FILE *dump;
	int fd;

	if (argc < 5) {
		fprintf(stderr, "usage: %s FILE FS BLOCKDEV DUMP [TOUCHES [MAP_MB]]\n", argv[0]);
		return 2;
	}
	touches = argc > 5 ? strtol(argv[5], NULL, 0) : 4;
	len = (argc > 6 ? strtoul(argv[6], NULL, 0) : 64) << 20;
	if (ff_begin("force-thp-ra", &sz))
		return 0;	/* skipped, and said why */
	old_ra = ff_set_read_ahead_kb(argv[3], READ_AHEAD_KB);
	if (ff_drop_caches())
		ktap_diag("drop_caches failed: %s", strerror(errno));
	fd = open(argv[1], O_RDONLY);
	if (fd < 0 || fstat(fd, &st) || (size_t)st.st_size < len) {
		ktap_diag("open %s (need %zu bytes): %s", argv[1], len, strerror(errno));
		ktap_result(0, 1, "force-thp-ra", NULL);
		return 1;
	}
	/* reserve, then place the file mapping at a 2M boundary inside the reservation */
	res = mmap(NULL, len + ALIGN_2M, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	aligned = ((uintptr_t)res + ALIGN_2M - 1) & ~(ALIGN_2M - 1);
	map = mmap((void *)aligned, len, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0);
	if (res == MAP_FAILED || map == MAP_FAILED) {
		ktap_diag("mmap: %s", strerror(errno));
		ktap_result(0, 1, "force-thp-ra", NULL);
		return 1;
	}
	if (madvise(map, len, MADV_HUGEPAGE)) {
		ktap_diag("madvise(MADV_HUGEPAGE): %s", strerror(errno));
		ktap_result(0, 1, "force-thp-ra", NULL);
		return 1;
	}
	dump = ff_dump_open(argv[4], "force-thp-ra", argv[2], &sz);
	if (!dump) {
		ktap_result(0, 1, "force-thp-ra", NULL);
		return 1;
	}
	fprintf(dump, "figure touches=%ld map_bytes=%zu read_ahead_kb=%d\n", touches, len,
		READ_AHEAD_KB);
	ff_trace_start(events);
	stride = len / touches;
	for (i = 0; i < touches; i++) {
		before = ff_resident_settled(fd, map, 0, len, sz.page);
		p = map + i * stride + stride / 2;
		(void)*p;
		/* pages this touch brought into the page cache */
		fprintf(dump, "R brought %ld %ld\n", i, ff_resident_settled(fd, map, 0, len, sz.page) - before);
	}
	traced = ff_trace_stop(dump, "thp", events, (unsigned long)st.st_ino);
	present = ff_dump_mapping(dump, "file", map, len, sz.page);
	fclose(dump);
	if (old_ra >= 0)
		ff_set_read_ahead_kb(argv[3], old_ra);
	ktap_diag("touches %ld present pages %ld trace lines %ld", touches, present, traced);
	ktap_result(present > 0, 1, "force-thp-ra", NULL);
	return present > 0 ? 0 : 1;
}
