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
 * the child, read from the page tables by the farm's probe (ffcontpte.h). usage: fork-contpte [MTHP_KB [REGION_MB]] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ffcontpte.h"

static long page;

static long cont_pct(char *map, size_t len)
{
	return ff_cont_pct(map, len, page);
}

int main(int argc, char **argv)
{
	page = sysconf(_SC_PAGESIZE);
	long kb = argc > 1 ? atol(argv[1]) : (page == 4096 ? 64 : 2048);
	size_t len = (size_t)(argc > 2 ? atol(argv[2]) : 64) << 20, align = 32UL << 20;
	int to_child[2];
	char old[32] = "never";

	if (ff_set_mthp(kb, "always", old, sizeof(old)))
		return 2;
	char *map = ff_aligned(len, align, PROT_READ | PROT_WRITE);
	if (!map || pipe(to_child)) {
		perror("pipe");
		return 2;
	}
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
	ff_set_mthp(kb, old, NULL, 0);
	printf("mthp_kb: %ld\ncont_pct: %ld\nparent_cont_pct: %ld\n", kb, before, parent);
	return before < 0 || parent < 0 ? 2 : 0;
}
