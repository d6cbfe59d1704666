// SPDX-License-Identifier: GPL-2.0
/*
 * file-collapse: collapse exec file text into a PMD-mapped huge page with
 * MADV_COLLAPSE, then open the file for write and see whether the huge mapping
 * survives (6.12 drops a file's huge pages when it is opened for write; 7.x
 * keeps them). On 64K pages the PMD is 512M, larger than the file: collapse is
 * refused with EINVAL, which is the expected result there.
 *
 * The file is taken from a writable mount (WFILE); "-" (a read-only filesystem
 * such as EROFS) collapses RFILE and skips the write-open step.
 *
 * usage: file-collapse RFILE WFILE FS DUMP
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ffguest.h"

#ifndef MADV_COLLAPSE
#define MADV_COLLAPSE 25
#endif

/* FilePmdMapped (kB) of the smaps entry that starts at @start. */
static long file_pmd_mapped_kb(uintptr_t start)
{
	char line[256];
	FILE *f = fopen("/proc/self/smaps", "r");
	long kb = -1;
	int in = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long s, e;

		if (sscanf(line, "%lx-%lx ", &s, &e) == 2 && strchr(line, '-') < strchr(line, ' ')) {
			in = s == start;
			continue;
		}
		if (in && sscanf(line, "FilePmdMapped: %ld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return kb;
}

int main(int argc, char **argv)
{
	const char *path;
	struct ff_sizes sz;
	struct stat st;
	long before_kb, after_kb = -1, present;
	int fd, wfd = -1, collapse_errno = 0, writable;
	size_t len, off;
	char *res, *map;
	uintptr_t aligned;
	FILE *dump;

	if (argc < 5) {
		fprintf(stderr, "usage: %s RFILE WFILE FS DUMP\n", argv[0]);
		return 2;
	}
	if (ff_begin("file-collapse", &sz))
		return 0;	/* skipped, and said why */
	writable = strcmp(argv[2], "-") != 0;
	path = writable ? argv[2] : argv[1];
	fd = ff_open_cold(path, &st);
	if (fd < 0) {
		ktap_result(0, 1, "file-collapse", NULL);
		return 1;
	}
	/* one PMD of text where the file has it, else the whole file (collapse must refuse) */
	len = (size_t)st.st_size >= sz.pmd ? sz.pmd : (size_t)st.st_size;
	res = mmap(NULL, len + sz.pmd, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	aligned = ((uintptr_t)res + sz.pmd - 1) & ~(uintptr_t)(sz.pmd - 1);
	map = mmap((void *)aligned, len, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, fd, 0);
	if (res == MAP_FAILED || map == MAP_FAILED) {
		ktap_diag("mmap: %s", strerror(errno));
		ktap_result(0, 1, "file-collapse", NULL);
		return 1;
	}
	for (off = 0; off < len; off += sz.page)
		(void)*(volatile char *)(map + off);
	if (madvise(map, len, MADV_COLLAPSE))
		collapse_errno = errno;
	before_kb = file_pmd_mapped_kb(aligned);

	dump = ff_dump_open(argv[4], "file-collapse", argv[3], &sz);
	if (!dump) {
		ktap_result(0, 1, "file-collapse", NULL);
		return 1;
	}
	present = ff_dump_mapping(dump, "collapsed", map, len, sz.page);
	if (writable) {
		/* open for write, write nothing: 6.12 drops the file's huge pages here */
		wfd = open(path, O_RDWR);
		if (wfd < 0)
			ktap_diag("open %s for write: %s", path, strerror(errno));
		after_kb = file_pmd_mapped_kb(aligned);
		ff_dump_mapping(dump, "after_write_open", map, len, sz.page);
	}
	fprintf(dump, "figure map_bytes=%zu collapse_errno=%d file_pmd_mapped_kb=%ld "
		"write_opened=%d file_pmd_mapped_kb_after_write_open=%ld\n",
		len, collapse_errno, before_kb, wfd >= 0, after_kb);
	fclose(dump);
	ktap_diag("MADV_COLLAPSE: %s; FilePmdMapped %ld kB, after open for write %ld kB",
		  collapse_errno ? strerror(collapse_errno) : "ok", before_kb, after_kb);
	ktap_result(present >= 0, 1, "file-collapse", NULL);
	if (wfd >= 0)
		close(wfd);
	return present >= 0 ? 0 : 1;
}
