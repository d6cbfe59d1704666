// SPDX-License-Identifier: GPL-2.0
/*
 * sparse-read: one byte read every REGION_MB of a large file mapped read-only,
 * the access pattern of the April 2026 readahead RFC. Four passes, each with a
 * cold cache and a fresh descriptor: without and with MADV_HUGEPAGE, with
 * fault-around at its default and off (debugfs fault_around_bytes = one page).
 * Per region: pages the read brought in (mincore). Per pass: the folio
 * orders the page cache added (mm_filemap_add_to_page_cache) and the readahead
 * events. The host finds the region where readahead stopped.
 *
 * usage: sparse-read FILE FS BLOCKDEV DUMP [REGION_MB]
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
#define FAULT_AROUND "/sys/kernel/debug/fault_around_bytes"

static const char *const events[] = {
	"readahead/page_cache_ra_order",
	"readahead/page_cache_sync_ra",
	"readahead/page_cache_async_ra",
	"filemap/mm_filemap_add_to_page_cache",
	NULL,
};

static long read_fault_around(void)
{
	char buf[32] = "";
	FILE *f = fopen(FAULT_AROUND, "r");
	long v = -1;

	if (f) {
		if (fgets(buf, sizeof(buf), f))
			v = strtol(buf, NULL, 0);
		fclose(f);
	}
	return v;
}

/* fault_around_bytes as the kernel booted with it (saved by the guest's init),
 * else as it is now */
static long boot_fault_around(void)
{
	char buf[32] = "";
	FILE *f = fopen("/tmp/fault_around_boot", "r");
	long v = -1;

	if (f) {
		if (fgets(buf, sizeof(buf), f))
			v = strtol(buf, NULL, 0);
		fclose(f);
	}
	return v >= 0 ? v : read_fault_around();
}

static int write_fault_around(long v)
{
	FILE *f = fopen(FAULT_AROUND, "w");

	if (!f)
		return -1;
	fprintf(f, "%ld\n", v);
	return fclose(f);
}

static int pass(const char *path, const char *label, int huge, long fa_bytes,
		size_t region, const struct ff_sizes *sz, FILE *dump)
{
	volatile const char *p;
	struct stat st;
	size_t nregions, i;
	char *map, *res;
	uintptr_t aligned;
	long fa;
	int fd;

	if (write_fault_around(fa_bytes))
		ktap_diag("%s: cannot set fault_around_bytes %ld: %s", label, fa_bytes, strerror(errno));
	fa = read_fault_around();
	fd = ff_open_cold(path, &st);
	if (fd < 0)
		return -1;
	/* PMD-aligned, so that MADV_HUGEPAGE can use PMD-sized folios where it wants */
	res = mmap(NULL, st.st_size + sz->pmd, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	aligned = ((uintptr_t)res + sz->pmd - 1) & ~(uintptr_t)(sz->pmd - 1);
	map = mmap((void *)aligned, st.st_size, PROT_READ, MAP_PRIVATE | MAP_FIXED, fd, 0);
	if (res == MAP_FAILED || map == MAP_FAILED) {
		ktap_diag("mmap: %s", strerror(errno));
		close(fd);
		return -1;
	}
	if (huge && madvise(map, st.st_size, MADV_HUGEPAGE))
		ktap_diag("%s: madvise(MADV_HUGEPAGE): %s", label, strerror(errno));
	nregions = st.st_size / region;
	fprintf(dump, "figure %s_huge=%d %s_fault_around_bytes=%ld %s_regions=%zu\n", label, huge,
		label, fa, label, nregions);
	ff_trace_start(events);
	for (i = 0; i < nregions; i++) {
		/*
		 * Pages this read brought in: mincore() before and after, over a
		 * window centred on the read (read-around centres on the fault; a
		 * MADV_HUGEPAGE fault may read a whole region ahead), so that what an
		 * earlier read brought is never counted again.
		 */
		size_t lo = i * region >= region / 2 ? i * region - region / 2 : 0;
		size_t hi = i * region + region / 2 < (size_t)st.st_size ?
			    i * region + region / 2 : (size_t)st.st_size;
		long before = ff_resident_settled(fd, map, lo, hi - lo, sz->page);

		p = map + i * region;
		(void)*p;
		fprintf(dump, "R %s %zu %ld\n", label, i,
			ff_resident_settled(fd, map, lo, hi - lo, sz->page) - before);
	}
	ff_trace_stop(dump, label, events, (unsigned long)st.st_ino);
	munmap(res, st.st_size + sz->pmd);
	close(fd);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct { const char *label; int huge; int fa_off; } passes[] = {
		{ "plain", 0, 0 }, { "plain_nofa", 0, 1 }, { "huge", 1, 0 }, { "huge_nofa", 1, 1 },
	};
	struct ff_sizes sz;
	long fa_default, fa_now, old_ra;
	size_t region, i;
	FILE *dump;
	int ok = 1;

	if (argc < 5) {
		fprintf(stderr, "usage: %s FILE FS BLOCKDEV DUMP [REGION_MB]\n", argv[0]);
		return 2;
	}
	region = (argc > 5 ? strtoul(argv[5], NULL, 0) : 4) << 20;
	if (ff_begin("sparse-read", &sz))
		return 0;	/* skipped, and said why */
	fa_now = read_fault_around();
	fa_default = boot_fault_around();
	if (fa_now < 0 || fa_default < 0) {
		ktap_result(1, 1, "sparse-read", "SKIP no %s", FAULT_AROUND);
		return 0;
	}
	old_ra = ff_set_read_ahead_kb(argv[3], READ_AHEAD_KB);
	dump = ff_dump_open(argv[4], "sparse-read", argv[2], &sz);
	if (!dump) {
		ktap_result(0, 1, "sparse-read", NULL);
		return 1;
	}
	fprintf(dump, "figure region_kb=%zu read_ahead_kb=%d fault_around_default=%ld\n",
		region / 1024, READ_AHEAD_KB, fa_default);
	for (i = 0; i < sizeof(passes) / sizeof(passes[0]); i++)
		/* fault-around off: one page, which should_fault_around() treats as none */
		if (pass(argv[1], passes[i].label, passes[i].huge,
			 passes[i].fa_off ? (long)sz.page : fa_default, region, &sz, dump))
			ok = 0;
	write_fault_around(fa_now);
	fclose(dump);
	if (old_ra >= 0)
		ff_set_read_ahead_kb(argv[3], old_ra);
	ktap_result(ok, 1, "sparse-read", NULL);
	return ok ? 0 : 1;
}
