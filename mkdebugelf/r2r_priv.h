/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the parts of the ReadyToRun reader share: r2r.c (the R2R header and
 * its sections: NativeFormat data, entry points, runtime functions) calls
 * r2r_sig.c (signatures, turned into names), and both call r2r_md.c (the
 * ECMA-335 metadata tables and heaps, the CLI header, the modules a
 * signature refers to). Every byte is read through the section table, and
 * every read is checked.
 */
#ifndef MKDEBUGELF_R2R_PRIV_H
#define MKDEBUGELF_R2R_PRIV_H

#include <stdint.h>
#include "r2r.h"

#define DIR_CLI			14
#define MAX_NAME		2048
#define MAX_DEPTH		32
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))

/* Method signature flags (READYTORUN_METHOD_SIG_*). */
#define MSIG_METHOD_INST	0x04
#define MSIG_SLOT		0x08
#define MSIG_MEMBERREF		0x10
#define MSIG_CONSTRAINED	0x20
#define MSIG_OWNER_TYPE		0x40
#define MSIG_UPDATE_CONTEXT	0x80

/* ECMA-335 metadata tables and column kinds. */
#define NR_TABLES	0x2d
#define T_TYPEREF	0x01
#define T_TYPEDEF	0x02
#define T_FIELD		0x04
#define T_METHODPTR	0x05
#define T_METHODDEF	0x06
#define T_PARAM		0x08
#define T_MEMBERREF	0x0a
#define T_EVENT		0x14
#define T_PROPERTY	0x17
#define T_MODULEREF	0x1a
#define T_TYPESPEC	0x1b
#define T_ASSEMBLYREF	0x23
#define T_NESTEDCLASS	0x29
#define T_GENERICPARAM	0x2a
#define NONE		0xff

struct r2r;

/* The metadata of one module: its tables, row by row, and its heaps. */
struct md {
	struct r2r *r;			/* the ReadyToRun image it is read for */
	const uint8_t *p;		/* the metadata root, in the mapped file */
	uint32_t len;
	uint32_t str_off, str_len, blob_off, blob_len;
	uint32_t rows[NR_TABLES], row_size[NR_TABLES], start[NR_TABLES];
	uint8_t col_off[NR_TABLES][10], col_w[NR_TABLES][10];
	uint32_t *owner;		/* MethodDef row -> TypeDef row */
	uint32_t *enclosing;		/* TypeDef row -> enclosing TypeDef row */
};

/* A byte cursor over a signature. */
struct cur {
	const uint8_t *p, *end;
	int bad;
};

/* A name being built; too long a name is cut, and says so. */
struct name {
	char s[MAX_NAME];
	size_t len;
	int unknown;			/* a part of it could not be resolved */
	int il;				/* types as in parameters: ILASM's names */
};

struct method {
	uint32_t rf;			/* index of its first runtime function */
	char *name;
};

/* An assembly the image refers to, read for names: an AssemblyRef row. */
struct ref {
	struct pe pe;
	struct md md;
	int tried, ok;
};

struct r2r {
	const struct pe *pe;
	struct md md;
	r2r_load_cb load;
	void *load_arg;
	struct ref *refs;		/* by AssemblyRef row */
	int arm64;
	uint32_t nr_rf, rf_rva, rf_entry;
	struct method *m;
	size_t nr_m, alloc_m;
	struct r2r_stats *st;
};

static inline uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline uint16_t le16(const uint8_t *p)
{
	return p[0] | p[1] << 8;
}

/* The file bytes of @len bytes at @rva, all in one section's data, or NULL. */
static inline const uint8_t *at(const struct pe *pe, uint64_t rva, uint64_t len)
{
	unsigned int i;

	for (i = 0; i < pe->nr_sections; i++) {
		const struct pe_section *s = &pe->sections[i];

		if (rva >= s->vaddr && rva - s->vaddr < s->raw_size &&
		    len <= s->raw_size - (rva - s->vaddr))
			return pe->buf + s->raw_offset + (rva - s->vaddr);
	}
	return NULL;
}

/* r2r_md.c: metadata */
int md_open(struct md *md, const struct pe *pe, uint32_t rva, uint32_t size,
	    const char **err);
void md_close(struct md *md);
/* Column @col of row @row (from 1) of table @t, or 0 */
uint32_t md_get(const struct md *md, unsigned int t, uint32_t row, unsigned int col);
/* The #Strings heap's string at @idx, or NULL */
const char *md_str(const struct md *md, uint32_t idx);
/* The CLI header's RVA and size, or 0 */
uint32_t cli_header(const struct pe *pe, uint32_t *size);
/* The metadata of a signature's module index: the image's own or a reference's */
const struct md *module(const struct md *md, uint32_t index);

/* r2r_sig.c: signatures and names */
uint32_t sig_uint(struct cur *c);
void put(struct name *n, const char *s);
void put_unknown(struct name *n);
void put_str(struct name *n, const struct md *md, uint32_t idx);
void put_tdor(struct name *n, const struct md *md, uint32_t tok, int depth);
void put_type(struct name *n, const struct md *md, struct cur *c, int depth);
void put_params(struct name *n, const struct md *md, uint32_t blob);
void put_methoddef(struct name *n, const struct md *md, uint32_t row, int owner);

#endif
