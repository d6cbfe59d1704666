// SPDX-License-Identifier: GPL-2.0
/* mthp-swap: does an anonymous mTHP go out to swap whole, and come back
 * intact? Reclaim gives a large anon folio swap entries of its own order
 * (folio_alloc_swap() in mm/swapfile.c) or, where it cannot, splits it and
 * swaps its pages one by one (shrink_folio_list() in mm/vmscan.c: the
 * size's stats/swpout or stats/swpout_fallback counts it). 7.3 gives whole
 * entries only with CONFIG_THP_SWAP, which arm64 selects on 4K pages alone
 * (ARCH_WANTS_THP_SWAP if ARM64_4K_PAGES), and only on a block device
 * (cluster_alloc_swap_entry(): "Swapfile is not block device so unable to
 * allocate large entries"). It swaps in whole only from a synchronous
 * device (do_swap_page(): SWP_SYNCHRONOUS_IO); a disk's pages come back one
 * by one through swapin_readahead().
 *
 * For every anon mTHP size of sysfs up to CAP_KB, the others off: an aligned
 * region of such folios, each page stamped; MADV_PAGEOUT; then, for all of
 * them at once, the swap cache they leave dropped (writeback waited for,
 * clean page cache dropped, then memory.reclaim); every page
 * read back. Twice: to the guest's swap disk, and to a swap file on the
 * cell's filesystem (DIR; "-": none, the cell's filesystem is read-only).
 * Prints, per device: the share of folios swapped out whole and split, the
 * share of pages in the size's folios before (the test is void without
 * them), in swap after, in the swap cache when read back, and in large
 * folios after; the swpin counts; and whether every page read back its
 * stamp. The sizes' settings are restored.
 *
 * Run as a check (its row in checks.toml) or as a reproducer: `foliofarm
 * run --repro` runs it as is. usage: mthp-swap [DIR [CAP_KB]] */
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
#include <sys/swap.h>
#include <unistd.h>

#include "ffcontpte.h"
#include "fffolio.h"

#define MAX_SIZES 16
#define STAMP 0x5a5a000000000000ULL
#define REGION (1UL << 20)      /* each size's region, or one folio if larger */
#define SWAPFILE_MB 40          /* holds every region below the cap at once */

static size_t page;

struct tally {
	long folios, whole, split, pages, before, swapped, cached, back_large;
	long swpin, swpin_fallback, data_ok;
};

/* Wait for writeback to end (its /proc/meminfo line back at 0 kB, 10 s at
 * most), then ask the root memory cgroup to reclaim ``bytes``: the swap
 * cache MADV_PAGEOUT leaves is dropped, so what is read back comes from the
 * device. 0, or -1 (said) if memory.reclaim cannot be had. */
static int drop_swap_cache(size_t bytes)
{
	char line[128], num[32];
	int fd;

	for (int i = 0; i < 1000; i++) {
		FILE *f = fopen("/proc/meminfo", "r");
		long wb = -1;

		while (f && fgets(line, sizeof(line), f))
			if (sscanf(line, "Writeback: %ld kB", &wb) == 1)
				break;
		if (f)
			fclose(f);
		if (wb == 0)
			break;
		usleep(10000);
	}
	/* clean page cache first (the swap file's own, written just before),
	 * which reclaim would otherwise take before the swap cache */
	fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
	if (fd < 0 || write(fd, "1", 1) != 1)
		perror("drop_caches");
	if (fd >= 0)
		close(fd);
	if (access("/sys/fs/cgroup/memory.reclaim", W_OK))
		mount("cgroup2", "/sys/fs/cgroup", "cgroup2", 0, NULL);
	fd = open("/sys/fs/cgroup/memory.reclaim", O_WRONLY);
	if (fd < 0) {
		perror("memory.reclaim");
		return -1;
	}
	snprintf(num, sizeof(num), "%zu", bytes);
	if (write(fd, num, strlen(num)) < 0 && errno != EAGAIN)
		perror("memory.reclaim");
	close(fd);
	return 0;
}

