// SPDX-License-Identifier: GPL-2.0
/*
 * ReadyToRun reader, the ECMA-335 metadata (ECMA-335 II.24): the CLI header,
 * the #~ tables' schema, rows and coded indices, the #Strings heap, and the
 * metadata of the assemblies a ReadyToRun signature refers to.
 */
#include <stdlib.h>
#include <string.h>
#include "r2r_priv.h"

enum { C_END, U16, U32, STR, GUID, BLOB };
#define T(t)	(0x40 + (t))		/* a row of table t */
#define CI(k)	(0x80 + (k))		/* a coded index */

enum {
	TYPEDEFORREF, HASCONSTANT, HASCUSTOMATTR, HASFIELDMARSHAL, HASDECLSECURITY,
	MEMBERREFPARENT, HASSEMANTICS, METHODDEFORREF, MEMBERFORWARDED, IMPLEMENTATION,
	CUSTOMATTRTYPE, RESOLUTIONSCOPE, TYPEORMETHODDEF, NR_CODED
};

static const struct {
	uint8_t bits, n, t[22];
} coded[NR_CODED] = {
	[TYPEDEFORREF] = { 2, 3, { 0x02, 0x01, 0x1b } },
	[HASCONSTANT] = { 2, 3, { 0x04, 0x08, 0x17 } },
	[HASCUSTOMATTR] = { 5, 22, { 0x06, 0x04, 0x01, 0x02, 0x08, 0x09, 0x0a, 0x00, 0x0e, 0x17,
				     0x14, 0x11, 0x1a, 0x1b, 0x20, 0x23, 0x26, 0x27, 0x28, 0x2a,
				     0x2c, 0x2b } },
	[HASFIELDMARSHAL] = { 1, 2, { 0x04, 0x08 } },
	[HASDECLSECURITY] = { 2, 3, { 0x02, 0x06, 0x20 } },
	[MEMBERREFPARENT] = { 3, 5, { 0x02, 0x01, 0x1a, 0x06, 0x1b } },
	[HASSEMANTICS] = { 1, 2, { 0x14, 0x17 } },
	[METHODDEFORREF] = { 1, 2, { 0x06, 0x0a } },
	[MEMBERFORWARDED] = { 1, 2, { 0x04, 0x06 } },
	[IMPLEMENTATION] = { 2, 3, { 0x26, 0x23, 0x27 } },
	[CUSTOMATTRTYPE] = { 3, 5, { NONE, NONE, 0x06, 0x0a, NONE } },
	[RESOLUTIONSCOPE] = { 2, 4, { 0x00, 0x1a, 0x23, 0x01 } },
	[TYPEORMETHODDEF] = { 1, 2, { 0x02, 0x06 } },
};

