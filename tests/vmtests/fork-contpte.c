// SPDX-License-Identifier: GPL-2.0
/* fork-contpte: a reproducer (`foliofarm run --repro tests/vmtests/fork-contpte.c`
 * runs it as one) promoted to a check, its row in checks.toml running it under
 * the reproducer's driver (ffrun) and reading the figures it prints. Does fork() keep an anonymous
 * region contpte-mapped? arm64 write-protects a whole contpte block at fork
 * without unfolding it (contpte_wrprotect_ptes(), the "fork() optimization"
 * of the contpte series); the child's copy of the PTEs is set a block at a
 * time and folds again. A kernel that unfolds at fork loses PTE_CONT in the
 * parent on every fork. Enables one anon mTHP size (the contpte block: 64K on
 * 4K pages, 2M on 16K and 64K), writes an aligned region, and prints the share
 * of it mapped with PTE_CONT before the fork, in the parent after it and in
 * the child, read from the page tables by the farm's probe (every farm guest
 * has it loaded). usage: fork-contpte [MTHP_KB [REGION_MB]] */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

/* the probe's interface (tests/vmtests/ffprobe.h) */
struct ffprobe_req { uint64_t start, npages, out; };
#define FFPROBE_IOC_WALK _IOW('f', 1, struct ffprobe_req)
#define PRESENT (1ULL << 63)
#define CONT (1ULL << 62)

static long page;

/* Percent of the region's pages mapped with PTE_CONT; -1 if the probe fails. */
static long cont_pct(char *map, size_t len)
{
	size_t n = len / page, cont = 0;
	uint64_t *e = calloc(n, 8);
	struct ffprobe_req req = { (uintptr_t)map, n, (uintptr_t)e };
	int fd = open("/sys/kernel/debug/ffprobe/walk", O_RDONLY);

	if (fd < 0 || !e || ioctl(fd, FFPROBE_IOC_WALK, &req))
		return -1;
	for (size_t i = 0; i < n; i++)
		cont += (e[i] & (PRESENT | CONT)) == (PRESENT | CONT);
	close(fd);
	free(e);
	return 100 * cont / n;
}

static int set_mthp(long kb, const char *value, char *old, size_t n)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "/sys/kernel/mm/transparent_hugepage/hugepages-%ldkB/enabled", kb);
	if (old && (f = fopen(path, "r"))) {
		char line[128] = "", *l, *r;

		fgets(line, sizeof(line), f);
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

int main(int argc, char **argv)
{
	page = sysconf(_SC_PAGESIZE);
	long kb = argc > 1 ? atol(argv[1]) : (page == 4096 ? 64 : 2048);
	size_t len = (size_t)(argc > 2 ? atol(argv[2]) : 64) << 20, align = 32UL << 20;
	int to_child[2];
	char old[32] = "never";

	if (set_mthp(kb, "always", old, sizeof(old)))
		return 2;
	char *res = mmap(NULL, len + align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (res == MAP_FAILED || pipe(to_child)) {
		perror("mmap");
		return 2;
	}
	char *map = (char *)(((uintptr_t)res + align - 1) & ~(uintptr_t)(align - 1));
	memset(map, 0x5a, len);
	long before = cont_pct(map, len);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {         /* the child: its own page tables, once the parent has read its */
		char go;

		read(to_child[0], &go, 1);
		printf("child_cont_pct: %ld\n", cont_pct(map, len));
		fflush(stdout);
		_exit(0);
	}
	long parent = cont_pct(map, len);
	write(to_child[1], "g", 1);
	waitpid(pid, NULL, 0);
	set_mthp(kb, old, NULL, 0);
	printf("mthp_kb: %ld\ncont_pct: %ld\nparent_cont_pct: %ld\n", kb, before, parent);
	return before < 0 || parent < 0 ? 2 : 0;
}