/* Pages of [map, map + len) in the page or swap cache (mincore()). */
static long in_cache(char *map, size_t len)
{
	size_t n = len / page;
	unsigned char *v = malloc(n);
	long c = 0;

	if (!v || mincore(map, len, v)) {
		free(v);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		c += v[i] & 1;
	free(v);
	return c;
}

/* One size's region, from its write to its read back. */
struct region {
	long kb, i0, if0;
	size_t len;
	char *map;
};

static uint64_t stamp(const struct region *r, long i)
{
	return STAMP + ((uint64_t)r->kb << 24) + i;
}

/* Size ``r->kb``'s region written (the size alone set to "always") and
 * paged out, counted into ``t``. 0, or -1. */
static int out(struct region *r, struct tally *t)
{
	size_t size = (size_t)r->kb << 10;
	long n, o0, f0;
	struct ff_backing b;

	r->len = size > REGION ? size : REGION;
	n = r->len / page;
	if (ff_set_size(r->kb, "enabled", "always", NULL, 0))
		return -1;
	r->map = ff_aligned(r->len, size, PROT_READ | PROT_WRITE);
	for (long i = 0; r->map && i < n; i++)
		*(uint64_t *)(r->map + i * page) = stamp(r, i);
	ff_set_size(r->kb, "enabled", "never", NULL, 0);
	if (!r->map || ff_backing(r->map, r->len, page, size / page, &b))
		return -1;
	t->folios += r->len / size;
	t->pages += n;
	t->before += b.large;
	o0 = ff_mthp_stat(r->kb, "swpout");
	f0 = ff_mthp_stat(r->kb, "swpout_fallback");
	r->i0 = ff_mthp_stat(r->kb, "swpin");
	r->if0 = ff_mthp_stat(r->kb, "swpin_fallback");
	if (madvise(r->map, r->len, MADV_PAGEOUT)) {
		perror("MADV_PAGEOUT");
		return -1;
	}
	o0 = ff_mthp_stat(r->kb, "swpout") - o0;
	f0 = ff_mthp_stat(r->kb, "swpout_fallback") - f0;
	printf("# %ldkB: %zu folios, swpout %ld, swpout_fallback %ld\n", r->kb, r->len / size, o0, f0);
	t->whole += o0;
	t->split += f0;
	if (ff_backing(r->map, r->len, page, 2, &b))
		return -1;
	t->swapped += b.swapped;
	return 0;
}

/* Size ``r->kb``'s region read back from swap, counted into ``t``. 0, or -1. */
static int back(struct region *r, struct tally *t)
{
	struct ff_backing b;

	t->cached += in_cache(r->map, r->len);
	for (long i = 0; i < (long)(r->len / page); i++)
		if (*(uint64_t *)(r->map + i * page) != stamp(r, i))
			t->data_ok = 0;
	if (ff_backing(r->map, r->len, page, 2, &b))
		return -1;
	t->back_large += b.large;
	t->swpin += ff_mthp_stat(r->kb, "swpin") - r->i0;
	t->swpin_fallback += ff_mthp_stat(r->kb, "swpin_fallback") - r->if0;
	munmap(r->map, r->len);
	return 0;
}

/* Every size in ``kb`` (``n`` of them), each on its own (the others off),
 * out to swap; the swap cache dropped once for all; every one read back. */
static int every_size(const long *kb, int n, struct tally *t)
{
	struct region r[MAX_SIZES] = { 0 };
	size_t total = 0;
	int bad = 0, left = 1;

	t->data_ok = 1;
	for (int i = 0; i < n && !bad; i++) {
		r[i].kb = kb[i];
		bad |= out(&r[i], t);
		total += r[i].len;
	}
	/* reclaim takes what it finds first: asked again while any page of the
	 * regions is still in the swap cache, eight times at most */
	for (int k = 0; !bad && left && k < 8; k++) {
		bad |= drop_swap_cache(2 * total);
		left = 0;
		for (int i = 0; i < n; i++)
			left |= in_cache(r[i].map, r[i].len) != 0;
	}
	for (int i = 0; i < n && !bad; i++)
		bad |= back(&r[i], t);
	return bad;
}

static long pct(long part, long whole)
{
	return whole > 0 ? 100 * part / whole : -1;
}

static void print_tally(const char *dev, const struct tally *t)
{
	printf("%s_folios: %ld\n%s_whole_pct: %ld\n%s_split_pct: %ld\n", dev, t->folios,
	       dev, pct(t->whole, t->folios), dev, pct(t->split, t->folios));
	printf("%s_before_pct: %ld\n%s_swapped_pct: %ld\n%s_cached_pct: %ld\n", dev,
	       pct(t->before, t->pages), dev, pct(t->swapped, t->pages), dev, pct(t->cached, t->pages));
	printf("%s_back_large_pct: %ld\n%s_swpin: %ld\n%s_swpin_fallback: %ld\n%s_data_ok: %ld\n",
	       dev, pct(t->back_large, t->pages), dev, t->swpin, dev, t->swpin_fallback, dev, t->data_ok);
}

/* A swap file of SWAPFILE_MB at ``path``, written whole (a swap file may
 * have no holes) with mkswap's header (include/linux/swap.h union
 * swap_header, version 1). 0, or -1 said. */
static int make_swapfile(const char *path)
{
	size_t chunk = 1 << 20;
	char *buf = calloc(1, chunk);
	int fd = open(path, O_CREAT | O_TRUNC | O_WRONLY, 0600), bad = !buf || fd < 0;
	uint32_t info[3] = { 1, (uint32_t)((SWAPFILE_MB << 20) / page - 1), 0 };

	for (int i = 0; !bad && i < SWAPFILE_MB; i++)
		bad = write(fd, buf, chunk) != (ssize_t)chunk;
	bad = bad || pwrite(fd, info, sizeof(info), 1024) != sizeof(info) ||
	      pwrite(fd, "SWAPSPACE2", 10, page - 10) != 10 || fsync(fd);
	if (bad)
		perror(path);
	if (fd >= 0)
		close(fd);
	free(buf);
	return bad ? -1 : 0;
}

/* The first swap device of /proc/swaps (the guest's swap disk) into ``dev``. */
static int swap_disk(char *dev, size_t n)
{
	char line[256], name[200], type[32];
	FILE *f = fopen("/proc/swaps", "r");
	int found = 0;

	while (f && !found && fgets(line, sizeof(line), f))
		found = sscanf(line, "%199s %31s", name, type) == 2 && !strcmp(type, "partition");
	if (f)
		fclose(f);
	if (found)
		snprintf(dev, n, "%s", name);
	return found ? 0 : -1;
}

/* Every size to a swap file in ``dir`` alone (the disk off meanwhile, on again after). */
static int to_file(const char *dir, const long *kb, int n, struct tally *t)
{
	char path[300], disk[200];
	int bad;

	snprintf(path, sizeof(path), "%s/ffswapfile", dir);
	if (swap_disk(disk, sizeof(disk)) || make_swapfile(path) || swapon(path, 0)) {
		perror("swap file");
		unlink(path);
		return -1;
	}
	if (swapoff(disk)) {
		perror(disk);
		swapoff(path);
		unlink(path);
		return -1;
	}
	bad = every_size(kb, n, t);
	if (swapon(disk, 0))
		perror(disk);
	if (swapoff(path))
		perror(path);
	unlink(path);
	return bad;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "-";
	long cap = argc > 2 ? atol(argv[2]) : 8192, all[MAX_SIZES] = { 0 }, kb[MAX_SIZES] = { 0 };
	char old[MAX_SIZES][32];
	struct tally disk = { 0 }, file = { 0 };
	int n_all, n = 0, bad;

	page = sysconf(_SC_PAGESIZE);
	n_all = ff_mthp_sizes("enabled", all, MAX_SIZES);
	for (int i = 0; i < n_all; i++) {
		if (ff_set_size(all[i], "enabled", "never", old[i], sizeof(old[i])))
			return 2;
		if (all[i] <= cap)
			kb[n++] = all[i];
	}
	printf("sizes: %d\nsizes_over_cap: %d\n", n, n_all - n);
	bad = every_size(kb, n, &disk);
	print_tally("disk", &disk);
	printf("file_variant: %d\n", strcmp(dir, "-") != 0);
	if (strcmp(dir, "-")) {
		bad |= to_file(dir, kb, n, &file);
		print_tally("file", &file);
	}
	for (int i = 0; i < n_all; i++)
		ff_set_size(all[i], "enabled", old[i], NULL, 0);
	printf("data_ok: %d\n", disk.data_ok && (strcmp(dir, "-") == 0 || file.data_ok));
	return bad || !n ? 2 : 0;
}