/* The columns of each table, ECMA-335 II.22. */
static const uint8_t schema[NR_TABLES][10] = {
	[0x00] = { U16, STR, GUID, GUID, GUID },			/* Module */
	[0x01] = { CI(RESOLUTIONSCOPE), STR, STR },			/* TypeRef */
	[0x02] = { U32, STR, STR, CI(TYPEDEFORREF), T(0x04), T(0x06) },	/* TypeDef */
	[0x03] = { T(0x04) },						/* FieldPtr */
	[0x04] = { U16, STR, BLOB },					/* Field */
	[0x05] = { T(0x06) },						/* MethodPtr */
	[0x06] = { U32, U16, U16, STR, BLOB, T(0x08) },			/* MethodDef */
	[0x07] = { T(0x08) },						/* ParamPtr */
	[0x08] = { U16, U16, STR },					/* Param */
	[0x09] = { T(0x02), CI(TYPEDEFORREF) },				/* InterfaceImpl */
	[0x0a] = { CI(MEMBERREFPARENT), STR, BLOB },			/* MemberRef */
	[0x0b] = { U16, CI(HASCONSTANT), BLOB },			/* Constant */
	[0x0c] = { CI(HASCUSTOMATTR), CI(CUSTOMATTRTYPE), BLOB },	/* CustomAttribute */
	[0x0d] = { CI(HASFIELDMARSHAL), BLOB },				/* FieldMarshal */
	[0x0e] = { U16, CI(HASDECLSECURITY), BLOB },			/* DeclSecurity */
	[0x0f] = { U16, U32, T(0x02) },					/* ClassLayout */
	[0x10] = { U32, T(0x04) },					/* FieldLayout */
	[0x11] = { BLOB },						/* StandAloneSig */
	[0x12] = { T(0x02), T(0x14) },					/* EventMap */
	[0x13] = { T(0x14) },						/* EventPtr */
	[0x14] = { U16, STR, CI(TYPEDEFORREF) },			/* Event */
	[0x15] = { T(0x02), T(0x17) },					/* PropertyMap */
	[0x16] = { T(0x17) },						/* PropertyPtr */
	[0x17] = { U16, STR, BLOB },					/* Property */
	[0x18] = { U16, T(0x06), CI(HASSEMANTICS) },			/* MethodSemantics */
	[0x19] = { T(0x02), CI(METHODDEFORREF), CI(METHODDEFORREF) },	/* MethodImpl */
	[0x1a] = { STR },						/* ModuleRef */
	[0x1b] = { BLOB },						/* TypeSpec */
	[0x1c] = { U16, CI(MEMBERFORWARDED), STR, T(0x1a) },		/* ImplMap */
	[0x1d] = { U32, T(0x04) },					/* FieldRVA */
	[0x1e] = { U32, U32 },						/* EncLog */
	[0x1f] = { U32 },						/* EncMap */
	[0x20] = { U32, U16, U16, U16, U16, U32, BLOB, STR, STR },	/* Assembly */
	[0x21] = { U32 },						/* AssemblyProcessor */
	[0x22] = { U32, U32, U32 },					/* AssemblyOS */
	[0x23] = { U16, U16, U16, U16, U32, BLOB, STR, STR, BLOB },	/* AssemblyRef */
	[0x24] = { U32, T(0x23) },					/* AssemblyRefProcessor */
	[0x25] = { U32, U32, U32, T(0x23) },				/* AssemblyRefOS */
	[0x26] = { U32, STR, BLOB },					/* File */
	[0x27] = { U32, U32, STR, STR, CI(IMPLEMENTATION) },		/* ExportedType */
	[0x28] = { U32, U32, STR, CI(IMPLEMENTATION) },			/* ManifestResource */
	[0x29] = { T(0x02), T(0x02) },					/* NestedClass */
	[0x2a] = { U16, U16, CI(TYPEORMETHODDEF), STR },		/* GenericParam */
	[0x2b] = { CI(METHODDEFORREF), BLOB },				/* MethodSpec */
	[0x2c] = { T(0x2a), CI(TYPEDEFORREF) },				/* GenericParamConstraint */
};

/* Metadata: a column of a row, 0 if there is no such row. */
uint32_t md_get(const struct md *md, unsigned int t, uint32_t row, unsigned int col)
{
	const uint8_t *p;

	if (!md || !row || row > md->rows[t])
		return 0;
	p = md->p + md->start[t] + (uint64_t)(row - 1) * md->row_size[t] + md->col_off[t][col];
	return md->col_w[t][col] == 2 ? le16(p) : le32(p);
}

const char *md_str(const struct md *md, uint32_t idx)
{
	const char *s;

	if (!md || idx >= md->str_len)
		return NULL;
	s = (const char *)md->p + md->str_off + idx;
	if (!memchr(s, '\0', md->str_len - idx))
		return NULL;
	return s;
}

