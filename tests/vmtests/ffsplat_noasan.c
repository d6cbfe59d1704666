// SPDX-License-Identifier: GPL-2.0
/*
 * The triggers of ffsplat that must not be KASAN-instrumented: with KASAN on,
 * KASAN would report their bad accesses first (a KFENCE guard page, NULL).
 */
#include <linux/errno.h>
#include <linux/jiffies.h>
#include <linux/kfence.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>

int ffsplat_kfence(void);
void ffsplat_oops(void);

/* A NULL dereference: the Oops ("Unable to handle kernel NULL pointer ...") */
void ffsplat_oops(void)
{
	int *volatile null = NULL;

	*null = 1;
}

#ifdef CONFIG_KFENCE
int ffsplat_kfence(void)
{
	unsigned long end = jiffies + 20 * HZ;
	volatile char *v;
	char *p;
	int val;

	/* KFENCE samples one allocation per sample_interval: allocate until one is its */
	while (time_before(jiffies, end)) {
		p = kmalloc(32, GFP_KERNEL);
		if (!p)
			return -ENOMEM;
		if (is_kfence_address(p)) {
			/* an object sits at one end of its page, a guard page beyond */
			v = p;
			if (PAGE_ALIGNED(p))
				val = v[-1];
			else
				val = v[PAGE_ALIGN((unsigned long)p) - (unsigned long)p];
			kfree(p);
			return val & 0;
		}
		kfree(p);
		cond_resched();
	}
	return -ETIMEDOUT;
}
#else
int ffsplat_kfence(void)
{
	return -EOPNOTSUPP;
}
#endif
