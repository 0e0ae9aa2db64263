// SPDX-License-Identifier: GPL-2.0
/*
 * Benchmark workload: NPROC processes, each running code from NIMG images
 * and naming it in a perf map of NLINES lines, with the images either
 * non-ELF files mapped PROT_EXEC (perf's new fallback) or anonymous
 * executable memory (perf's existing perf map path). Same code, same perf
 * map contents, so 'perf report' does the same work but for the path taken.
 *
 * usage: mkprofile file|anon NPROC NIMG NLINES SECONDS DIR
 * The perf maps are left in /tmp for the report; their pids are printed.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>

#define SLOT	16UL

static volatile sig_atomic_t done;

static void on_alarm(int sig)
{
	(void)sig;
	done = 1;
}

typedef unsigned long (*leaf_fn)(unsigned long n);

static __attribute__((noinline, no_sanitize("address", "undefined")))
unsigned long leaf(unsigned long n)
{
	unsigned long i, x = 0;

	for (i = 0; i < n; i++) {
		x += i;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

static void run(const char *kind, int nimg, unsigned long nlines, int secs, const char *dir,
		int proc)
{
	unsigned long per_img = (nlines + nimg - 1) / nimg, i;
	size_t len = 0x10000;
	char path[4096];
	char **base = calloc(nimg, sizeof(*base));
	FILE *map;
	int n;

	if (per_img * SLOT + 0x1000 > len)
		len = (per_img * SLOT + 0x1000 + 0xfff) & ~0xfffUL;
	char *img = calloc(1, len);

	memcpy(img, "BENCHIMG", 8);
	for (i = 0; i < 0x200; i += 0x100)
		memcpy(img + 0x1000 + i, (void *)leaf, 0x100);
	for (n = 0; n < nimg; n++) {
		if (!strcmp(kind, "file")) {
			int fd;

			snprintf(path, sizeof(path), "%s/img-%d-%d.bin", dir, proc, n);
			fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
			if (fd < 0 || write(fd, img, len) != (ssize_t)len)
				exit(1);
			base[n] = mmap(NULL, len, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
			close(fd);
		} else {
			base[n] = mmap(NULL, len, PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (base[n] != MAP_FAILED) {
				memcpy(base[n], img, len);
				mprotect(base[n], len, PROT_READ | PROT_EXEC);
			}
		}
		if (base[n] == MAP_FAILED)
			exit(1);
		__builtin___clear_cache(base[n], base[n] + len);
	}

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", getpid());
	map = fopen(path, "w");
	if (!map)
		exit(1);
	for (n = 0; n < nimg; n++) {
		for (i = 0; i < per_img; i++)
			fprintf(map, "%lx %lx bench_%d_%lu\n",
				(unsigned long)(base[n] + 0x1000 + i * SLOT), SLOT, n, i);
	}
	fclose(map);

	signal(SIGALRM, on_alarm);
	alarm(secs);
	while (!done) {
		for (n = 0; n < nimg && !done; n++)
			((leaf_fn)(base[n] + 0x1000))(20000);
	}
	free(img);
	exit(0);
}

int main(int argc, char **argv)
{
	int nproc, nimg, secs, p;
	unsigned long nlines;

	if (argc != 7) {
		fprintf(stderr, "usage: %s file|anon NPROC NIMG NLINES SECONDS DIR\n", argv[0]);
		return 2;
	}
	nproc = atoi(argv[2]);
	nimg = atoi(argv[3]);
	nlines = strtoul(argv[4], NULL, 0);
	secs = atoi(argv[5]);
	for (p = 0; p < nproc; p++) {
		pid_t pid;

		fflush(stdout);	/* or children flush the parent's buffer too */
		pid = fork();

		if (pid == 0)
			run(argv[1], nimg, nlines, secs, argv[6], p);
		printf("%d\n", pid);
	}
	while (wait(NULL) > 0)
		;
	return 0;
}
