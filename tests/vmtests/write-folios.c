// SPDX-License-Identifier: GPL-2.0
/* write-folios: what folio sizes does a buffered write leave in the page
 * cache, and does the data come back? generic_perform_write() (mm/filemap.c;
 * XFS's iomap_write_iter() the same way) writes a chunk of at most
 * mapping_max_folio_size() at a time, and the filesystem's write_begin asks
 * for a folio of the chunk's length (write_begin_get_folio(), iomap's
 * __iomap_get_folio(): fgf_set_order(len)), so one large write() fills the
 * page cache with folios up to the mapping's largest order (or the file's
 * size: 32M is the largest here):
 *   - XFS: MAX_PAGECACHE_ORDER (fs/xfs/xfs_icache.c mapping_set_folio_min_order()),
 *     of no more than the 1024 pages xfs_buffered_write_iomap_begin() maps at
 *     a time (fs/xfs/xfs_iomap.c);
 *   - ext4: EXT4_MAX_PAGECACHE_ORDER(sb), umin(MAX_PAGECACHE_ORDER,
 *     11 + blocksize_bits - PAGE_SHIFT) (fs/ext4/super.c): 2M on 4K pages,
 *     8M on 16K and 64K with the farm's 4K blocks;
 *   - MAX_PAGECACHE_ORDER (include/linux/pagemap.h) min(MAX_XAS_ORDER,
 *     HPAGE_PMD_ORDER): 2M on 4K pages, 32M on 16K, 128M on 64K.
 * Files written on the cell's writable filesystem (DIR): one block (4K),
 * 1M and 32M ("block", "m1", "m32"), each with one write() (memory
 * compacted before the 32M one); and 64K writes at 128 random 64K-aligned offsets of a
 * sparse 16M file. For each: the largest folio and the share of
 * its pages in large folios after the write, after fsync(), and after the
 * page cache is dropped and the file read again with read(); every byte
 * compared with what was written. The folios are read from pagemap and
 * kpageflags (fffolio.h) through a shared mapping of the pages written.
 *
 * Run as a check (its row in checks.toml) or as a reproducer: `foliofarm
 * run --repro` runs it as is. usage: write-folios DIR ("-": no writable
 * filesystem, EROFS: says so and writes nothing) */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fffolio.h"

#define RANDOM_FILE (16UL << 20)
#define RANDOM_WRITE (64UL << 10)
#define RANDOM_WRITES 128

static size_t page;
static int data_ok = 1, unread;

/* The byte of a file at ``off`` (``seed`` tells the files apart). */
static inline unsigned char pattern(uint64_t off, unsigned seed)
{
	return (unsigned char)((off >> 12) * 31 + (off & 0xfff) + seed);
}

static void fill(unsigned char *buf, size_t len, uint64_t off, unsigned seed)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = pattern(off + i, seed);
}

struct seen {
	long max_kb, large_pct;
};

/* The page cache's folios over [0, len) of ``fd``: a shared read-only
 * mapping whose pages are touched (``written``: only those of the slots
 * written), which maps them from the cache; the pages present counted. */
static struct seen cached(int fd, size_t len, const unsigned char *written)
{
	struct seen s = { -1, -1 };
	struct ff_backing b;
	size_t mlen = (len + page - 1) / page * page;
	volatile char *map = mmap(NULL, mlen, PROT_READ, MAP_SHARED, fd, 0);

	if (map == MAP_FAILED) {
		perror("mmap");
		unread = 1;
		return s;
	}
	for (size_t off = 0; off < mlen; off += page)
		if (!written || written[off / RANDOM_WRITE])
			(void)map[off];
	if (!ff_backing((const char *)map, mlen, page, 2, &b) && b.present) {
		s.max_kb = b.max_folio_pages * (long)(page >> 10);
		s.large_pct = 100 * b.large / b.present;
	} else {
		unread = 1;
	}
	munmap((void *)map, mlen);
	return s;
}

/* Every byte of [0, len) of ``fd`` read with read() and compared; holes
 * (``sparse``: only the pages written hold the pattern) read as zeros. */
