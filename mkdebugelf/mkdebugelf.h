/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What mkdebugelf's parts share: the symbols found for an image, the command
 * line's options, and each part's entry points. Readers: pe.c, pdb.c, r2r.c
 * (images), mapfile.c (symbol lists). syms.c holds an image's symbols (and
 * turns a live process's perf map entries into them); elf_out.c writes
 * debug files. image.c runs them for an image or a directory; live.c
 * (--pid) and anon.c (--write-perf-map) for a running process, through
 * image.c; mkdebugelf.c is the command line. Calls go that way only: no
 * part calls one that calls it back.
 */
#ifndef MKDEBUGELF_H
#define MKDEBUGELF_H

#include <stdint.h>
#include <stdio.h>
#include "pe.h"

#define MKDEBUGELF_VERSION "0.5"

extern const char *prog;

struct sym {
	uint64_t offset, size;
	char *name;
};

struct syms {
	struct sym *v;
	size_t nr, alloc;
	uint64_t limit;		/* symbols must start below this file offset */
	unsigned long skipped;
	struct pe_func *funcs;	/* the image's x64 function ranges, if used */
	size_t nr_funcs;
};

/* Add a symbol at file offset @offset (a pe_sym_cb); -1 if out of memory */
int syms_add(void *arg, uint64_t offset, uint64_t size, const char *name);
/*
 * Bound the symbols of unknown size (PE tables, PDB publics) by @pe's x64
 * function ranges in syms_finish(); -1 if out of memory
 */
int syms_use_functions(struct syms *s, const struct pe *pe);
/*
 * Sort, drop duplicates, size them: up to the next one or the code's end,
 * and for those of unknown size, within the function range they start in
 * and not into the next one (syms_use_functions())
 */
int syms_finish(struct syms *s, const struct pe *pe);
void syms_free(struct syms *s);

/* An executable mapping of an image in a live process. */
struct range {
	uint64_t start, end, pgoff;
};

/*
 * The entries of a live process's perf map @perf_map that start in one of
 * an image's @nr mappings @r, at file offsets: the number, added to @s
 * unless it is NULL, or -1
 */
long syms_add_live(struct syms *s, const struct syms *perf_map, const struct range *r,
		   size_t nr);

/* "OFFSET SIZE name" lines of @f (RVAs if @rva, into file offsets by @pe) */
int read_map(FILE *f, const char *path, struct syms *s, const struct pe *pe, int rva);

/* ELF machine and class of a PE machine, or of a name such as x86_64 */
int pe_machine(uint16_t m, int *em, int *class);
int named_machine(const char *name, int *em, int *class);
/*
 * Write the debug file @out: @s's symbols at their file offsets, or, with
 * @pe, at their addresses in @pe as linked (ImageBase + RVA), each in a
 * section whose address less its offset maps them back to file offsets;
 * with @build_id (PE_BUILD_ID_SIZE bytes), an NT_GNU_BUILD_ID note of it
 */
int write_elf(const char *out, const struct syms *s, int em, int class, const struct pe *pe,
	      const uint8_t *build_id);

struct opts {
	const char *map, *out, *root, *machine, *pdb;
	int rva, no_pe, install, verbose;
	int symfs;		/* --symfs: root, the rest of / linked in */
	int quiet;		/* -q, kept for a directory only */
	int in_dir;		/* one image of a directory: skip what isn't one */
	long write_pid;		/* --write-perf-map */
};


int mkdir_parents(char *path);
/* @path mapped read-only, *len bytes: NULL with errno set if it can't be */
const uint8_t *map_file(const char *path, size_t *len);
/* The symbols of the PDB image @pe names (or --pdb): the number, 0, or -1 */
int add_pdb(const char *image, const char *file, const struct pe *pe, struct syms *s,
	    const struct opts *o);
/* The pid process @pid has in its own pid namespace */
long ns_pid(long pid);
/* --write-perf-map: perf map lines for PE images Wine copied to anonymous memory */
int do_write_perf_map(long pid, const struct opts *o);
int do_image(const char *image, const char *file, const struct opts *o,
	     const struct syms *perf_map, const struct range *r, size_t nr);
int do_dir(const char *dir, struct opts *o);
int do_pid(long pid, const struct opts *o);

#endif
