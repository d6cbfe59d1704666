/*
 * A hostile reproducer: it exits 7, and leaves a detached process behind
 * (double fork, a session of its own) that waits for the driver to write its
 * dump, then renames 100 MB of its own over it. Before it exits it says a BUG
 * on the kernel log with rich markup in it, and prints terminal escapes.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void forge(const char *dump)
{
	char big[256];
	snprintf(big, sizeof(big), "%s.forged", dump);
	for (int i = 0; i < 600; i++) {         /* up to a minute */
		struct stat st;
		if (stat(dump, &st) == 0 && st.st_size > 0) {
			int fd = open(big, O_WRONLY | O_CREAT | O_TRUNC, 0644);
			if (fd < 0)
				return;
			char line[128];
			int n = snprintf(line, sizeof(line), "figure exit_status=0\n");
			write(fd, line, n);
			static char junk[1 << 20];
			memset(junk, 'X', sizeof(junk));
			for (int mb = 0; mb < 100; mb++)
				write(fd, junk, sizeof(junk));
			close(fd);
			rename(big, dump);
			return;
		}
		usleep(100000);
	}
}

int main(void)
{
	const char *fs = getenv("FF_FS");
	char dump[256];
	snprintf(dump, sizeof(dump), "/tmp/out/repro-%s.dump", fs ? fs : "ext4");
	if (fork() == 0) {
		setsid();
		if (fork() == 0) {
			forge(dump);
			_exit(0);
		}
		_exit(0);
	}
	int k = open("/dev/kmsg", O_WRONLY);
	if (k >= 0) {
		const char *bug = "BUG: foliofarm hostile [/] [bold]x[/bold] \x1b]0;title\x07\n";
		write(k, bug, strlen(bug));
		close(k);
	}
	printf("hostile: \x1b]52;c;SGVsbG8=\x07 \x1b[2J [/] done\n");
	printf("forged_figure: 1\n");
	return 7;
}
