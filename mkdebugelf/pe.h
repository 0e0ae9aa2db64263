/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A bounds-checked reader for the parts of PE/PE32+ images that name code:
 * the section table, the export table and the COFF symbol table.
 */
#ifndef MKDEBUGELF_PE_H
#define MKDEBUGELF_PE_H

#include <stddef.h>
#include <stdint.h>

struct pe_section {
	char name[9];
	uint32_t vaddr;		/* RVA */
	uint32_t vsize;
	uint32_t raw_size;
	uint32_t raw_offset;	/* file offset */
	uint32_t flags;
};

struct pe {
	const uint8_t *buf;
	size_t len;
	uint16_t machine;
	int is_64;
	uint64_t image_base;	/* ImageBase: where it is linked to run */
	uint32_t image_size;	/* SizeOfImage: the span it is loaded in */
	unsigned int nr_sections;
	struct pe_section *sections;
	uint32_t export_rva, export_size;
	uint32_t debug_rva, debug_size;
	uint32_t except_rva, except_size;	/* x64: RUNTIME_FUNCTION entries */
	uint32_t symtab_offset, nr_syms;
	/*
	 * The file size its headers describe: the end of the headers, of each
	 * section's raw data and of the COFF symbol table. Larger than @len in
	 * a truncated file; set as far as pe_open() read, even if it failed.
	 */
	uint64_t need;
};

/* The PDB an image was linked with: its GUID and age, and the path it had */
struct pe_codeview {
	uint8_t guid[16];
	uint32_t age;
	const char *path;	/* in the image's buffer */
};

/* A symbol found in the image: a file offset, a size (0 if unknown). */
typedef int (*pe_sym_cb)(void *arg, uint64_t offset, uint64_t size, const char *name);

/* Returns 0, or -1 with *err set to a static message. */
int pe_open(struct pe *pe, const uint8_t *buf, size_t len, const char **err);
void pe_close(struct pe *pe);

/* The file offset of @rva in a section's file data, or -1. */
int64_t pe_rva_to_offset(const struct pe *pe, uint64_t rva);
/* The RVA of file offset @offset of a section's data, or -1. */
int64_t pe_offset_to_rva(const struct pe *pe, uint64_t offset);
/* Is the file offset inside an executable section's data? */
int pe_offset_is_code(const struct pe *pe, uint64_t offset);
/* One past the last byte of the executable section holding @offset. */
uint64_t pe_code_end(const struct pe *pe, uint64_t offset);

/*
 * The first executable section whose file offset and RVA differ modulo 4KiB,
 * or NULL: a loader can't mmap() it from the file (Wine copies it into
 * anonymous memory).
 */
const struct pe_section *pe_unaligned_code(const struct pe *pe);

/* Named exports of code, then COFF function symbols. Return the count or -1. */
int pe_exports(const struct pe *pe, pe_sym_cb cb, void *arg);
int pe_coff_symbols(const struct pe *pe, pe_sym_cb cb, void *arg);
/* The RVA a named export points to, code or data, or 0. */
uint32_t pe_export_rva(const struct pe *pe, const char *name);

/*
 * A function of the x64 exception directory (.pdata), at file offsets: the
 * code [start, end) of one RUNTIME_FUNCTION entry, or of several where
 * chained entries (UNW_FLAG_CHAININFO) follow the function they belong to.
 */
struct pe_func {
	uint64_t start, end;
};

/*
 * The image's functions by its exception directory, sorted by start: their
 * number (0 for an image without one: not x64, or no .pdata), *out to
 * free(); -1 if out of memory.
 */
long pe_functions(const struct pe *pe, struct pe_func **out);

/* The image's CodeView (RSDS) debug record: 0, or -1 if it has none */
int pe_codeview(const struct pe *pe, struct pe_codeview *cv);

#define PE_BUILD_ID_SIZE	16
/*
 * The image's build ID as libbfd spells a PE's: its CodeView GUID with the
 * first three fields in big-endian order, the age left out. 0, or -1 for an
 * image without a CodeView record.
 */
int pe_build_id(const struct pe *pe, uint8_t id[PE_BUILD_ID_SIZE]);

#endif
