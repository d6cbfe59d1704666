// SPDX-License-Identifier: GPL-2.0
/*
 * foliofarm splat trigger: makes the kernel print each kind of report the farm
 * must recognise, so that its console patterns are tested against real lines
 * from every kernel version it supports, not lines written by hand.
 *
 * Never loaded by a check run: the console recordings (tools/record_splats.py)
 * load it and write one word to /sys/kernel/debug/ffsplat:
 *
 *   warn        WARN_ON_ONCE()
 *   bug         BUG()                    (the writing task dies: Oops, taint D)
 *   oops        a NULL dereference
 *   softlockup  spin with preemption off past 2 * watchdog_thresh
 *   hung        sleep uninterruptibly past hung_task_timeout_secs
 *   rcu-stall   spin with preemption off while another CPU waits for a grace period
 *   kasan       read past a kmalloc'd object      (CONFIG_KASAN)
 *   kfence      read past a KFENCE-guarded object (CONFIG_KFENCE, ffsplat_noasan.c)
 *   ubsan       index an array out of bounds      (CONFIG_UBSAN_BOUNDS)
 *   lockdep     take two mutexes in both orders   (CONFIG_PROVE_LOCKING)
 *   sleep       might_sleep() in atomic context    (CONFIG_DEBUG_ATOMIC_SLEEP)
 *   panic       panic()
 */
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/cpumask.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>

int ffsplat_kfence(void);
void ffsplat_oops(void);

static struct dentry *ffsplat_file;
static DEFINE_MUTEX(ffsplat_a);
static DEFINE_MUTEX(ffsplat_b);
static unsigned int spin_seconds = 30;
module_param(spin_seconds, uint, 0644);
MODULE_PARM_DESC(spin_seconds, "how long softlockup, hung and rcu-stall block");

static noinline void ffsplat_spin(unsigned int seconds)
{
	unsigned int i;

	preempt_disable();
	for (i = 0; i < seconds * 1000; i++)
		mdelay(1);
	preempt_enable();
}

static int ffsplat_gp_waiter(void *unused)
{
	while (!kthread_should_stop())
		synchronize_rcu();
	return 0;
}

static noinline int ffsplat_kasan(void)
{
	char *p = kmalloc(24, GFP_KERNEL);
	volatile char *v = p;
	size_t off = 24;
	int val;

	if (!p)
		return -ENOMEM;
	OPTIMIZER_HIDE_VAR(off);
	/* past the object (the kmalloc redzone), then after the free: one of
	 * the two is a report on every KASAN kernel (6.12 misses the first) */
	val = v[off];
	kfree(p);
	val += v[0];
	return val & 0;
}

static noinline int ffsplat_ubsan(void)
{
	volatile int idx = 5;
	int arr[4] = { 0 };

	return arr[idx] & 0;
}

static noinline void ffsplat_lockdep(void)
{
	mutex_lock(&ffsplat_a);
	mutex_lock(&ffsplat_b);
	mutex_unlock(&ffsplat_b);
	mutex_unlock(&ffsplat_a);
	mutex_lock(&ffsplat_b);
	mutex_lock(&ffsplat_a);
	mutex_unlock(&ffsplat_a);
	mutex_unlock(&ffsplat_b);
}

static noinline void ffsplat_sleep(void)
{
	/* might_sleep() reports without sleeping: really scheduling here would
	 * take the kernel down, and the recordings after it */
	preempt_disable();
	might_sleep();
	preempt_enable();
}

static ssize_t ffsplat_write(struct file *file, const char __user *ubuf, size_t len,
			     loff_t *ppos)
{
	char cmd[16] = { 0 };
	struct task_struct *waiter;

	if (copy_from_user(cmd, ubuf, min(len, sizeof(cmd) - 1)))
		return -EFAULT;
	strim(cmd);
	pr_info("ffsplat: %s\n", cmd);
	if (!strcmp(cmd, "warn")) {
		WARN_ON_ONCE(len > 0);
	} else if (!strcmp(cmd, "bug")) {
		BUG();
	} else if (!strcmp(cmd, "oops")) {
		ffsplat_oops();
	} else if (!strcmp(cmd, "softlockup")) {
		ffsplat_spin(spin_seconds);
	} else if (!strcmp(cmd, "hung")) {
		schedule_timeout_uninterruptible(spin_seconds * HZ);
	} else if (!strcmp(cmd, "rcu-stall")) {
		/* CPU 1 waits for a grace period that CPU 0 holds up */
		if (num_online_cpus() < 2)
			return -EINVAL;
		waiter = kthread_create(ffsplat_gp_waiter, NULL, "ffsplat-gp");
		if (IS_ERR(waiter))
			return PTR_ERR(waiter);
		kthread_bind(waiter, 1);
		wake_up_process(waiter);
		set_cpus_allowed_ptr(current, cpumask_of(0));
		ffsplat_spin(spin_seconds);
		kthread_stop(waiter);
		set_cpus_allowed_ptr(current, cpu_possible_mask);
	} else if (!strcmp(cmd, "kasan")) {
		return ffsplat_kasan() ?: len;
	} else if (!strcmp(cmd, "kfence")) {
		return ffsplat_kfence() ?: len;
	} else if (!strcmp(cmd, "ubsan")) {
		return ffsplat_ubsan() ?: len;
	} else if (!strcmp(cmd, "lockdep")) {
		ffsplat_lockdep();
	} else if (!strcmp(cmd, "sleep")) {
		ffsplat_sleep();
	} else if (!strcmp(cmd, "panic")) {
		panic("ffsplat: panic on request");
	} else {
		return -EINVAL;
	}
	return len;
}

static const struct file_operations ffsplat_fops = {
	.owner = THIS_MODULE,
	.write = ffsplat_write,
};

static int __init ffsplat_init(void)
{
	ffsplat_file = debugfs_create_file("ffsplat", 0200, NULL, NULL, &ffsplat_fops);
	return 0;
}

static void __exit ffsplat_exit(void)
{
	debugfs_remove(ffsplat_file);
}

module_init(ffsplat_init);
module_exit(ffsplat_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("foliofarm: trigger kernel reports to record their console lines");
