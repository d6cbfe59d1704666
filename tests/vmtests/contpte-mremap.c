// SPDX-License-Identifier: GPL-2.0
/* contpte-mremap: does mremap() carry contpte mappings where the architecture
 * allows them, and nowhere else? A contpte block must be aligned in virtual
 * and physical address alike and map one folio's pages in order (the Arm
 * ARM's contiguous-bit rules; contpte_set_ptes() and contpte_try_fold() in
 * arch/arm64). mremap() moves PTEs a folio's batch at a time (move_ptes() in
 * mm/mremap.c: get_and_clear_ptes(), then set_ptes() at the new address),
 * which folds again whatever block the batch covers whole, aligned both ways;
 * a move that starts or ends inside a block unfolds that block first
 * (contpte_try_unfold_partial()). A kernel that leaves a moved region
 * unfolded loses the TLB reach it had; one that folds a block whose physical
 * address is not aligned with its virtual one maps it against the
 * architecture's rules, which no functional test under TCG notices.
 *
 * Three regions of eight blocks (the contpte block: 64K on 4K pages, 2M on
 * 16K and 64K), each page stamped with its index, the page tables read
 * through the farm's probe (ffcontpte.h):
 *   - folios of one block, moved whole to an aligned address, then shrunk
 *     by half a block: the moved region contpte-mapped; after the shrink the
 *     half block left unfolded, the seven whole blocks not;
 *   - folios of two blocks, moved whole to an address one page past an
 *     aligned one: each folio's batch then covers a block whole in virtual
 *     address whose physical address is not aligned; nothing may be folded;
 *   - folios of one block, the middle two blocks' worth moved from the
 *     middle of block 1 to the middle of block 3, to the same offset in a
 *     block elsewhere: the block moved whole folded at its new address, the
 *     half blocks on both sides of the move unfolded, the blocks it did not
 *     touch folded;
 * and prints the share of each group's pages mapped with PTE_CONT, and
 * whether every page reads back its stamp where it was moved to or left.
 * Run as a check (its row in checks.toml) or as a reproducer: `foliofarm run
 * --repro` runs it as is. usage: contpte-mremap [BLOCK_KB] */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE     /* mremap()'s flags, as a reproducer too */
#endif
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ffcontpte.h"

#define BLOCKS 8
#define ALIGN (32UL << 20)
#define STAMP 0xf011f011f0000000ULL

static size_t page, block;
static int unread;              /* a share the probe could not give */

static long pct(const char *at, size_t len)
{
	long p = ff_cont_pct(at, len, page);

	unread |= p < 0;
	return p;
}

/* An aligned region of BLOCKS blocks, each page stamped with its index;
 * NULL (said) if it cannot be had. */
static char *region(void)
{
	char *map = ff_aligned(BLOCKS * block, ALIGN, PROT_READ | PROT_WRITE);

	for (size_t i = 0; map && i < BLOCKS * block / page; i++)
		*(uint64_t *)(map + i * page) = STAMP + i;
	return map;
}

/* 1 if the pages at ``at`` hold the stamps of the region's pages
 * [first, first + len / page). */
static int stamped(const char *at, size_t first, size_t len)
{
	for (size_t i = 0; i < len / page; i++)
		if (*(const uint64_t *)(at + i * page) != STAMP + first + i)
			return 0;
	return 1;
}

/* Move ``len`` bytes at ``from`` to ``to``; 0, or -1 said. */
static int move(char *from, size_t len, char *to)
{
	if (mremap(from, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, to) != to) {
		perror("mremap");
		return -1;
	}
	return 0;
}

struct figures {
	long before, moved, shrunk_tail, shrunk_kept;
	long large, misaligned;
	long whole, ends, left, untouched;
	int data_ok;
};

/* Folios of one block, moved whole to an aligned address, then shrunk. */
static int moved_whole(void *arg)
{
	struct figures *f = arg;
	size_t len = BLOCKS * block;
	char *src = region(), *dst = ff_aligned(len, ALIGN, PROT_NONE);

	if (!src || !dst)
		return -1;
	f->before = pct(src, len);
	if (move(src, len, dst))
		return -1;
	f->moved = pct(dst, len);
	f->data_ok &= stamped(dst, 0, len);
	if (mremap(dst, len, len - block / 2, 0) != dst) {
		perror("mremap (shrink)");
		return -1;
	}
	f->shrunk_tail = pct(dst + (BLOCKS - 1) * block, block / 2);
	f->shrunk_kept = pct(dst, (BLOCKS - 1) * block);
	f->data_ok &= stamped(dst, 0, len - block / 2);
	return 0;
}

/* Folios of two blocks, moved whole to one page past an aligned address. */
static int moved_misaligned(void *arg)
{
	struct figures *f = arg;
	size_t len = BLOCKS * block;
	char *src = region(), *dst = ff_aligned(len + block, ALIGN, PROT_NONE);

	if (!src || !dst)
		return -1;
	f->large = pct(src, len);
	if (move(src, len, dst + page))
		return -1;
	f->misaligned = pct(dst + page, len);
	f->data_ok &= stamped(dst + page, 0, len);
	return 0;
}

/* Folios of one block, [1.5, 3.5) blocks moved to the same offset elsewhere. */
static int moved_part(void *arg)
{
	struct figures *f = arg;
	size_t len = BLOCKS * block, half = block / 2;
	char *src = region(), *dst = ff_aligned(len, ALIGN, PROT_NONE);

	if (!src || !dst || move(src + block + half, 2 * block, dst + block + half))
		return -1;
	f->whole = pct(dst + 2 * block, block);
	f->ends = (pct(dst + block + half, half) + pct(dst + 3 * block, half)) / 2;
	f->left = (pct(src + block, half) + pct(src + 3 * block + half, half)) / 2;
	f->untouched = (pct(src, block) + 4 * pct(src + 4 * block, 4 * block)) / 5;
	f->data_ok &= stamped(dst + block + half, (block + half) / page, 2 * block) &&
		      stamped(src, 0, block + half) &&
		      stamped(src + 3 * block + half, (3 * block + half) / page, len - 3 * block - half);
	return 0;
}

int main(int argc, char **argv)
{
	page = sysconf(_SC_PAGESIZE);
	long kb = argc > 1 ? atol(argv[1]) : (page == 4096 ? 64 : 2048);
	struct figures f;

	memset(&f, 0xff, sizeof(f));            /* every figure -1 until measured */
	f.data_ok = 1;
	block = (size_t)kb << 10;
	int bad = ff_with_mthp(kb, moved_whole, &f) | ff_with_mthp(kb, moved_part, &f) |
		  ff_with_mthp(2 * kb, moved_misaligned, &f);

	printf("mthp_kb: %ld\ncont_pct: %ld\nmoved_cont_pct: %ld\nshrunk_tail_cont_pct: %ld\n"
	       "shrunk_kept_cont_pct: %ld\n", kb, f.before, f.moved, f.shrunk_tail, f.shrunk_kept);
	printf("large_cont_pct: %ld\nmisaligned_cont_pct: %ld\n", f.large, f.misaligned);
	printf("partial_whole_cont_pct: %ld\npartial_ends_cont_pct: %ld\n"
	       "partial_left_cont_pct: %ld\npartial_untouched_cont_pct: %ld\ndata_ok: %d\n",
	       f.whole, f.ends, f.left, f.untouched, f.data_ok);
	return bad || unread ? 2 : 0;
}