/* Metadata: the root, the #~ and heap streams, the table layout. */
int md_open(struct md *md, const struct pe *pe, uint32_t rva, uint32_t size,
		   const char **err)
{
	uint32_t off, ver_len, tab = 0, tab_len = 0, heaps, i, j, k;
	uint16_t nr_streams;
	uint64_t valid, pos;
	uint8_t str_w, guid_w, blob_w;
	const uint8_t *p;

	memset(md, 0, sizeof(*md));
	*err = "metadata outside the image's sections";
	md->p = at(pe, rva, size);
	if (!md->p || size < 20)
		return -1;
	md->len = size;
	p = md->p;
	*err = "no metadata signature (BSJB)";
	if (le32(p) != 0x424a5342)
		return -1;
	*err = "corrupt metadata root";
	ver_len = le32(p + 12);
	if (ver_len > size - 20)
		return -1;
	off = 16 + ((ver_len + 3) & ~3u);
	if (off + 4 > size)
		return -1;
	nr_streams = le16(p + off + 2);
	off += 4;
	for (i = 0; i < nr_streams; i++) {
		uint32_t s_off, s_size;
		const char *name;
		size_t name_len;

		if (off + 8 >= size)
			return -1;
		s_off = le32(p + off);
		s_size = le32(p + off + 4);
		name = (const char *)p + off + 8;
		name_len = strnlen(name, size - off - 8 < 32 ? size - off - 8 : 32);
		if (name_len >= 32 || name_len == size - off - 8)
			return -1;
		off += 8 + ((name_len + 4) & ~3u);
		if (s_off > size || s_size > size - s_off)
			return -1;
		if (!strcmp(name, "#~") || !strcmp(name, "#-")) {
			tab = s_off;
			tab_len = s_size;
		} else if (!strcmp(name, "#Strings")) {
			md->str_off = s_off;
			md->str_len = s_size;
		} else if (!strcmp(name, "#Blob")) {
			md->blob_off = s_off;
			md->blob_len = s_size;
		}
	}
	*err = "no metadata tables (#~ stream)";
	if (!tab_len || tab_len < 24)
		return -1;
	p = md->p + tab;
	heaps = p[6];
	str_w = heaps & 1 ? 4 : 2;
	guid_w = heaps & 2 ? 4 : 2;
	blob_w = heaps & 4 ? 4 : 2;
	valid = (uint64_t)le32(p + 8) | (uint64_t)le32(p + 12) << 32;
	*err = "metadata has tables this reader doesn't know";
	if (valid >> NR_TABLES)
		return -1;
	pos = 24;
	*err = "truncated metadata table header";
	for (i = 0; i < NR_TABLES; i++) {
		if (!(valid >> i & 1))
			continue;
		if (pos + 4 > tab_len)
			return -1;
		md->rows[i] = le32(p + pos);
		pos += 4;
	}
	if (heaps & 0x40)
		pos += 4;
	*err = "metadata with pointer tables (uncompressed #-) is not supported";
	if (md->rows[T_METHODPTR] || md->rows[0x03] || md->rows[0x07])
		return -1;

	for (i = 0; i < NR_TABLES; i++) {
		uint32_t w = 0, col_off = 0;

		for (j = 0; schema[i][j] != C_END; j++) {
			uint8_t kind = schema[i][j];

			if (kind == U16) {
				w = 2;
			} else if (kind == U32) {
				w = 4;
			} else if (kind == STR) {
				w = str_w;
			} else if (kind == GUID) {
				w = guid_w;
			} else if (kind == BLOB) {
				w = blob_w;
			} else if (kind >= CI(0)) {
				uint32_t max = 0, c = kind - CI(0);

				for (k = 0; k < coded[c].n; k++)
					if (coded[c].t[k] != NONE && md->rows[coded[c].t[k]] > max)
						max = md->rows[coded[c].t[k]];
				w = max < (1u << (16 - coded[c].bits)) ? 2 : 4;
			} else {
				w = md->rows[kind - T(0)] < 0x10000 ? 2 : 4;
			}
			md->col_off[i][j] = col_off;
			md->col_w[i][j] = w;
			col_off += w;
		}
		md->row_size[i] = col_off;
		md->start[i] = tab + pos;
		if ((uint64_t)md->rows[i] * col_off > tab_len - pos) {
			*err = "metadata tables run past their stream";
			return -1;
		}
		pos += (uint64_t)md->rows[i] * col_off;
	}

	/* Each method's type: types own runs of methods, from their MethodList. */
	*err = "out of memory";
	md->owner = calloc(md->rows[T_METHODDEF] + 1, sizeof(*md->owner));
	md->enclosing = calloc(md->rows[T_TYPEDEF] + 1, sizeof(*md->enclosing));
	if (!md->owner || !md->enclosing)
		return -1;
	for (i = 1, k = 1; i <= md->rows[T_TYPEDEF]; i++) {
		uint32_t first = md_get(md, T_TYPEDEF, i, 5);
		uint32_t end = i < md->rows[T_TYPEDEF] ? md_get(md, T_TYPEDEF, i + 1, 5) :
			       md->rows[T_METHODDEF] + 1;

		if (end > md->rows[T_METHODDEF] + 1)
			end = md->rows[T_METHODDEF] + 1;
		/* Runs in order: a hostile table costs no more than a good one. */
		for (j = first > k ? first : k; j < end; j++)
			md->owner[j] = i;
		if (end > k)
			k = end;
	}
	for (i = 1; i <= md->rows[T_NESTEDCLASS]; i++) {
		uint32_t nested = md_get(md, T_NESTEDCLASS, i, 0);
		uint32_t outer = md_get(md, T_NESTEDCLASS, i, 1);

		if (nested && nested <= md->rows[T_TYPEDEF] && outer <= md->rows[T_TYPEDEF] &&
		    outer != nested)
			md->enclosing[nested] = outer;
	}
	*err = NULL;
	return 0;
}

