// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for perf's PE/COFF reader (util/pe.c), linked against the
 * objects of the patched perf built by 'make asan' (ASan + UBSan).
 *
 * Each input is a file (a memfd, by its /proc/self/fd path, so a crash
 * leaves nothing behind) read the way perf reads a PE file: its build ID,
 * its debug link, and its symbols, loaded three times:
 *   - into a dso of a path that does not exist: the input is the image;
 *   - into a dso named after the input itself: an input with no code is a
 *     debug file whose image is the input again;
 *   - into a dso named after $PERF_PE_FUZZ_IMAGE (a real image, if set): an
 *     input with no code is that image's debug file.
 * Every read must stay in the file (ASan), and the results must hold:
 *   - a build ID is 16 bytes;
 *   - a debug link is NUL terminated within the size given, nothing written
 *     past it, and the same whatever the buffer's size if it fits;
 *   - pe__fd() opens exactly the files starting with "MZ", and no other file
 *     gives symbols;
 *   - every symbol is named, start < end, its end in the file its offsets
 *     are in (the input, or the image), and none overlaps the next in
 *     address order but an alias at the same start.
 * A failed check aborts, which libFuzzer saves as a crash.
 */
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <linux/kernel.h>
#include "util/build-id.h"
#include "util/debug.h"
#include "util/dso.h"
#include "util/env.h"
#include "util/symbol.h"

#define NO_FILE		"/nonexistent/perf-pe-fuzz.dll"
#define GUARD		0xa5
#define GUARD_LEN	16

static struct perf_env host_env;
static int memfd = -1;
static char path[64];
static const char *image;	/* $PERF_PE_FUZZ_IMAGE */
static size_t image_size;
/* Printed at exit: how far the inputs got */
static unsigned long nr_inputs, nr_build_ids, nr_debuglinks, nr_loaded, nr_symbols;

static void at_exit(void)
{
	fprintf(stderr,
		"perf_pe_fuzz: %lu inputs, %lu build IDs, %lu debug links, %lu symbol loads, %lu symbols\n",
		nr_inputs, nr_build_ids, nr_debuglinks, nr_loaded, nr_symbols);
}

static void check_build_id(void)
{
	struct build_id bid;
	int ret;

	memset(&bid, 0, sizeof(bid));
	ret = pe__read_build_id(path, &bid);
	if (ret >= 0) {
		if (ret != 16 || bid.size != 16)
			abort();
		nr_build_ids++;
	}
}

/* The debug link read into @size bytes of @buf, guard bytes after them */
static int read_debuglink(char *buf, size_t size)
{
	size_t i;
	int ret;

	memset(buf, GUARD, size + GUARD_LEN);
	ret = pe__read_debuglink(path, buf, size);
	for (i = size; i < size + GUARD_LEN; i++) {
		if ((u8)buf[i] != GUARD)
			abort();
	}
	if (ret == 0 && !memchr(buf, '\0', size))
		abort();
	if (ret != 0 && ret != -1)
		abort();
	return ret;
}

static void check_debuglink(void)
{
	static char link[PATH_MAX + GUARD_LEN], small[8 + GUARD_LEN];
	int ret = read_debuglink(link, PATH_MAX);
	int ret_small = read_debuglink(small, 8);

	/* A name that fits in 8 bytes is read into 8 bytes, a longer one isn't */
	if ((ret == 0 && strlen(link) < 8) ? (ret_small != 0 || strcmp(link, small))
					   : ret_small == 0)
		abort();
	if (ret == 0)
		nr_debuglinks++;
}

/* Load the symbols of @fd into a dso named @name; @size: of the file their offsets are in */
static void check_symbols(const char *name, int fd, size_t size, bool pe)
{
	struct dso *dso = dso__new(name);
	struct symbol *sym, *prev = NULL;
	struct rb_node *nd;
	unsigned long nr = 0;
	int ret;

	if (!dso)
		return;
	ret = dso__load_pe_symbols(dso, fd, DSO_BINARY_TYPE__SYSTEM_PATH_DSO);
	if (!pe && ret != -1)
		abort();
	dso__for_each_symbol(dso, sym, nd) {
		if (!sym->name[0] || sym->start >= sym->end || sym->end > size)
			abort();
		if (prev && (prev->start > sym->start ||
			     (prev->start != sym->start && prev->end > sym->start)))
			abort();
		prev = sym;
		nr++;
	}
	/* The count is that of the symbols loaded, duplicates dropped */
	if (ret >= 0 ? nr != (unsigned long)ret : nr != 0)
		abort();
	if (ret >= 0)
		nr_loaded++;
	nr_symbols += nr;
	dso__put(dso);
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerInitialize(int *argc __maybe_unused, char ***argv __maybe_unused)
{
	struct stat st;

	verbose = -1;	/* no warnings for the hostile files fuzzing makes */
	perf_env__init(&host_env);
	symbol__init(&host_env);
	memfd = memfd_create("perf-pe-fuzz", MFD_CLOEXEC);
	if (memfd < 0)
		abort();
	snprintf(path, sizeof(path), "/proc/self/fd/%d", memfd);
	image = getenv("PERF_PE_FUZZ_IMAGE");
	if (image && *image) {
		if (stat(image, &st) || !S_ISREG(st.st_mode))
			abort();
		image_size = st.st_size;
	} else {
		image = NULL;
	}
	atexit(at_exit);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	bool mz = size >= 2 && !memcmp(data, "MZ", 2);
	int fd;

	if (ftruncate(memfd, 0) || pwrite(memfd, data, size, 0) != (ssize_t)size)
		abort();
	nr_inputs++;
	check_build_id();
	check_debuglink();

	fd = pe__fd(path);
	if ((fd >= 0) != mz)
		abort();
	check_symbols(NO_FILE, fd >= 0 ? fd : memfd, size, mz);
	check_symbols(path, fd >= 0 ? fd : memfd, size, mz);
	/* Offsets in the image, whose code the input can't change */
	if (image)
		check_symbols(image, fd >= 0 ? fd : memfd, max(size, image_size), mz);
	if (fd >= 0)
		close(fd);
	return 0;
}
