/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the contpte programs share (fork-contpte, contpte-partial,
 * contpte-mremap), and what a reproducer may use as they do: the share of a
 * range's pages mapped with PTE_CONT, read from the page tables through the
 * farm's probe (every farm guest has it loaded: tests/vmtests/ffprobe.c), and
 * one anon mTHP size switched on. Static inline, in a header alone, so that
 * each program stays one source: `foliofarm run --repro FILE.c` offers this
 * header beside the source it compiles (#include "ffcontpte.h").
 */
#ifndef FFCONTPTE_H
#define FFCONTPTE_H

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

/* the probe's interface (tests/vmtests/ffprobe.h) */
struct ffprobe_req { uint64_t start, npages, out; };
#define FFPROBE_IOC_WALK _IOW('f', 1, struct ffprobe_req)
#define FF_PRESENT (1ULL << 63)
#define FF_CONT (1ULL << 62)

/* Percent of the pages of [start, start + len) mapped present with PTE_CONT;
 * -1 if the probe cannot be read. */
static inline long ff_cont_pct(const char *start, size_t len, size_t page)
{
	size_t n = len / page, cont = 0;
	uint64_t *e = calloc(n ? n : 1, 8);
	struct ffprobe_req req = { (uintptr_t)start, n, (uintptr_t)e };
	int fd = open("/sys/kernel/debug/ffprobe/walk", O_RDONLY);
	int bad = fd < 0 || !e || !n || ioctl(fd, FFPROBE_IOC_WALK, &req);

	if (fd >= 0)
		close(fd);
	for (size_t i = 0; !bad && i < n; i++)
		cont += (e[i] & (FF_PRESENT | FF_CONT)) == (FF_PRESENT | FF_CONT);
	free(e);
	return bad ? -1 : (long)(100 * cont / n);
}

/* Set anon mTHP size ``kb`` to ``value`` ("always", "never", ...); its old
 * value into ``old`` (n bytes) when given. 0, or -1 said. */
static inline int ff_set_mthp(long kb, const char *value, char *old, size_t n)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/mm/transparent_hugepage/hugepages-%ldkB/enabled", kb);
	if (old && (f = fopen(path, "r"))) {
		char line[128] = "", *l, *r;

		if (!fgets(line, sizeof(line), f))
			line[0] = 0;
		fclose(f);
		l = strchr(line, '[');
		r = l ? strchr(l, ']') : NULL;
		snprintf(old, n, "%.*s", l && r ? (int)(r - l - 1) : 0, l ? l + 1 : "");
	}
	f = fopen(path, "w");
	if (!f || fputs(value, f) < 0 || fclose(f)) {
		perror(path);
		return -1;
	}
	return 0;
}

/* fn(arg) with anon mTHP size ``kb`` set to "always", its old value restored
 * after: what fn returns, or -1 if the size cannot be set. */
static inline int ff_with_mthp(long kb, int (*fn)(void *), void *arg)
{
	char old[32] = "never";
	int ret;

	if (ff_set_mthp(kb, "always", old, sizeof(old)))
		return -1;
	ret = fn(arg);
	ff_set_mthp(kb, old, NULL, 0);
	return ret;
}

/* ``len`` bytes of anonymous memory aligned to ``align`` (a power of two),
 * mapped with ``prot``, never touched; NULL (said) if it cannot be had. */
static inline char *ff_aligned(size_t len, size_t align, int prot)
{
	char *res = mmap(NULL, len + align, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (res == MAP_FAILED) {
		perror("mmap");
		return NULL;
	}
	return (char *)(((uintptr_t)res + align - 1) & ~(uintptr_t)(align - 1));
}

#endif
