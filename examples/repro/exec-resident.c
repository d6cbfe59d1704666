/* A reproducer for `foliofarm run --repro`: map the cell's big.bin from its
 * filesystem ($FF_MNT) PROT_EXEC, touch one byte every STRIDE_KB of it from a
 * cold page cache, with the device's read_ahead_kb at RA_KB, and print how
 * much of it readahead brought in (mincore), how much is mapped and what
 * share of that is in large folios (pagemap and kpageflags: guests run as root).
 * usage: exec-resident [exec|data|hugepage [STRIDE_KB [RA_KB]]]  (data: no
 * PROT_EXEC; hugepage: PROT_EXEC and MADV_HUGEPAGE). Each "key: number" line
 * it prints is a figure the farm compares base against series. */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Pages of [p, p + len) mapped, and of those in large folios (a compound page). */
static int mapped(volatile char *p, size_t pages, long page, long *in_map, long *in_large)
{
	int pm = open("/proc/self/pagemap", O_RDONLY), kf = open("/proc/kpageflags", O_RDONLY);
	uint64_t *pte = malloc(pages * 8), flags, pfn;

	if (pm < 0 || kf < 0 || !pte || pread(pm, pte, pages * 8, (uintptr_t)p / page * 8) != (ssize_t)(pages * 8))
		return -1;
	for (size_t i = 0; i < pages; i++) {
		pfn = pte[i] & ((1ULL << 55) - 1);
		if (!(pte[i] >> 63) || !pfn || pread(kf, &flags, 8, pfn * 8) != 8)
			continue;
		*in_map += 1;
		*in_large += !!(flags & (3ULL << 15));        /* KPF_COMPOUND_HEAD, _TAIL */
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "exec", *mnt = getenv("FF_MNT");
	const char *ra_kb = argc > 3 ? argv[3] : "128";
	long stride = (argc > 2 ? atol(argv[2]) : 1024) * 1024, page = sysconf(_SC_PAGESIZE);
	long resident = 0, touches = 0, in_map = 0, in_large = 0;
	int prot = PROT_READ | (strcmp(mode, "data") ? PROT_EXEC : 0);
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "/sys/block/%s/queue/read_ahead_kb", getenv("FF_DEV"));
	FILE *ra = fopen(path, "w");
	if (!ra || fputs(ra_kb, ra) < 0 || fclose(ra)) { perror(path); return 2; }
	snprintf(path, sizeof(path), "%s/big.bin", mnt ? mnt : ".");
	int fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st) < 0 || stride <= 0) { perror(path); return 2; }
	volatile char *p = mmap(NULL, st.st_size, prot, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED) { perror("mmap"); return 2; }
	if (!strcmp(mode, "hugepage") && madvise((void *)p, st.st_size, MADV_HUGEPAGE)) { perror("madvise"); return 2; }
	for (off_t off = stride / 2; off < st.st_size; off += stride, touches++)
		(void)p[off];
	size_t pages = (st.st_size + page - 1) / page;
	unsigned char *vec = malloc(pages);
	if (!vec || mincore((void *)p, st.st_size, vec) < 0) { perror("mincore"); return 2; }
	for (size_t i = 0; i < pages; i++)
		resident += vec[i] & 1;
	if (mapped(p, pages, page, &in_map, &in_large)) { perror("pagemap"); return 2; }
	printf("mode %s, %ld touches\nresident_pages: %ld\nresident_kb: %ld\n",
	       mode, touches, resident, resident * page / 1024);
	printf("mapped_pages: %ld\nlarge_folio_pct: %ld\n", in_map, in_map ? 100 * in_large / in_map : 0);
	return 0;
}
