// SPDX-License-Identifier: GPL-2.0
/* contpte-partial: does a change to part of a contpte block unfold that block,
 * and only that one? Every PTE of a contpte block must carry the same
 * permissions and be valid (the Arm ARM's contiguous-bit rules): arm64 unfolds
 * a block before an mprotect() or a zap (MADV_DONTNEED) changes some of its
 * PTEs (contpte_try_unfold_partial() in arch/arm64/mm/contpte.c, for a range
 * that starts or ends inside a block or is shorter than one), and leaves whole
 * blocks folded. A kernel that keeps PTE_CONT on a block it changed in part
 * maps that block against the architecture's rules, which no functional test
 * under TCG notices; one that unfolds more than it must loses the TLB reach.
 *
 * Writes an aligned anonymous region of eight blocks (the contpte block: 64K
 * on 4K pages, 2M on 16K and 64K) twice, reading the page tables through the
 * farm's probe (ffcontpte.h):
 *   - with folios of one block (that mTHP size enabled alone): mprotect(
 *     PROT_READ) from the middle of block 1 to the middle of block 2, of block
 *     4 whole, MADV_DONTNEED from the middle of block 5 to the middle of
 *     block 6: each batch is shorter than a block or a block whole;
 *   - with folios of two blocks: mprotect(PROT_READ) from block 2 to the
 *     middle of block 3 (a batch that starts on a block and ends inside the
 *     next) and MADV_DONTNEED from the middle of block 4 to the end of block
 *     5 (one that starts inside a block and ends on one);
 * and prints the share of each changed group's pages mapped with PTE_CONT,
 * of the untouched blocks (0, 3 and 7 of the first region, 0, 1, 6 and 7 of
 * the second), and whether every byte reads back as it should (zapped ranges
 * zero, the rest as written). Run as a check (its row in checks.toml) or as a
 * reproducer: `foliofarm run --repro` runs it as is.
 * usage: contpte-partial [BLOCK_KB] */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ffcontpte.h"

#define BLOCKS 8
#define FILL 0x5a

static long page;
static size_t block;

/* Percent of the pages of blocks [first, first + n) mapped with PTE_CONT;
 * -1 if the probe fails. */
static long cont_pct(char *map, int first, int n)
{
	return ff_cont_pct(map + first * block, n * block, page);
}

/* The mean of the shares of the blocks in ``blocks`` (n of them), -1 if any
 * read failed. */
static long mean_pct(char *map, const int *blocks, int n)
{
	long sum = 0;

	for (int i = 0; i < n; i++) {
		long p = cont_pct(map, blocks[i], 1);

		if (p < 0)
			return -1;
		sum += p;
	}
	return sum / n;
}

/* 1 if [from, to) holds only byte b. */
static int holds(const char *from, const char *to, int b)
{
	for (; from < to; from++)
		if (*from != (char)b)
			return 0;
	return 1;
}

/* An aligned region of BLOCKS blocks, written; NULL (said) if it cannot be had. */
static char *region(void)
{
	char *map = ff_aligned(BLOCKS * block, 32UL << 20, PROT_READ | PROT_WRITE);

	if (map)
		memset(map, FILL, BLOCKS * block);
	return map;
}

struct figures {
	long before, split, whole, zapped, untouched;
	int data_ok;
};

/* Folios of one block: batches shorter than a block, and a block whole. */
static int one_block_folios(void *arg)
{
	struct figures *f = arg;
	static const int untouched[] = { 0, 3, 7 };
	char *map = region();

	if (!map)
		return -1;
	f->before = cont_pct(map, 0, BLOCKS);
	if (mprotect(map + block + block / 2, block, PROT_READ) ||
	    mprotect(map + 4 * block, block, PROT_READ) ||
	    madvise(map + 5 * block + block / 2, block, MADV_DONTNEED)) {
		perror("mprotect/madvise");
		return -1;
	}
	f->split = cont_pct(map, 1, 2);
	f->whole = cont_pct(map, 4, 1);
	f->zapped = cont_pct(map, 5, 2);
	f->untouched = mean_pct(map, untouched, 3);
	/* only now read the bytes: a read of the zapped range maps the zero page */
	char *z0 = map + 5 * block + block / 2, *z1 = z0 + block;
	f->data_ok = holds(map, z0, FILL) && holds(z0, z1, 0) && holds(z1, map + BLOCKS * block, FILL);
	return 0;
}

/* Folios of two blocks: a batch that starts on a block and ends inside the
 * next, and one that starts inside a block and ends on one. */
static int two_block_folios(void *arg)
{
	struct figures *f = arg;
	static const int untouched[] = { 0, 1, 6, 7 };
	char *map = region();

	if (!map)
		return -1;
	f->before = cont_pct(map, 0, BLOCKS);
	if (mprotect(map + 2 * block, block + block / 2, PROT_READ) ||
	    madvise(map + 4 * block + block / 2, block + block / 2, MADV_DONTNEED)) {
		perror("mprotect/madvise");
		return -1;
	}
	f->split = cont_pct(map, 3, 1);         /* the block the mprotect() ends inside */
	f->whole = cont_pct(map, 2, 1);         /* the one it covers whole, in the same batch */
	f->zapped = cont_pct(map, 4, 1);        /* the block the zap starts inside */
	f->untouched = mean_pct(map, untouched, 4);
	char *z0 = map + 4 * block + block / 2, *z1 = map + 6 * block;
	f->data_ok = holds(map, z0, FILL) && holds(z0, z1, 0) && holds(z1, map + BLOCKS * block, FILL);
	return 0;
}

int main(int argc, char **argv)
{
	page = sysconf(_SC_PAGESIZE);
	long kb = argc > 1 ? atol(argv[1]) : (page == 4096 ? 64 : 2048);
	struct figures one = { -1, -1, -1, -1, -1, 0 }, two = one;

	block = (size_t)kb << 10;
	int bad = ff_with_mthp(kb, one_block_folios, &one) |
		  ff_with_mthp(2 * kb, two_block_folios, &two);

	printf("mthp_kb: %ld\ncont_pct: %ld\nmprotect_split_cont_pct: %ld\n"
	       "mprotect_whole_cont_pct: %ld\ndontneed_split_cont_pct: %ld\n"
	       "untouched_cont_pct: %ld\n", kb, one.before, one.split, one.whole, one.zapped,
	       one.untouched);
	printf("large_cont_pct: %ld\nmprotect_end_cont_pct: %ld\n"
	       "mprotect_covered_cont_pct: %ld\ndontneed_start_cont_pct: %ld\n"
	       "large_untouched_cont_pct: %ld\ndata_ok: %d\n", two.before, two.split, two.whole,
	       two.zapped, two.untouched, one.data_ok && two.data_ok);
	return bad || one.split < 0 || one.whole < 0 || one.zapped < 0 || one.untouched < 0 ||
	       two.split < 0 || two.whole < 0 || two.zapped < 0 || two.untouched < 0 ? 2 : 0;
}
