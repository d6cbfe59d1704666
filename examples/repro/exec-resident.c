/* A reproducer for `foliofarm run --repro`: map the cell's stubs.bin
 * PROT_EXEC from its filesystem ($FF_MNT), touch one byte every 1 MB of it
 * from a cold page cache, and print how much of it readahead brought in.
 * Each "key: number" line is a figure the farm compares base against series. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int main(void)
{
	const char *mnt = getenv("FF_MNT");
	char path[512];
	struct stat st;
	long page = sysconf(_SC_PAGESIZE), resident = 0;

	snprintf(path, sizeof(path), "%s/stubs.bin", mnt ? mnt : ".");
	int fd = open(path, O_RDONLY);
	if (fd < 0 || fstat(fd, &st) < 0) { perror(path); return 2; }
	volatile char *p = mmap(NULL, st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (p == MAP_FAILED) { perror("mmap"); return 2; }
	for (off_t off = 0; off < st.st_size; off += 1 << 20)
		(void)p[off];
	size_t pages = (st.st_size + page - 1) / page;
	unsigned char *vec = malloc(pages);
	if (!vec || mincore((void *)p, st.st_size, vec) < 0) { perror("mincore"); return 2; }
	for (size_t i = 0; i < pages; i++)
		resident += vec[i] & 1;
	printf("resident_pages: %ld\nresident_kb: %ld\n", resident, resident * page / 1024);
	return 0;
}
