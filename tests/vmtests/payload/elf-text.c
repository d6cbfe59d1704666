// SPDX-License-Identifier: GPL-2.0
/*
 * elf-text: a real executable, exec'd from the filesystem under test with a cold
 * page cache, measures its own text: it calls into its 16MB text segment at
 * spread offsets, then dumps the text mapping (pagemap, kpageflags, probe).
 * The farm links it twice: with the default -z max-page-size and with 2M, and
 * records the text segment's p_align. The loader's read() of the ELF header
 * leaves the first folio small; the dump shows it as it is.
 *
 * usage: elf-text FS DUMP [TOUCHES]
 */
#include <elf.h>
#include <errno.h>
#include <libgen.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/resource.h>
#include <unistd.h>

#include "ffguest.h"

extern char bigtext[], bigtext_end[];
typedef void (*stub_fn)(void);

/* The r-xp mapping of /proc/self/maps that holds @addr. */
static int text_mapping(const void *addr, uintptr_t *start, uintptr_t *end)
{
	char line[512];
	FILE *f = fopen("/proc/self/maps", "r");
	int found = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long s, e;
		char perms[8];

		if (sscanf(line, "%lx-%lx %7s", &s, &e, perms) == 3 &&
		    s <= (uintptr_t)addr && (uintptr_t)addr < e) {
			*start = s;
			*end = e;
			found = 0;
			break;
		}
	}
	fclose(f);
	return found;
}

/* p_align, p_vaddr and p_offset of the executable PT_LOAD segment. */
static void exec_phdr(unsigned long *align, unsigned long *vaddr, unsigned long *offset)
{
	const Elf64_Phdr *ph = (const Elf64_Phdr *)getauxval(AT_PHDR);
	unsigned long i, n = getauxval(AT_PHNUM);

	*align = *vaddr = *offset = 0;
	for (i = 0; ph && i < n; i++) {
		if (ph[i].p_type == PT_LOAD && (ph[i].p_flags & PF_X)) {
			*align = ph[i].p_align;
			*vaddr = ph[i].p_vaddr;
			*offset = ph[i].p_offset;
			return;
		}
	}
}

int main(int argc, char **argv)
{
	unsigned long p_align, p_vaddr, p_offset;
	struct ff_sizes sz;
	struct rusage r0, r1;
	uintptr_t start, end;
	long touches, i, present;
	size_t stride;
	FILE *dump;

	if (argc < 3) {
		fprintf(stderr, "usage: %s FS DUMP [TOUCHES]\n", argv[0]);
		return 2;
	}
	touches = argc > 3 ? strtol(argv[3], NULL, 0) : 64;
	if (ff_begin("elf-text", &sz))
		return 0;	/* skipped, and said why */
	stride = (size_t)(bigtext_end - bigtext) / touches;
	getrusage(RUSAGE_SELF, &r0);
	for (i = 0; i < touches; i++)
		((stub_fn)(bigtext + ((i * stride + stride / 2) & ~(size_t)3)))();
	getrusage(RUSAGE_SELF, &r1);
	if (text_mapping(bigtext, &start, &end)) {
		ktap_diag("no mapping holds the text: %s", strerror(errno));
		ktap_result(0, 1, "elf-text", NULL);
		return 1;
	}
	exec_phdr(&p_align, &p_vaddr, &p_offset);
	/* the check is named after the binary: elf-text or elf-text-2m */
	dump = ff_dump_open(argv[2], basename(argv[0]), argv[1], &sz);
	if (!dump) {
		ktap_result(0, 1, "elf-text", NULL);
		return 1;
	}
	fprintf(dump, "figure touches=%ld faults=%ld p_align=%lu text_vaddr=%#lx text_offset=%#lx "
		"bigtext_offset=%lu\n", touches,
		(r1.ru_majflt + r1.ru_minflt) - (r0.ru_majflt + r0.ru_minflt), p_align, p_vaddr,
		p_offset, (unsigned long)((uintptr_t)bigtext - start) / sz.page);
	present = ff_dump_mapping(dump, "text", (void *)start, end - start, sz.page);
	fclose(dump);
	ktap_diag("text %#lx-%#lx p_align %#lx present pages %ld", (unsigned long)start,
		  (unsigned long)end, p_align, present);
	ktap_result(present > 0, 1, "elf-text", NULL);
	return present > 0 ? 0 : 1;
}
