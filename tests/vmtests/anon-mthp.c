// SPDX-License-Identifier: GPL-2.0
/*
 * anon-mthp: enable one anonymous mTHP size, write a large anonymous region, and
 * dump what backs it: folio orders, PTE_CONT, and the size's allocation counters.
 * The sysfs setting is restored afterwards.
 *
 * usage: anon-mthp SIZE_KB DUMP [REGION_MB]
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ffguest.h"

#define THP_SYSFS "/sys/kernel/mm/transparent_hugepage"

static int read_word(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "r");
	int ok;

	if (!f)
		return -1;
	ok = fgets(buf, n, f) != NULL;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return ok ? 0 : -1;
}

static int write_word(const char *path, const char *val)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fputs(val, f);
	return fclose(f);
}

/* "always [madvise] never" -> "madvise" */
static void selected(const char *in, char *out, size_t n)
{
	const char *l = strchr(in, '['), *r = l ? strchr(l, ']') : NULL;

	if (l && r && (size_t)(r - l) < n) {
		memcpy(out, l + 1, r - l - 1);
		out[r - l - 1] = 0;
	} else {
		/* no brackets: the file holds the value itself */
		size_t len = strnlen(in, n - 1);

		memcpy(out, in, len);
		out[len] = 0;
	}
}

static long stat_value(long kb, const char *name)
{
	char path[256], buf[64];

	snprintf(path, sizeof(path), THP_SYSFS "/hugepages-%ldkB/stats/%s", kb, name);
	return read_word(path, buf, sizeof(buf)) ? -1 : strtol(buf, NULL, 0);
}

int main(int argc, char **argv)
{
	char enabled[256], line[256], old[32];
	long kb, alloc0, fallback0, alloc1, fallback1, present;
	size_t len, align;
	struct ff_sizes sz;
	uintptr_t aligned;
	char *res, *map;
	FILE *dump;

	if (argc < 3) {
		fprintf(stderr, "usage: %s SIZE_KB DUMP [REGION_MB]\n", argv[0]);
		return 2;
	}
	kb = strtol(argv[1], NULL, 0);
	len = (argc > 3 ? strtoul(argv[3], NULL, 0) : 64) << 20;
	ktap_header(1);
	ff_sizes(&sz);
	snprintf(enabled, sizeof(enabled), THP_SYSFS "/hugepages-%ldkB/enabled", kb);
	if (read_word(enabled, line, sizeof(line))) {
		ktap_result(1, 1, "anon-mthp", "SKIP no %s", enabled);
		return 0;
	}
	selected(line, old, sizeof(old));
	if (write_word(enabled, "always")) {
		ktap_diag("cannot enable %s: %s", enabled, strerror(errno));
		ktap_result(0, 1, "anon-mthp", NULL);
		return 1;
	}
	alloc0 = stat_value(kb, "anon_fault_alloc");
	fallback0 = stat_value(kb, "anon_fault_fallback");

	/* align the region to the larger of the mTHP size and the PMD size */
	align = (size_t)kb * 1024 > sz.pmd ? (size_t)kb * 1024 : sz.pmd;
	res = mmap(NULL, len + align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (res == MAP_FAILED) {
		ktap_diag("mmap: %s", strerror(errno));
		write_word(enabled, old);
		ktap_result(0, 1, "anon-mthp", NULL);
		return 1;
	}
	aligned = ((uintptr_t)res + align - 1) & ~(uintptr_t)(align - 1);
	map = (char *)aligned;
	memset(map, 0x5a, len);
	/* the counters are global: read them right away, before this program's own
	 * heap grows (fopen()), whose randomised break would add an mTHP fault or not */
	alloc1 = stat_value(kb, "anon_fault_alloc");
	fallback1 = stat_value(kb, "anon_fault_fallback");

	dump = ff_dump_open(argv[2], "anon-mthp", "anon", &sz);
	if (!dump) {
		write_word(enabled, old);
		ktap_result(0, 1, "anon-mthp", NULL);
		return 1;
	}
	fprintf(dump, "figure mthp_kb=%ld region_bytes=%zu was=%s anon_fault_alloc=%ld "
		"anon_fault_fallback=%ld\n", kb, len, old,
		alloc1 - alloc0, fallback1 - fallback0);
	present = ff_dump_mapping(dump, "anon", map, len, sz.page);
	fclose(dump);
	if (write_word(enabled, old))
		ktap_diag("could not restore %s to %s", enabled, old);
	ktap_diag("hugepages-%ldkB was %s, restored; present pages %ld", kb, old, present);
	ktap_result(present > 0, 1, "anon-mthp", NULL);
	return present > 0 ? 0 : 1;
}
