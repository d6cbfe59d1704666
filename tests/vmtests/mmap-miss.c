// SPDX-License-Identifier: GPL-2.0
/*
 * mmap-miss: does an exec file mapping keep getting readahead after more than
 * MMAP_LOTSAMISS (100) cold faults?
 *
 * A large file is mapped PROT_EXEC and touched TOUCHES times, each touch a stride
 * beyond the last so that it lands outside the previous readahead window; after
 * each touch mincore() tells how many pages around it are resident: more than one
 * means readahead brought in neighbours. Then, with a cold cache and on a fresh
 * descriptor (fresh file_ra_state), a non-exec control mapping gets the same
 * touches. The readahead tracepoints (with mmap_miss, where the kernel has them)
 * are recorded for the host. A third pass, "balanced", follows each cold touch
 * with a touch of the page just before it, which the read-around brought in:
 * a hit, which the kernel counts against the miss (filemap_map_pages() under
 * fault-around, do_async_mmap_readahead() without it), so readahead should
 * never stop.
 *
 * usage: mmap-miss FILE FS BLOCKDEV DUMP [TOUCHES [STRIDE_KB]]
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ffguest.h"

#define READ_AHEAD_KB 128


/* One pass: returns touches that got readahead, or -1. */
static long pass(const char *path, const char *label, int prot, int hit, long touches,
		 size_t stride, const struct ff_sizes *sz, FILE *dump)
{
	volatile const char *p;
	struct stat st;
	long i, with_ra = 0, first_without = -1, traced;
	char *map;
	int fd;

	fd = ff_open_cold(path, &st);
	if (fd < 0)
		return -1;
	if ((size_t)st.st_size < touches * stride) {
		ktap_diag("%s: %lld bytes, need %zu", path, (long long)st.st_size, touches * stride);
		close(fd);
		return -1;
	}
	map = mmap(NULL, st.st_size, prot, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		ktap_diag("mmap %s: %s", label, strerror(errno));
		close(fd);
		return -1;
	}
	fprintf(dump, "map %s %#lx 0\nendmap %s\n", label, (unsigned long)map, label);
	ff_trace_start(ff_readahead_events);
	for (i = 0; i < touches; i++) {
		size_t off = i * stride + stride / 2;
		long resident;

		off &= ~(sz->page - 1);
		p = map + off;
		(void)*p;
		if (hit) {
			p = map + off - sz->page;
			(void)*p;
		}
		/* the stride around the touch: the touched page alone means no readahead */
		resident = ff_resident_settled(fd, map, i * stride, stride, sz->page);
		fprintf(dump, "R %s %ld %ld\n", label, i, resident);
		if (resident > 1)
			with_ra++;
		else if (first_without < 0)
			first_without = i;
	}
	traced = ff_trace_stop(dump, label, ff_readahead_events, (unsigned long)st.st_ino);
	fprintf(dump, "figure %s_with_ra=%ld %s_first_without_ra=%ld %s_trace_lines=%ld\n",
		label, with_ra, label, first_without, label, traced);
	ktap_diag("%s: %ld/%ld touches got readahead, first without: %ld", label, with_ra,
		  touches, first_without);
	munmap(map, st.st_size);
	close(fd);
	return with_ra;
}

int main(int argc, char **argv)
{
	struct ff_sizes sz;
	long touches, old_ra, exec_ra, ctrl_ra;
	size_t stride;
	FILE *dump;

	if (argc < 5) {
		fprintf(stderr, "usage: %s FILE FS BLOCKDEV DUMP [TOUCHES [STRIDE_KB]]\n", argv[0]);
		return 2;
	}
	touches = argc > 5 ? strtol(argv[5], NULL, 0) : 400;
	stride = (argc > 6 ? strtoul(argv[6], NULL, 0) : 1024) * 1024;
	if (ff_begin("mmap-miss", &sz))
		return 0;	/* skipped, and said why */
	old_ra = ff_set_read_ahead_kb(argv[3], READ_AHEAD_KB);
	dump = ff_dump_open(argv[4], "mmap-miss", argv[2], &sz);
	if (!dump) {
		ktap_result(0, 1, "mmap-miss", NULL);
		return 1;
	}
	fprintf(dump, "figure touches=%ld stride_kb=%zu read_ahead_kb=%d\n", touches,
		stride / 1024, READ_AHEAD_KB);
	exec_ra = pass(argv[1], "exec", PROT_READ | PROT_EXEC, 0, touches, stride, &sz, dump);
	ctrl_ra = pass(argv[1], "control", PROT_READ, 0, touches, stride, &sz, dump);
	if (pass(argv[1], "balanced", PROT_READ, 1, touches, stride, &sz, dump) < 0)
		ctrl_ra = -1;
	fclose(dump);
	if (old_ra >= 0)
		ff_set_read_ahead_kb(argv[3], old_ra);
	ktap_result(exec_ra >= 0 && ctrl_ra >= 0, 1, "mmap-miss", NULL);
	return exec_ra >= 0 && ctrl_ra >= 0 ? 0 : 1;
}
