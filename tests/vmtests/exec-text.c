// SPDX-License-Identifier: GPL-2.0
/*
 * exec-text: map a file of RET instructions PROT_EXEC with a cold page cache,
 * call into it at evenly spread offsets (fewer than 100 cold faults), then dump
 * what backs the mapping: pagemap PFNs, kpageflags and the probe's PTE_CONT bit.
 * The host decides what the figures mean.
 *
 * With a HOOK, the program runs it (HOOK ARGS... PID) once the dump is written,
 * the mapping still in place, its output appended to the dump, and records its
 * exit status there ("W hook status=N"): the thpmaps check runs the tree's
 * tools/mm/thpmaps on the same mapping this way.
 *
 * usage: exec-text FILE FS BLOCKDEV DUMP [TOUCHES [HOOK ARGS...]]
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ffguest.h"

#define READ_AHEAD_KB 128

typedef void (*stub_fn)(void);

static const char *const events[] = {
	"readahead/page_cache_ra_order",
	"filemap/mm_filemap_add_to_page_cache",
	NULL,
};

static long faults(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_majflt + ru.ru_minflt;
}

/* Run argv[0..] with this process's pid appended, its output going to @out;
 * returns its exit status, or -1 with errno set. */
static int run_hook(char **argv, int argc, FILE *out)
{
	char pid[24], **args;
	int i, status;
	pid_t child;

	args = calloc(argc + 2, sizeof(*args));
	if (!args)
		return -1;
	for (i = 0; i < argc; i++)
		args[i] = argv[i];
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	args[argc] = pid;
	fflush(out);
	child = fork();
	if (child < 0) {
		free(args);
		return -1;
	}
	if (child == 0) {
		dup2(fileno(out), 1);
		dup2(fileno(out), 2);
		execv(args[0], args);
		fprintf(stderr, "exec %s: %s\n", args[0], strerror(errno));
		_exit(127);
	}
	free(args);
	if (waitpid(child, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

int main(int argc, char **argv)
{
	struct ff_sizes sz;
	struct stat st;
	long touches, i, before, after, present, old_ra;
	size_t stride;
	char *text;
	FILE *dump;
	int fd;

	if (argc < 5) {
		fprintf(stderr, "usage: %s FILE FS BLOCKDEV DUMP [TOUCHES]\n", argv[0]);
		return 2;
	}
	touches = argc > 5 ? strtol(argv[5], NULL, 0) : 64;
	if (ff_begin("exec-text", &sz))
		return 0;	/* skipped, and said why */
	old_ra = ff_set_read_ahead_kb(argv[3], READ_AHEAD_KB);
	ktap_diag("read_ahead_kb %d (was %ld) on %s", READ_AHEAD_KB, old_ra, argv[3]);
	fd = ff_open_cold(argv[1], &st);
	if (fd < 0) {
		ktap_result(0, 1, "exec-text", NULL);
		return 1;
	}
	text = mmap(NULL, st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	if (text == MAP_FAILED) {
		ktap_diag("mmap: %s", strerror(errno));
		ktap_result(0, 1, "exec-text", NULL);
		return 1;
	}
	stride = st.st_size / touches;
	ff_trace_start(events);
	before = faults();
	for (i = 0; i < touches; i++) {
		/* the middle of each stride, on an instruction boundary */
		size_t off = (i * stride + stride / 2) & ~(size_t)3;

		((stub_fn)(text + off))();
	}
	after = faults();

	dump = ff_dump_open(argv[4], "exec-text", argv[2], &sz);
	if (!dump) {
		ktap_result(0, 1, "exec-text", NULL);
		return 1;
	}
	fprintf(dump, "figure touches=%ld faults=%ld read_ahead_kb=%d file_size=%lld\n",
		touches, after - before, READ_AHEAD_KB, (long long)st.st_size);
	ff_trace_stop(dump, "text", events, (unsigned long)st.st_ino);
	present = ff_dump_mapping(dump, "text", text, st.st_size, sz.page);
	if (argc > 6) {
		int status = run_hook(argv + 6, argc - 6, dump);

		fprintf(dump, "W hook status=%d\n", status);
		ktap_diag("hook %s exited %d", argv[6], status);
	}
	fclose(dump);
	if (old_ra >= 0)
		ff_set_read_ahead_kb(argv[3], old_ra);
	ktap_diag("touches %ld faults %ld present pages %ld", touches, after - before, present);
	ktap_result(present > 0, 1, "exec-text", NULL);
	return present > 0 ? 0 : 1;
}
