/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Interface of the foliofarm page-table probe, shared by the module and the guest
 * programs. The caller asks for a range of its own address space; the module walks
 * the page tables by hand and fills one 64-bit entry per base page.
 */
#ifndef FFPROBE_H
#define FFPROBE_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define FFPROBE_PATH "/sys/kernel/debug/ffprobe/walk"

/* entry = pfn | flag bits */
#define FFPROBE_PRESENT   (1ULL << 63)  /* a present leaf entry maps this page */
#define FFPROBE_CONT      (1ULL << 62)  /* the leaf PTE (or PMD) has PTE_CONT */
#define FFPROBE_PMD       (1ULL << 61)  /* mapped by a PMD block entry */
#define FFPROBE_PUD       (1ULL << 60)  /* mapped by a PUD block entry */
#define FFPROBE_PFN_MASK  ((1ULL << 55) - 1)

struct ffprobe_req {
	__u64 start;    /* page-aligned user address */
	__u64 npages;   /* number of base pages */
	__u64 out;      /* user pointer to npages __u64 entries */
};

#define FFPROBE_IOC_WALK _IOW('f', 1, struct ffprobe_req)

#endif