void md_close(struct md *md)
{
	free(md->owner);
	free(md->enclosing);
	md->owner = md->enclosing = NULL;
}

/* The CLI header's RVA and size, or 0. */
uint32_t cli_header(const struct pe *pe, uint32_t *size)
{
	const uint8_t *hdr = pe->buf;
	uint32_t lfanew, rva, nr_dirs;
	uint64_t opt, dir;
	uint16_t opt_size;

	/* pe_open() checked the headers up to the optional header's magic. */
	lfanew = le32(hdr + 0x3c);
	opt = (uint64_t)lfanew + 24;
	opt_size = le16(hdr + lfanew + 20);
	if (opt + (pe->is_64 ? 112 : 96) > pe->len)
		return 0;
	nr_dirs = le32(hdr + opt + (pe->is_64 ? 108 : 92));
	dir = opt + (pe->is_64 ? 112 : 96) + DIR_CLI * 8;
	if (nr_dirs <= DIR_CLI || dir + 8 > opt + opt_size || dir + 8 > pe->len)
		return 0;
	rva = le32(hdr + dir);
	*size = le32(hdr + dir + 4);
	return rva;
}

/*
 * The module a ReadyToRun signature's module index names: 0 the image's
 * own, 1 to N its AssemblyRef rows (whose images @load finds); else NULL.
 * Indices are the image's, whichever module's signature holds them.
 */
const struct md *module(const struct md *md, uint32_t index)
{
	struct r2r *r = md ? md->r : NULL;
	const uint8_t *buf, *p;
	const char *name, *err;
	uint32_t cli, size;
	struct ref *ref;
	size_t len;

	if (!r || !index)
		return r ? &r->md : NULL;
	if (!r->load || !r->refs || index > r->md.rows[T_ASSEMBLYREF])
		return NULL;
	ref = &r->refs[index];
	if (ref->tried)
		return ref->ok ? &ref->md : NULL;
	ref->tried = 1;
	name = md_str(&r->md, md_get(&r->md, T_ASSEMBLYREF, index, 6));
	buf = name && *name ? r->load(r->load_arg, name, &len) : NULL;
	if (!buf || pe_open(&ref->pe, buf, len, &err))
		return NULL;
	cli = cli_header(&ref->pe, &size);
	p = cli ? at(&ref->pe, cli, 72) : NULL;
	if (!p || md_open(&ref->md, &ref->pe, le32(p + 8), le32(p + 12), &err))
		return NULL;
	ref->md.r = r;
	ref->ok = 1;
	return &ref->md;
}