static void read_back(int fd, size_t len, unsigned seed, const unsigned char *written)
{
	size_t chunk = 1 << 20;
	unsigned char *buf = malloc(chunk);

	for (size_t off = 0; buf && off < len; off += chunk) {
		size_t n = len - off < chunk ? len - off : chunk;

		if (pread(fd, buf, n, off) != (ssize_t)n) {
			perror("pread");
			data_ok = 0;
			break;
		}
		for (size_t i = 0; i < n; i++) {
			int here = !written || written[(off + i) / RANDOM_WRITE];

			if (buf[i] != (here ? pattern(off + i, seed) : 0)) {
				data_ok = 0;
				break;
			}
		}
	}
	free(buf);
}

static void write_proc(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY);

	if (fd < 0 || write(fd, value, strlen(value)) != (ssize_t)strlen(value))
		perror(path);
	if (fd >= 0)
		close(fd);
}

static void drop_caches(void)
{
	write_proc("/proc/sys/vm/drop_caches", "3");
}

static void print_seen(const char *what, const char *when, struct seen s)
{
	printf("%s_%s_max_kb: %ld\n%s_%s_large_pct: %ld\n", what, when, s.max_kb, what, when, s.large_pct);
}

/* The file ``name`` in ``dir``, ``len`` bytes written by ``write_it``; its
 * folios after the write, after fsync(), and after a cold re-read. */
static void one_file(const char *dir, const char *what, size_t len, unsigned seed,
		     int (*write_it)(int fd, size_t len, unsigned seed, unsigned char *written))
{
	char path[300];
	unsigned char *written = NULL;
	int fd;

	snprintf(path, sizeof(path), "%s/ffwrite-%s", dir, what);
	/* the largest file: free memory in blocks of every order first, so that
	 * its folio sizes are the kernel's choice, not what a fragmented guest had left */
	if (len >= (32UL << 20))
		write_proc("/proc/sys/vm/compact_memory", "1");
	fd = open(path, O_CREAT | O_TRUNC | O_RDWR, 0600);
	if (fd < 0) {
		perror(path);
		unread = 1;
		return;
	}
	if (!strcmp(what, "random"))
		written = calloc(len / RANDOM_WRITE, 1);
	if (write_it(fd, len, seed, written)) {
		unread = 1;
	} else {
		print_seen(what, "write", cached(fd, len, written));
		if (fsync(fd))
			perror("fsync");
		print_seen(what, "fsync", cached(fd, len, written));
		drop_caches();
		read_back(fd, len, seed, written);
		print_seen(what, "reread", cached(fd, len, written));
	}
	free(written);
	close(fd);
	unlink(path);
}

/* One write() of the whole file. */
static int write_whole(int fd, size_t len, unsigned seed, unsigned char *written)
{
	unsigned char *buf = malloc(len);
	int bad = !buf;

	if (buf) {
		fill(buf, len, 0, seed);
		bad = write(fd, buf, len) != (ssize_t)len;
	}
	if (bad)
		perror("write");
	free(buf);
	return bad;
}

/* 64K writes at random 64K-aligned offsets of a sparse file (a fixed
 * sequence: the same offsets every run). */
static int write_random(int fd, size_t len, unsigned seed, unsigned char *written)
{
	unsigned char buf[RANDOM_WRITE];
	uint32_t x = 2463534242u;
	int bad = ftruncate(fd, len);

	for (int i = 0; !bad && i < RANDOM_WRITES; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		size_t slot = x % (len / RANDOM_WRITE), off = slot * RANDOM_WRITE;

		fill(buf, RANDOM_WRITE, off, seed);
		bad = pwrite(fd, buf, RANDOM_WRITE, off) != (ssize_t)RANDOM_WRITE;
		written[slot] = 1;
	}
	if (bad)
		perror("pwrite");
	return bad;
}

int main(int argc, char **argv)
{
	const char *dir = argc > 1 ? argv[1] : "-";

	page = sysconf(_SC_PAGESIZE);
	printf("writable: %d\n", strcmp(dir, "-") != 0);
	if (!strcmp(dir, "-"))
		return 0;
	one_file(dir, "block", 4096, 1, write_whole);
	one_file(dir, "m1", 1 << 20, 2, write_whole);
	one_file(dir, "m32", 32 << 20, 3, write_whole);
	one_file(dir, "random", RANDOM_FILE, 4, write_random);
	printf("data_ok: %d\n", data_ok);
	return unread ? 2 : 0;
}
