// SPDX-License-Identifier: GPL-2.0
/* shmem-mthp: what folio sizes back shared memory, and are they mapped with
 * PTE_CONT where a contpte block fits? 7.3 decides (mm/shmem.c
 * shmem_allowable_huge_orders()):
 *   - a tmpfs file by its mount's huge= alone ("Tmpfs huge pages allocation
 *     ... ignores sysfs configs"): always, within_size (orders that end
 *     within i_size), advise (with MADV_HUGEPAGE), never;
 *   - shared anonymous memory (MAP_SHARED | MAP_ANONYMOUS, and a memfd, which
 *     has no link when mapped: "This is anonymous shared memory if it is
 *     unlinked at the time of mmap") by each size's hugepages-<size>kB/
 *     shmem_enabled: always, inherit (the top-level shmem_enabled's), advise
 *     (with MADV_HUGEPAGE), never; counted in its stats/shmem_alloc and
 *     stats/shmem_fallback.
 * A folio is mapped a batch at a time (finish_fault() maps the folio whole,
 * set_ptes()), so arm64 folds every contpte block a folio covers whole.
 *
 * Every region is REGION_MB (default 4), aligned to the largest size tried,
 * written whole; for each, the share of its pages in large folios (and in
 * folios of the size under test), the largest folio, and the share mapped with
 * PTE_CONT; read from pagemap and kpageflags (fffolio.h) and from the page
 * tables through the farm's probe (ffcontpte.h). Every setting is restored.
 *
 * Run as a check (its row in checks.toml) or as a reproducer: `foliofarm
 * run --repro` runs it as is. usage: shmem-mthp [REGION_MB] */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ffcontpte.h"
#include "fffolio.h"

#define MAX_SIZES 16
#define TOP FF_THP "/shmem_enabled"

static size_t page, len;
static int unread;

struct seen {
	long large_pct, size_pct, max_kb, cont_pct;
};

/* What backs ``map`` (len bytes), written whole: large folios, folios of
 * ``kb`` at least, the largest, PTE_CONT. */
static struct seen written(char *map, long kb)
{
	struct seen s = { -1, -1, -1, -1 };
	struct ff_backing b;

	memset(map, 0x6d, len);
	if (ff_backing(map, len, page, 2, &b)) {
		unread = 1;
		return s;
	}
	s.large_pct = 100 * b.large / b.pages;
	s.max_kb = b.max_folio_pages * (long)(page >> 10);
	if (kb && !ff_backing(map, len, page, ((size_t)kb << 10) / page, &b))
		s.size_pct = 100 * b.large / b.pages;
	s.cont_pct = ff_cont_pct(map, len, page);
	unread |= s.cont_pct < 0;
	return s;
}

static void print_seen(const char *what, struct seen s)
{
	printf("%s_large_pct: %ld\n%s_max_kb: %ld\n%s_cont_pct: %ld\n", what, s.large_pct,
	       what, s.max_kb, what, s.cont_pct);
}

/* A shared mapping of ``fd`` (len bytes; -1: anonymous), aligned to ``align``. */
static char *map_shared(int fd, size_t align, int advise)
{
	char *at = ff_aligned(len, align, PROT_NONE), *map;

	if (!at)
		return NULL;
	map = mmap(at, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED |
		   (fd < 0 ? MAP_ANONYMOUS : 0), fd, 0);
	if (map == MAP_FAILED) {
		perror("mmap");
		return NULL;
	}
	if (advise && madvise(map, len, MADV_HUGEPAGE))
		perror("MADV_HUGEPAGE");
	return map;
}

/* A file of len bytes on a tmpfs mounted with huge=``huge``, mapped and
 * written (MADV_HUGEPAGE first for "advise"). */
static void tmpfs_file(const char *huge, size_t align)
{
	char dir[64], opts[64], path[96], what[40];
	struct seen s = { -1, -1, -1, -1 };
	int fd = -1;
	char *map;

	snprintf(dir, sizeof(dir), "/tmp/ffshm-%s", huge);
	snprintf(opts, sizeof(opts), "huge=%s,size=%zuk", huge, 2 * len >> 10);
	snprintf(path, sizeof(path), "%s/file", dir);
	mkdir(dir, 0700);
	if (mount("tmpfs", dir, "tmpfs", 0, opts)) {
		perror(opts);
		unread = 1;
	} else if ((fd = open(path, O_CREAT | O_RDWR, 0600)) < 0 || ftruncate(fd, len)) {
		perror(path);
		unread = 1;
	} else if ((map = map_shared(fd, align, !strcmp(huge, "advise")))) {
		s = written(map, 0);
		munmap(map, len);
	}
	if (fd >= 0)
		close(fd);
	umount2(dir, MNT_DETACH);
	rmdir(dir);
	snprintf(what, sizeof(what), "tmpfs_%s", huge);
	print_seen(what, s);
}

static int set_top(const char *top)
{
	FILE *f = fopen(TOP, "w");

	if (!f || fputs(top, f) < 0 || fclose(f)) {
		perror(TOP);
		unread = 1;
		return -1;
	}
	return 0;
}

/* len bytes of a memfd (anonymous shared memory once mapped: it has no link,
 * shmem_mmap_prepare()) or of MAP_SHARED | MAP_ANONYMOUS (fd -2), with size
 * ``kb``'s shmem_enabled set to ``mode`` and the top level to ``top``,
 * mapped (MADV_HUGEPAGE first if ``advise``) and written; printed as ``what``. */
