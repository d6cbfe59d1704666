// SPDX-License-Identifier: GPL-2.0
/*
 * foliofarm page-table probe.
 *
 * No upstream interface reports PTE_CONT: smaps has only PMD fields and pagemap
 * gives PFNs. This module walks the calling process's page tables by hand
 * (walk_page_range() and __pte_offset_map() are not exported) and reports, per
 * base page, whether a present leaf maps it, its PFN, and whether the leaf has
 * the contiguous bit or is a PMD/PUD block.
 */
#include <linux/module.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/pgtable.h>
#include <linux/rcupdate.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include "ffprobe.h"

static struct dentry *ffprobe_dir;

/* Entry for the page at @addr; called under mmap_read_lock. */
static u64 ffprobe_entry(struct mm_struct *mm, unsigned long addr)
{
	pgd_t *pgdp = pgd_offset(mm, addr);
	p4d_t *p4dp;
	pud_t *pudp, pud;
	pmd_t *pmdp, pmd;
	pte_t *ptep, pte;
	u64 e = 0;

	if (pgd_none(READ_ONCE(*pgdp)))
		return 0;
	p4dp = p4d_offset(pgdp, addr);
	if (p4d_none(READ_ONCE(*p4dp)))
		return 0;
	pudp = pud_offset(p4dp, addr);
	pud = READ_ONCE(*pudp);
	if (pud_none(pud) || !pud_present(pud))
		return 0;
	if (pud_leaf(pud)) {
		unsigned long off = (addr & ~PUD_MASK) >> PAGE_SHIFT;

		return FFPROBE_PRESENT | FFPROBE_PUD | (pud_pfn(pud) + off);
	}
	pmdp = pmd_offset(pudp, addr);
	pmd = pmdp_get_lockless(pmdp);
	if (pmd_none(pmd) || !pmd_present(pmd))
		return 0;
	if (pmd_leaf(pmd)) {
		unsigned long off = (addr & ~PMD_MASK) >> PAGE_SHIFT;

		e = FFPROBE_PRESENT | FFPROBE_PMD | (pmd_pfn(pmd) + off);
		if (pte_cont(pmd_pte(pmd)))
			e |= FFPROBE_CONT;
		return e;
	}
	/*
	 * A PTE table can be freed by khugepaged's retraction with only RCU held
	 * off; read it from our stable copy of the PMD under RCU.
	 */
	rcu_read_lock();
	ptep = pte_offset_kernel(&pmd, addr);
	pte = __ptep_get(ptep);	/* the raw entry: ptep_get() would fold contpte */
	if (pte_present(pte)) {
		e = FFPROBE_PRESENT | (pte_pfn(pte) & FFPROBE_PFN_MASK);
		if (pte_cont(pte))
			e |= FFPROBE_CONT;
	}
	rcu_read_unlock();
	return e;
}

static long ffprobe_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct mm_struct *mm = current->mm;
	struct ffprobe_req req;
	u64 __user *out;
	unsigned long addr, i, chunk;
	u64 *buf;
	long ret = 0;

	if (cmd != FFPROBE_IOC_WALK)
		return -ENOTTY;
	if (!mm)
		return -EINVAL;
	if (copy_from_user(&req, (void __user *)arg, sizeof(req)))
		return -EFAULT;
	if (req.start & ~PAGE_MASK || !req.npages ||
	    req.npages > (TASK_SIZE >> PAGE_SHIFT))
		return -EINVAL;
	buf = kmalloc_array(512, sizeof(*buf), GFP_KERNEL);
	if (!buf)
		return -ENOMEM;
	out = u64_to_user_ptr(req.out);
	addr = req.start;
	/* Fill in chunks: copy_to_user() may fault, which needs mmap_lock dropped. */
	for (i = 0; i < req.npages; i += chunk) {
		unsigned long j;

		chunk = min_t(unsigned long, 512, req.npages - i);
		mmap_read_lock(mm);
		for (j = 0; j < chunk; j++, addr += PAGE_SIZE)
			buf[j] = ffprobe_entry(mm, addr);
		mmap_read_unlock(mm);
		if (copy_to_user(out + i, buf, chunk * sizeof(*buf))) {
			ret = -EFAULT;
			break;
		}
	}
	kfree(buf);
	return ret;
}

static const struct file_operations ffprobe_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = ffprobe_ioctl,
};

static int __init ffprobe_init(void)
{
	ffprobe_dir = debugfs_create_dir("ffprobe", NULL);
	debugfs_create_file("walk", 0400, ffprobe_dir, NULL, &ffprobe_fops);
	pr_info("ffprobe: page size %lu, CONT_PTES %lu, PMD %lu\n",
		PAGE_SIZE, (unsigned long)CONT_PTES, (unsigned long)PMD_SIZE);
	return 0;
}

static void __exit ffprobe_exit(void)
{
	debugfs_remove(ffprobe_dir);
}

module_init(ffprobe_init);
module_exit(ffprobe_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("foliofarm page-table probe: PFN and PTE_CONT per page");
