// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for the perf map fallback, linked against the objects of
 * the patched perf built by 'make asan' (ASan + UBSan).
 *
 * Each input becomes the perf map of a process, and addresses across a
 * mapping of it are resolved the way samples are: a symbol found must have a
 * name and contain the address it was found for (a zero-size one only its
 * start, as symbols__find() matches it). The mapping is anonymous memory
 * first (perf's perf map path), then a non-ELF file mapped over it (the
 * fallback), then the file again over its second half.
 *
 * Processes get pids above the kernel's pid_max, so no real process's
 * /tmp/perf-PID.map is ever touched, and a new pid each run, since the
 * fallback reads a process's perf map once.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include "util/addr_location.h"
#include "util/debug.h"
#include "util/dso.h"
#include "util/env.h"
#include "util/event.h"
#include "util/machine.h"
#include "util/map.h"
#include "util/symbol.h"
#include "util/thread.h"

#define MAP_START	0x7f0000000000ULL
#define MAP_LEN		0x10000ULL
#define FIRST_PID	(1 << 23)	/* above PID_MAX_LIMIT (4M) */

static struct perf_env host_env;
static struct machine *machine;
static char image[64];
static int next_pid = FIRST_PID;
static unsigned long found;	/* lookups that named a symbol, printed at exit */

static void at_exit(void)
{
	fprintf(stderr, "perf_map_fuzz: %lu lookups resolved to a symbol\n", found);
	unlink(image);
}

/* Map @name at @start and resolve addresses across the process. */
static int map_and_resolve(struct thread *thread, const char *name, u64 start,
			   u64 len, u64 pgoff)
{
	/* As an mmap event with the file's inode gives it: objects without one aren't named */
	struct dso_id id = { .maj = 0, .min = 1, .ino = 1, .mmap2_valid = true, };
	struct map *map;
	int i, err = -1;

	map = map__new(machine, start, len, pgoff, &id, PROT_READ | PROT_EXEC,
		       MAP_PRIVATE, name, thread);
	if (map && !thread__insert_map(thread, map)) {
		for (i = 0; i < 64; i++) {
			u64 addr = MAP_START + (MAP_LEN / 64) * i + i * 7;
			struct addr_location al;

			addr_location__init(&al);
			if (thread__find_symbol(thread, PERF_RECORD_MISC_USER, addr, &al)) {
				u64 rel = map__map_ip(al.map, addr);

				if (rel < al.sym->start || !al.sym->name[0] ||
				    (rel >= al.sym->end && rel != al.sym->start))
					abort();
				found++;
			}
			addr_location__exit(&al);
		}
		err = 0;
	}
	map__put(map);
	return err;
}

static void check_lookups(const uint8_t *data, size_t size)
{
	pid_t pid = next_pid++;
	struct thread *thread;
	char path[64];
	int fd;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", pid);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		unlink(path);
		return;
	}
	close(fd);

	thread = machine__findnew_thread(machine, pid, pid);
	if (map_and_resolve(thread, "//anon", MAP_START, MAP_LEN, 0) == 0 &&
	    map_and_resolve(thread, image, MAP_START, MAP_LEN, 0x1000) == 0)
		map_and_resolve(thread, image, MAP_START + MAP_LEN / 2, MAP_LEN / 2, 0x2000);
	machine__remove_thread(machine, thread);
	thread__put(thread);
	unlink(path);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc __maybe_unused, char ***argv __maybe_unused)
{
	int fd;

	verbose = -1;	/* no warnings for the hostile files fuzzing makes */
	perf_env__init(&host_env);
	symbol__init(&host_env);
	machine = machine__new_host(&host_env);
	strcpy(image, "/tmp/perf-fuzz-image-XXXXXX");
	fd = mkstemp(image);
	if (!machine || fd < 0 || write(fd, "NOTELF", 6) != 6)
		abort();
	close(fd);
	atexit(at_exit);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check_lookups(data, size);
	return 0;
}
