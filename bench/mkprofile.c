// SPDX-License-Identifier: GPL-2.0
/*
 * Benchmark workload: NPROC processes, each running code from NIMG images
 * and naming it in a perf map of NLINES lines, with the images either
 * non-ELF files mapped PROT_EXEC (perf's new fallback) or anonymous
 * executable memory (perf's existing perf map path). Same code, same perf
 * map contents, so 'perf report' does the same work but for the path taken.
 *
 * usage: mkprofile file|shared|anon NPROC NIMG NLINES SECONDS DIR
 * file: each process maps images of its own; shared: the same images, mapped
 * by every process. The perf maps are left in /tmp for the report; their pids
 * are printed.
 */
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
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

/* An image with the code at 0x1000, long enough for NLINES / NIMG slots */
static char *make_image(int nimg, unsigned long nlines, size_t *lenp)
{
	unsigned long per_img = (nlines + nimg - 1) / nimg, i;
	size_t len = 0x10000;
	char *img;

	if (per_img * SLOT + 0x1000 > len)
		len = (per_img * SLOT + 0x1000 + 0xfff) & ~0xfffUL;
	img = calloc(1, len);
	if (!img)
		exit(1);
	memcpy(img, "BENCHIMG", 8);
	for (i = 0; i < 0x200; i += 0x100)
		memcpy(img + 0x1000 + i, (void *)leaf, 0x100);
	*lenp = len;
	return img;
}

/* The path of image @n of process @proc (-1: the images all map, shared) */
static void image_path(char *path, size_t sz, const char *dir, int proc, int n)
{
	if (proc < 0)
		snprintf(path, sz, "%s/img-shared-%d.bin", dir, n);
	else
		snprintf(path, sz, "%s/img-%d-%d.bin", dir, proc, n);
}

static void write_image(const char *path, const char *img, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	if (fd < 0 || write(fd, img, len) != (ssize_t)len)
		exit(1);
	close(fd);
}

static void run(const char *kind, int nimg, unsigned long nlines, int secs, const char *dir,
		int proc)
{
	unsigned long per_img = (nlines + nimg - 1) / nimg, i;
	bool shared = !strcmp(kind, "shared");
	char **base = calloc(nimg, sizeof(*base));
	char path[4096];
	size_t len;
	char *img = make_image(nimg, nlines, &len);
	FILE *map;
	int n;

	for (n = 0; n < nimg; n++) {
		if (shared || !strcmp(kind, "file")) {
			int fd;

			image_path(path, sizeof(path), dir, shared ? -1 : proc, n);
			if (!shared)
				write_image(path, img, len);
			fd = open(path, O_RDONLY);
			if (fd < 0)
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
		fprintf(stderr, "usage: %s file|shared|anon NPROC NIMG NLINES SECONDS DIR\n", argv[0]);
		return 2;
	}
	nproc = atoi(argv[2]);
	nimg = atoi(argv[3]);
	nlines = strtoul(argv[4], NULL, 0);
	secs = atoi(argv[5]);
	/* Written before any process maps them */
	if (!strcmp(argv[1], "shared")) {
		char path[4096];
		size_t len;
		char *img = make_image(nimg, nlines, &len);

		for (p = 0; p < nimg; p++) {
			image_path(path, sizeof(path), argv[6], -1, p);
			write_image(path, img, len);
		}
		free(img);
	}
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