static struct seen shared(const char *what, int memfd, long kb, const char *mode, const char *top,
			  int advise, size_t align)
{
	struct seen s = { -1, -1, -1, -1 };
	int fd = -1;
	char *map;

	if (set_top(top) || ff_set_size(kb, "shmem_enabled", mode, NULL, 0)) {
		unread = 1;
	} else if (memfd && ((fd = memfd_create("ffshm", 0)) < 0 || ftruncate(fd, len))) {
		perror("memfd");
		unread = 1;
	} else if ((map = map_shared(fd, align, advise))) {
		s = written(map, kb);
		munmap(map, len);
	}
	if (fd >= 0)
		close(fd);
	ff_set_size(kb, "shmem_enabled", "never", NULL, 0);
	if (what) {
		print_seen(what, s);
		printf("%s_in_size_pct: %ld\n", what, s.size_pct);
	}
	return s;
}

struct tally {
	long folios, alloc, fallback, pages_in_size, pages, cont, cont_pages;
};

/* Shared anonymous memory with size ``kb`` alone set to "always". */
static void shared_anon(long kb, size_t align, long cont_kb, long pmd_kb, struct tally *t)
{
	long a0 = ff_mthp_stat(kb, "shmem_alloc"), f0 = ff_mthp_stat(kb, "shmem_fallback");
	long n = len / page;
	struct seen s = shared(NULL, 0, kb, "always", "never", 0, align);

	a0 = ff_mthp_stat(kb, "shmem_alloc") - a0;
	f0 = ff_mthp_stat(kb, "shmem_fallback") - f0;
	printf("# shared %ldkB: %zu folios, shmem_alloc %ld, shmem_fallback %ld, in size %ld%%, cont %ld%%\n",
	       kb, len / ((size_t)kb << 10), a0, f0, s.size_pct, s.cont_pct);
	t->folios += len / ((size_t)kb << 10);
	t->alloc += a0;
	t->fallback += f0;
	t->pages_in_size += s.size_pct * n / 100;
	t->pages += n;
	if (kb >= cont_kb && kb < pmd_kb) {     /* a PMD-sized folio is mapped by its PMD */
		t->cont += s.cont_pct * n / 100;
		t->cont_pages += n;
	}
}

static long pct(long part, long whole)
{
	return whole > 0 ? 100 * part / whole : -1;
}

int main(int argc, char **argv)
{
	static const char *const huge[] = { "always", "within_size", "advise", "never" };
	long all[MAX_SIZES] = { 0 }, cont_kb, pmd_kb;
	char old[MAX_SIZES][32], top_old[160] = "", *l, *r;
	struct tally t = { 0 };
	int n, tried = 0;
	size_t align;

	page = sysconf(_SC_PAGESIZE);
	len = (size_t)(argc > 1 ? atol(argv[1]) : 4) << 20;
	cont_kb = page == 4096 ? 64 : 2048;      /* the contpte block: 16 x 4K, 128 x 16K, 32 x 64K */
	pmd_kb = (long)(page / 8) * (long)(page >> 10);
	align = len > (size_t)pmd_kb << 10 ? len : (size_t)pmd_kb << 10;
	if (align > (64UL << 20))
		align = len;                     /* 64K's 512M PMD: aligned to the region */
	n = ff_mthp_sizes("shmem_enabled", all, MAX_SIZES);
	if (ff_read_line(TOP, top_old, sizeof(top_old)))
		return 2;
	l = strchr(top_old, '[');
	r = l ? strchr(l, ']') : NULL;
	if (l && r) {
		memmove(top_old, l + 1, r - l - 1);
		top_old[r - l - 1] = 0;
	}
	for (int i = 0; i < n; i++)
		if (ff_set_size(all[i], "shmem_enabled", "never", old[i], sizeof(old[i])))
			return 2;
	printf("region_kb: %zu\ncont_block_kb: %ld\n", len >> 10, cont_kb);
	for (int i = 0; i < 4; i++)
		tmpfs_file(huge[i], align);
	/* the contpte block's size: at "always", at "inherit" under a top level of
	 * "always" and of "never", at "advise" with MADV_HUGEPAGE and without */
	shared("memfd_always", 1, cont_kb, "always", "never", 0, align);
	shared("memfd_inherit", 1, cont_kb, "inherit", "always", 0, align);
	shared("memfd_inherit_never", 1, cont_kb, "inherit", "never", 0, align);
	shared("shared_advise", 0, cont_kb, "advise", "never", 1, align);
	shared("shared_advise_unasked", 0, cont_kb, "advise", "never", 0, align);
	for (int i = 0; i < n; i++)
		if (((size_t)all[i] << 10) <= len) {
			tried++;
			shared_anon(all[i], align, cont_kb, pmd_kb, &t);
		}
	for (int i = 0; i < n; i++)
		ff_set_size(all[i], "shmem_enabled", old[i], NULL, 0);
	set_top(top_old);
	printf("shared_sizes: %d\nshared_folios: %ld\nshared_alloc_pct: %ld\nshared_fallback_pct: %ld\n",
	       tried, t.folios, pct(t.alloc, t.folios), pct(t.fallback, t.folios));
	printf("shared_in_size_pct: %ld\nshared_cont_pct: %ld\n", pct(t.pages_in_size, t.pages),
	       pct(t.cont, t.cont_pages));
	return unread || !tried ? 2 : 0;
}
