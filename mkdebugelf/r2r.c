// SPDX-License-Identifier: GPL-2.0
/*
 * ReadyToRun reader. The format (dotnet/runtime's readytorun-format.md):
 *
 *  - the CLI header's ManagedNativeHeader points to the READYTORUN_HEADER
 *    ("RTR", version, flags, then a table of sections: type, RVA, size);
 *  - RUNTIME_FUNCTIONS: the code, sorted by address, one entry a function
 *    (a method's body, then its funclets; x64: begin, end, unwind RVAs);
 *  - METHODDEF_ENTRYPOINTS: a NativeFormat array indexed by MethodDef row
 *    - 1 of the index of the method's first runtime function (and fixups);
 *  - INSTANCE_METHOD_ENTRYPOINTS: a NativeFormat hashtable of generic
 *    instantiations, each a method signature followed by the same index;
 *  - the ECMA-335 metadata (#~ tables, #Strings) names the methods.
 *
 * Offsets in NativeFormat data are RVAs: every byte is read through the
 * section table, and every read is checked.
 */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "r2r.h"

#define RTR_SIGNATURE		0x00525452	/* "RTR" */
#define RTR_FLAG_COMPONENT	0x00000020
#define SEC_RUNTIME_FUNCTIONS	102
#define SEC_METHODDEF_ENTRIES	103
#define SEC_DELAYLOAD_THUNKS	106
#define SEC_INSTANCE_ENTRIES	109
#define SEC_COMPONENT_ASMS	115
#define SEC_OWNER_COMPOSITE	116
#define SEC_HOT_COLD_MAP	120
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

static const struct {
	uint16_t marker;
	const char *name;
} oses[] = {
	{ 0x0000, "Windows" }, { 0x7b79, "Linux" }, { 0x4644, "Apple" },
	{ 0xadc4, "FreeBSD" }, { 0x1993, "NetBSD" }, { 0x1992, "SunOS" },
};

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t le16(const uint8_t *p)
{
	return p[0] | p[1] << 8;
}

/* The file bytes of @len bytes at @rva, all in one section's data, or NULL. */
static const uint8_t *at(const struct pe *pe, uint64_t rva, uint64_t len)
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

/* The bytes from @rva to the end of its section's data (*left of them). */
static const uint8_t *at_rest(const struct pe *pe, uint64_t rva, uint64_t *left)
{
	unsigned int i;

	for (i = 0; i < pe->nr_sections; i++) {
		const struct pe_section *s = &pe->sections[i];

		if (rva >= s->vaddr && rva - s->vaddr < s->raw_size) {
			*left = s->raw_size - (rva - s->vaddr);
			return pe->buf + s->raw_offset + (rva - s->vaddr);
		}
	}
	return NULL;
}

static int rva32(const struct pe *pe, uint64_t rva, uint32_t *v)
{
	const uint8_t *p = at(pe, rva, 4);

	if (!p)
		return -1;
	*v = le32(p);
	return 0;
}

/*
 * NativeFormat's variable-length unsigned: the low bits of the first byte
 * say how many bytes follow (0: none, 01: one, 011: two, 0111: three,
 * 01111: a 32-bit value). Advances *rva.
 */
static int nf_uint(const struct pe *pe, uint32_t *rva, uint32_t *v)
{
	const uint8_t *p = at(pe, *rva, 1);
	unsigned int n, i;

	if (!p)
		return -1;
	if (!(p[0] & 1))
		n = 1;
	else if (!(p[0] & 2))
		n = 2;
	else if (!(p[0] & 4))
		n = 3;
	else if (!(p[0] & 8))
		n = 4;
	else if (!(p[0] & 16))
		n = 5;
	else
		return -1;
	p = at(pe, *rva, n);
	if (!p)
		return -1;
	if (n == 5) {
		*v = le32(p + 1);
	} else {
		/* n bytes, little-endian, less their n low bits of length */
		for (i = n, *v = 0; i--;)
			*v = *v << 8 | p[i];
		*v >>= n;
	}
	*rva += n;
	return 0;
}

/* The signed form: the same layout, the top byte sign-extended. */
static int nf_int(const struct pe *pe, uint32_t *rva, int32_t *v)
{
	uint32_t u, start = *rva;
	unsigned int bits;

	if (nf_uint(pe, rva, &u))
		return -1;
	bits = 7 * (*rva - start);	/* n bytes hold 7n bits, but 5 hold 32 */
	if (bits > 28) {
		*v = (int32_t)u;
		return 0;
	}
	if (u & 1u << (bits - 1))
		u |= ~0u << bits;
	*v = (int32_t)u;
	return 0;
}

/*
 * A method entry: the index of its first runtime function, shifted left by
 * one, or by two with the low bits 01 or 11 when fixups follow.
 */
static int nf_entry(const struct pe *pe, uint32_t rva, uint32_t *rf)
{
	uint32_t id;

	if (nf_uint(pe, &rva, &id))
		return -1;
	*rf = id & 1 ? id >> 2 : id >> 1;
	return 0;
}

/*
 * NativeArray element @index: a header (count << 2 | width of the block
 * offsets), block offsets, each block a little tree of 16 elements.
 * Returns 1 and the element's RVA, 0 if there is no such element, -1.
 */
static int nf_array_get(const struct pe *pe, uint32_t base, uint32_t nr, unsigned int width,
			uint32_t index, uint32_t *out)
{
	uint32_t off, bit;
	const uint8_t *p;

	if (index >= nr)
		return 0;
	p = at(pe, (uint64_t)base + (index / 16) * (1u << width), 1u << width);
	if (!p)
		return -1;
	off = base + (width == 0 ? p[0] : width == 1 ? le16(p) : le32(p));
	for (bit = 8; bit; bit >>= 1) {
		uint32_t val, next = off;

		if (nf_uint(pe, &next, &val))
			return -1;
		if (index & bit) {
			if (val & 2) {
				off += val >> 2;
				continue;
			}
		} else if (val & 1) {
			off = next;
			continue;
		}
		/* A leaf: its element's index in the block, if it is ours. */
		if (!(val & 3) && (val >> 2) == (index & 15)) {
			off = next;
			break;
		}
		return 0;
	}
	*out = off;
	return 1;
}

/* ECMA-335 II.23.2 compressed unsigned integer. */
static uint32_t sig_uint(struct cur *c)
{
	uint32_t v;

	if (c->p >= c->end)
		goto bad;
	if (!(c->p[0] & 0x80)) {
		return *c->p++;
	} else if ((c->p[0] & 0xc0) == 0x80) {
		if (c->end - c->p < 2)
			goto bad;
		v = (c->p[0] & 0x3f) << 8 | c->p[1];
		c->p += 2;
		return v;
	} else if ((c->p[0] & 0xe0) == 0xc0) {
		if (c->end - c->p < 4)
			goto bad;
		v = (uint32_t)(c->p[0] & 0x1f) << 24 | c->p[1] << 16 | c->p[2] << 8 | c->p[3];
		c->p += 4;
		return v;
	}
bad:
	c->bad = 1;
	c->p = c->end;
	return 0;
}

static uint8_t sig_byte(struct cur *c)
{
	if (c->p >= c->end) {
		c->bad = 1;
		return 0;
	}
	return *c->p++;
}

static void put(struct name *n, const char *s)
{
	size_t len = strlen(s);

	if (len > sizeof(n->s) - 1 - n->len) {
		len = sizeof(n->s) - 1 - n->len;
		n->unknown = 1;
	}
	memcpy(n->s + n->len, s, len);
	n->len += len;
	n->s[n->len] = '\0';
}

static void put_unknown(struct name *n)
{
	put(n, "?");
	n->unknown = 1;
}

/* Metadata: a column of a row, 0 if there is no such row. */
static uint32_t md_get(const struct md *md, unsigned int t, uint32_t row, unsigned int col)
{
	const uint8_t *p;

	if (!md || !row || row > md->rows[t])
		return 0;
	p = md->p + md->start[t] + (uint64_t)(row - 1) * md->row_size[t] + md->col_off[t][col];
	return md->col_w[t][col] == 2 ? le16(p) : le32(p);
}

static const char *md_str(const struct md *md, uint32_t idx)
{
	const char *s;

	if (!md || idx >= md->str_len)
		return NULL;
	s = (const char *)md->p + md->str_off + idx;
	if (!memchr(s, '\0', md->str_len - idx))
		return NULL;
	return s;
}

static void put_str(struct name *n, const struct md *md, uint32_t idx)
{
	const char *s = md_str(md, idx);

	if (s && *s)
		put(n, s);
	else
		put_unknown(n);
}

/* "Namespace." of a TypeDef or TypeRef, nothing for the global namespace. */
static void put_namespace(struct name *n, const struct md *md, uint32_t str)
{
	const char *ns = md_str(md, str);

	if (ns && *ns) {
		put(n, ns);
		put(n, ".");
	}
}

/* Namespace.Type, or Outer+Inner for a nested type. */
static void put_typedef(struct name *n, const struct md *md, uint32_t row, int depth)
{
	uint32_t outer = md && row && row <= md->rows[T_TYPEDEF] ? md->enclosing[row] : 0;

	if (!md || !row || row > md->rows[T_TYPEDEF] || depth > MAX_DEPTH) {
		put_unknown(n);
		return;
	}
	if (outer) {
		put_typedef(n, md, outer, depth + 1);
		put(n, n->il ? "/" : "+");
	} else {
		put_namespace(n, md, md_get(md, T_TYPEDEF, row, 2));
	}
	put_str(n, md, md_get(md, T_TYPEDEF, row, 1));
}

static void put_typeref(struct name *n, const struct md *md, uint32_t row, int depth)
{
	uint32_t scope = md_get(md, T_TYPEREF, row, 0);

	if (!md || !row || row > md->rows[T_TYPEREF] || depth > MAX_DEPTH) {
		put_unknown(n);
		return;
	}
	if ((scope & 3) == 3) {		/* nested in another TypeRef */
		put_typeref(n, md, scope >> 2, depth + 1);
		put(n, n->il ? "/" : "+");
	} else {
		if (n->il && (scope & 3) == 2) {	/* [Assembly]Ns.Type */
			put(n, "[");
			put_str(n, md, md_get(md, T_ASSEMBLYREF, scope >> 2, 6));
			put(n, "]");
		}
		put_namespace(n, md, md_get(md, T_TYPEREF, row, 2));
	}
	put_str(n, md, md_get(md, T_TYPEREF, row, 1));
}

static void put_type(struct name *n, const struct md *md, struct cur *c, int depth);

/* A TypeDefOrRef token as in signatures: row << 2 | table. */
static void put_tdor(struct name *n, const struct md *md, uint32_t tok, int depth)
{
	const uint8_t *blob;
	uint32_t b, len;
	struct cur c;

	switch (tok & 3) {
	case 0:
		put_typedef(n, md, tok >> 2, depth);
		return;
	case 1:
		put_typeref(n, md, tok >> 2, depth);
		return;
	case 2:
		b = md_get(md, T_TYPESPEC, tok >> 2, 0);
		if (md && b < md->blob_len) {
			blob = md->p + md->blob_off + b;
			c = (struct cur){ blob, md->p + md->blob_off + md->blob_len, 0 };
			len = sig_uint(&c);
			if (!c.bad && len <= (uint32_t)(c.end - c.p)) {
				c.end = c.p + len;
				put_type(n, md, &c, depth + 1);
				if (c.bad)
					put_unknown(n);
				return;
			}
		}
		/* fall through */
	default:
		put_unknown(n);
	}
}

static const char *const prim[] = {
	[0x01] = "System.Void", [0x02] = "System.Boolean", [0x03] = "System.Char",
	[0x04] = "System.SByte", [0x05] = "System.Byte", [0x06] = "System.Int16",
	[0x07] = "System.UInt16", [0x08] = "System.Int32", [0x09] = "System.UInt32",
	[0x0a] = "System.Int64", [0x0b] = "System.UInt64", [0x0c] = "System.Single",
	[0x0d] = "System.Double", [0x0e] = "System.String", [0x16] = "System.TypedReference",
	[0x18] = "System.IntPtr", [0x19] = "System.UIntPtr", [0x1c] = "System.Object",
};

/* A function pointer's calling convention, as ILASM spells it */
static const char *const il_conv[] = {
	[1] = "unmanaged cdecl ", [2] = "unmanaged stdcall ", [3] = "unmanaged thiscall ",
	[4] = "unmanaged fastcall ", [5] = "vararg ", [9] = "unmanaged ",
};

/* The same in parameters, as ILASM and the runtime's perf map spell them. */
static const char *const il_prim[] = {
	[0x01] = "void", [0x02] = "bool", [0x03] = "char", [0x04] = "int8", [0x05] = "uint8",
	[0x06] = "int16", [0x07] = "uint16", [0x08] = "int32", [0x09] = "uint32",
	[0x0a] = "int64", [0x0b] = "uint64", [0x0c] = "float32", [0x0d] = "float64",
	[0x0e] = "string", [0x16] = "typedref", [0x18] = "native int", [0x19] = "native uint",
	[0x1c] = "object",
};

/*
 * A MethodDefSig or MethodRefSig: "ret(params)", or with @fnptr in ILASM's
 * spelling "ret *(params)"; without @ret, "(params)" only.
 */
static void put_method_sig(struct name *n, const struct md *md, struct cur *c, int depth,
			   int ret)
{
	struct name skip = { .len = 0 };
	uint32_t i, nr;
	uint8_t conv;

	conv = sig_byte(c);
	if (conv & 0x10)
		sig_uint(c);		/* generic parameter count */
	nr = sig_uint(c);
	if (ret && n->il) {
		if (conv & 0x20)
			put(n, conv & 0x40 ? "instance explicit " : "instance ");
		if ((conv & 0xf) && (conv & 0xf) < ARRAY_SIZE(il_conv))
			put(n, il_conv[conv & 0xf]);
	}
	put_type(ret ? n : &skip, md, c, depth);	/* return type */
	if (ret && n->il)
		put(n, " *");
	put(n, "(");
	for (i = 0; i < nr && !c->bad; i++) {
		if (i)
			put(n, ",");
		put_type(n, md, c, depth);
	}
	put(n, ")");
}

static const struct md *module(const struct md *md, uint32_t index);

/* The signed compressed integer of ECMA-335 II.23.2 */
static int32_t sig_int(struct cur *c)
{
	const uint8_t *p = c->p;
	uint32_t v = sig_uint(c);
	int bits = c->bad ? 0 : c->p - p == 1 ? 7 : c->p - p == 2 ? 14 : 29;

	if (!bits)
		return 0;
	/* rotated right by one: the sign in bit 0 */
	return v & 1 ? (int32_t)((v >> 1) | (~0U << (bits - 1))) : (int32_t)(v >> 1);
}

/*
 * An ARRAY's shape: [,] for a rank of two as .NET names it; as ILASM spells
 * it, int32[0...,0...] for int[,], each dimension "lo...hi", "size",
 * "lo..." or empty as its sizes and lower bounds say, and [...] for a rank
 * of one with neither.
 */
static void put_bounds(struct name *n, struct cur *c, uint32_t rank)
{
	uint32_t size[32], nr_sizes, nr_lo, i;
	int32_t lo[32];
	char dim[48];

	nr_sizes = sig_uint(c);
	for (i = 0; i < nr_sizes && !c->bad; i++) {
		uint32_t v = sig_uint(c);

		if (i < 32)
			size[i] = v;
	}
	nr_lo = sig_uint(c);
	for (i = 0; i < nr_lo && !c->bad; i++) {
		int32_t v = sig_int(c);

		if (i < 32)
			lo[i] = v;
	}
	put(n, "[");
	for (i = 0; i < rank && i < 32 && !c->bad; i++) {
		if (i)
			put(n, ",");
		if (!n->il)
			continue;
		if (i < nr_sizes && i < nr_lo)
			snprintf(dim, sizeof(dim), "%d...%lld", lo[i], (long long)lo[i] + size[i] - 1);
		else if (i < nr_sizes)
			snprintf(dim, sizeof(dim), "%u", size[i]);
		else if (i < nr_lo)
			snprintf(dim, sizeof(dim), "%d...", lo[i]);
		else
			dim[0] = '\0';
		put(n, dim);
	}
	if (n->il && rank == 1 && !nr_sizes && !nr_lo)
		put(n, "...");
	put(n, "]");
}

/*
 * A type in a signature, spelled as .NET names instantiations:
 * List`1[System.__Canon]. @md is NULL in another module's context: the
 * signature is still walked, its names are "?".
 */
static void put_type(struct name *n, const struct md *md, struct cur *c, int depth)
{
	uint32_t i, nr, rank, tok;
	uint8_t b;

	/* A full name stops the walk: a TypeSpec may name itself, many times */
	if (depth > MAX_DEPTH || n->len >= sizeof(n->s) - 1) {
		c->bad = 1;
		return;
	}
	b = sig_byte(c);
	if (c->bad)
		return;
	if (b < ARRAY_SIZE(prim) && prim[b]) {
		put(n, n->il ? il_prim[b] : prim[b]);
		return;
	}
	switch (b) {
	case 0x0f:			/* PTR */
		put_type(n, md, c, depth + 1);
		put(n, "*");
		break;
	case 0x10:			/* BYREF */
		put_type(n, md, c, depth + 1);
		put(n, "&");
		break;
	case 0x11:			/* VALUETYPE */
	case 0x12:			/* CLASS */
		if (n->il)
			put(n, b == 0x11 ? "valuetype " : "class ");
		put_tdor(n, md, sig_uint(c), depth + 1);
		break;
	case 0x13:			/* VAR */
	case 0x1e:			/* MVAR */
		put(n, b == 0x13 ? "!" : "!!");
		nr = sig_uint(c);
		{
			char num[16];

			snprintf(num, sizeof(num), "%u", nr);
			put(n, num);
		}
		break;
	case 0x14:			/* ARRAY: type rank sizes lower bounds */
		put_type(n, md, c, depth + 1);
		rank = sig_uint(c);
		put_bounds(n, c, rank);
		break;
	case 0x15:			/* GENERICINST type count args */
		put_type(n, md, c, depth + 1);
		nr = sig_uint(c);
		put(n, n->il ? "<" : "[");
		for (i = 0; i < nr && !c->bad; i++) {
			if (i)
				put(n, ",");
			put_type(n, md, c, depth + 1);
		}
		put(n, n->il ? ">" : "]");
		break;
	case 0x1b:			/* FNPTR */
		put(n, "method ");
		put_method_sig(n, md, c, depth + 1, 1);
		break;
	case 0x1d:			/* SZARRAY */
		put_type(n, md, c, depth + 1);
		put(n, "[]");
		break;
	case 0x1f:			/* CMOD_REQD */
	case 0x20:			/* CMOD_OPT */
		tok = sig_uint(c);
		put_type(n, md, c, depth + 1);
		if (n->il) {		/* after the type: int32& modreq(...) */
			put(n, b == 0x1f ? " modreq(" : " modopt(");
			put_tdor(n, md, tok, depth + 1);
			put(n, ")");
		}
		break;
	case 0x45:			/* PINNED */
	case 0x3d:			/* NATIVE_VALUETYPE_ZAPSIG */
		put_type(n, md, c, depth + 1);
		break;
	case 0x3e:			/* CANON_ZAPSIG */
		put(n, "System.__Canon");
		break;
	case 0x3f:			/* MODULE_ZAPSIG index type */
		nr = sig_uint(c);
		put_type(n, module(md, nr), c, depth + 1);
		break;
	default:
		c->bad = 1;
	}
}

/*
 * A method's parameters from its signature blob, as the runtime's perf map
 * spells them: "(string,valuetype System.ReadOnlySpan`1<char>)", so that
 * overloads differ as they do there. Nothing if the signature is unreadable.
 */
static void put_params(struct name *n, const struct md *md, uint32_t blob)
{
	struct name p = { .len = 0, .il = 1 };
	uint32_t len;
	struct cur c;

	if (!md || !blob || blob >= md->blob_len)
		return;
	c = (struct cur){ md->p + md->blob_off + blob, md->p + md->blob_off + md->blob_len, 0 };
	len = sig_uint(&c);
	if (c.bad || len > (uint32_t)(c.end - c.p))
		return;
	c.end = c.p + len;
	put_method_sig(&p, md, &c, 0, 0);
	if (c.bad)
		return;
	put(n, p.s);
	n->unknown |= p.unknown;
}

/* The method's own name, and its type's unless @owner says it. */
static void put_methoddef(struct name *n, const struct md *md, uint32_t row, int owner)
{
	if (!md || !row || row > md->rows[T_METHODDEF]) {
		put(n, owner ? "?::?" : "?");
		n->unknown = 1;
		return;
	}
	if (owner) {
		put_typedef(n, md, md->owner[row], 0);
		put(n, "::");
	}
	put_str(n, md, md_get(md, T_METHODDEF, row, 3));
}

static int add_method(struct r2r *r, uint32_t rf, const struct name *n)
{
	if (r->nr_m == r->alloc_m) {
		size_t alloc = r->alloc_m ? r->alloc_m * 2 : 1024;
		struct method *m = realloc(r->m, alloc * sizeof(*m));

		if (!m)
			return -1;
		r->m = m;
		r->alloc_m = alloc;
	}
	r->m[r->nr_m].rf = rf;
	r->m[r->nr_m].name = strdup(n->s);
	if (!r->m[r->nr_m].name)
		return -1;
	r->nr_m++;
	if (n->unknown)
		r->st->unnamed++;
	return 0;
}

/* Metadata: the root, the #~ and heap streams, the table layout. */
static int md_open(struct md *md, const struct pe *pe, uint32_t rva, uint32_t size,
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

static void md_close(struct md *md)
{
	free(md->owner);
	free(md->enclosing);
	md->owner = md->enclosing = NULL;
}

/* The CLI header's RVA and size, or 0. */
static uint32_t cli_header(const struct pe *pe, uint32_t *size)
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

/* The READYTORUN_HEADER's RVA, or 0 if there is none. */
static uint32_t rtr_header(const struct pe *pe, uint32_t *md_rva, uint32_t *md_size)
{
	uint32_t size = 0, cli = cli_header(pe, &size), rva;
	const uint8_t *p;

	*md_rva = *md_size = 0;
	p = cli ? at(pe, cli, 72) : NULL;
	if (!p)				/* composite images export it */
		return pe_export_rva(pe, "RTR_HEADER");
	*md_rva = le32(p + 8);
	*md_size = le32(p + 12);
	rva = le32(p + 64);		/* ManagedNativeHeader */
	return rva;
}

/*
 * The module a ReadyToRun signature's module index names: 0 the image's
 * own, 1 to N its AssemblyRef rows (whose images @load finds); else NULL.
 * Indices are the image's, whichever module's signature holds them.
 */
static const struct md *module(const struct md *md, uint32_t index)
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

/* A section of the READYTORUN_HEADER: its RVA and size, or 0. */
static uint32_t rtr_section(const struct pe *pe, uint32_t hdr, uint32_t type, uint32_t *size)
{
	uint32_t i, nr = 0;
	const uint8_t *p = at(pe, hdr, 16);

	if (p)
		nr = le32(p + 12);
	for (i = 0; i < nr; i++) {
		p = at(pe, hdr + 16 + (uint64_t)i * 12, 12);
		if (!p)
			return 0;
		if (le32(p) == type && le32(p + 4)) {
			*size = le32(p + 8);
			return le32(p + 4);
		}
	}
	*size = 0;
	return 0;
}

int r2r_detect(const struct pe *pe, int *em, int *class, const char **err)
{
	uint32_t md_rva, md_size, hdr = rtr_header(pe, &md_rva, &md_size), flags, size, own;
	uint16_t arch = 0;
	const uint8_t *p;
	unsigned int i;
	static char msg[256];

	if (!hdr)
		return md_rva ? 2 : 0;
	p = at(pe, hdr, 16);
	if (!p || le32(p) != RTR_SIGNATURE) {
		if (p)
			return md_rva ? 2 : 0;
		*err = "ReadyToRun header outside the image's sections";
		return -1;
	}
	for (i = 0; i < ARRAY_SIZE(oses); i++) {
		arch = pe->machine ^ oses[i].marker;
		if (arch == 0x8664 || arch == 0xaa64 || arch == 0x014c || arch == 0x01c4 ||
		    arch == 0x6264 || arch == 0x5064)
			break;
	}
	if (i == ARRAY_SIZE(oses)) {
		snprintf(msg, sizeof(msg), "ReadyToRun image for unknown machine %#x",
			 pe->machine);
		*err = msg;
		return -1;
	}
	if (arch == 0x8664) {
		*em = EM_X86_64;
		*class = ELFCLASS64;
	} else if (arch == 0xaa64) {
		*em = EM_AARCH64;
		*class = ELFCLASS64;
	} else {
		snprintf(msg, sizeof(msg), "ReadyToRun code for machine %#x (%s) is not "
			 "supported: only x86_64 and arm64", arch, oses[i].name);
		*err = msg;
		return -1;
	}
	if (!at(pe, hdr + 16, (uint64_t)le32(p + 12) * 12)) {
		*err = "corrupt READYTORUN_HEADER: its sections run past the image's";
		return -1;
	}
	flags = le32(p + 8);
	if (flags & RTR_FLAG_COMPONENT) {
		own = rtr_section(pe, hdr, SEC_OWNER_COMPOSITE, &size);
		p = own ? at(pe, own, size) : NULL;
		snprintf(msg, sizeof(msg), "a component of a composite ReadyToRun image: "
			 "its code is in %.*s", p && size < 200 ? (int)size : 18,
			 p && size < 200 ? (const char *)p : "the composite file");
		*err = msg;
		return -1;
	}
	if (rtr_section(pe, hdr, SEC_COMPONENT_ASMS, &size) || !md_rva) {
		*err = "composite ReadyToRun image (several assemblies' code in one file): "
		       "not supported";
		return -1;
	}
	return 1;
}

/* METHODDEF_ENTRYPOINTS: the element for MethodDef row N is at index N - 1. */
static int methoddef_entries(struct r2r *r, uint32_t rva)
{
	uint32_t hdr, nr, i, entry, rf, base = rva;
	int found;

	if (nf_uint(r->pe, &base, &hdr))
		return -1;
	nr = hdr >> 2;
	for (i = 0; i < nr && i < r->md.rows[T_METHODDEF]; i++) {
		struct name n = { .len = 0 };

		found = nf_array_get(r->pe, base, nr, hdr & 3, i, &entry);
		if (found < 0)
			return -1;
		if (!found)
			continue;
		if (nf_entry(r->pe, entry, &rf))
			return -1;
		put_methoddef(&n, &r->md, i + 1, 1);
		put_params(&n, &r->md, md_get(&r->md, T_METHODDEF, i + 1, 4));
		if (add_method(r, rf, &n))
			return -1;
		r->st->methods++;
	}
	return 0;
}

/*
 * One instantiation: a method signature (flags, the module it is in, the
 * owning type, the method token, the method's type arguments), then the
 * entry. Names it Type[args]::Method<args>.
 */
static int instance_entry(struct r2r *r, uint32_t rva)
{
	struct name n = { .len = 0 }, owner = { .len = 0 }, inst = { .len = 0 };
	const struct md *md = &r->md;
	uint32_t flags, tok, i, nr, rf, parent;
	uint64_t left;
	const uint8_t *p = at_rest(r->pe, rva, &left);
	struct cur c;

	if (!p)
		return -1;
	c = (struct cur){ p, p + left, 0 };
	flags = sig_uint(&c);
	if (flags & MSIG_UPDATE_CONTEXT) {
		md = module(md, sig_uint(&c));
		r->st->other += md && md != &r->md;
	}
	if (flags & MSIG_OWNER_TYPE)
		put_type(&owner, md, &c, 0);
	tok = sig_uint(&c);
	if (flags & MSIG_METHOD_INST) {
		nr = sig_uint(&c);
		put(&inst, "<");
		for (i = 0; i < nr && !c.bad; i++) {
			if (i)
				put(&inst, ",");
			put_type(&inst, md, &c, 0);
		}
		put(&inst, ">");
	}
	if (flags & MSIG_CONSTRAINED) {
		struct name skip = { .len = 0 };

		put_type(&skip, md, &c, 0);
	}
	if (c.bad || nf_entry(r->pe, rva + (uint32_t)(c.p - p), &rf))
		return -1;

	if (flags & MSIG_OWNER_TYPE) {
		put(&n, owner.s);
		n.unknown |= owner.unknown;
		put(&n, "::");
	}
	if (flags & MSIG_SLOT) {
		put(&n, flags & MSIG_OWNER_TYPE ? "?" : "?::?");
		n.unknown = 1;
	} else if (flags & MSIG_MEMBERREF) {
		if (!(flags & MSIG_OWNER_TYPE)) {
			parent = md_get(md, T_MEMBERREF, tok, 0);
			/* MemberRefParent: TypeDef, TypeRef, ModuleRef, MethodDef, TypeSpec */
			if ((parent & 7) == 0)
				put_tdor(&n, md, (parent >> 3) << 2, 0);
			else if ((parent & 7) == 1)
				put_tdor(&n, md, (parent >> 3) << 2 | 1, 0);
			else if ((parent & 7) == 4)
				put_tdor(&n, md, (parent >> 3) << 2 | 2, 0);
			else
				put_unknown(&n);
			put(&n, "::");
		}
		if (md && tok && tok <= md->rows[T_MEMBERREF])
			put_str(&n, md, md_get(md, T_MEMBERREF, tok, 1));
		else
			put_unknown(&n);
	} else {
		put_methoddef(&n, md, tok, !(flags & MSIG_OWNER_TYPE));
	}
	put(&n, inst.s);
	n.unknown |= inst.unknown;
	if (flags & MSIG_MEMBERREF)
		put_params(&n, md, md_get(md, T_MEMBERREF, tok, 2));
	else if (!(flags & MSIG_SLOT))
		put_params(&n, md, md_get(md, T_METHODDEF, tok, 4));
	if (add_method(r, rf, &n))
		return -1;
	r->st->instances++;
	return 0;
}

/*
 * INSTANCE_METHOD_ENTRYPOINTS: a NativeHashtable: a header byte (bucket
 * count shift << 2 | width of the bucket offsets), the bucket offsets, and
 * in each bucket entries of a hash byte and a relative offset to the entry.
 */
static int instance_entries(struct r2r *r, uint32_t rva)
{
	const uint8_t *p = at(r->pe, rva, 1);
	uint32_t base = rva + 1, nr_buckets, b, w;

	if (!p)
		return -1;
	if ((p[0] >> 2) > 24)
		return -1;
	nr_buckets = 1u << (p[0] >> 2);
	w = 1u << (p[0] & 3);
	if (w > 4)
		return -1;
	for (b = 0; b < nr_buckets; b++) {
		const uint8_t *q = at(r->pe, (uint64_t)base + (uint64_t)b * w, 2 * w);
		uint32_t start, end, pos;

		if (!q)
			return -1;
		start = w == 1 ? q[0] : w == 2 ? le16(q) : le32(q);
		end = w == 1 ? q[1] : w == 2 ? le16(q + w) : le32(q + w);
		if (end < start)
			return -1;
		for (pos = base + start; pos < base + end;) {
			uint32_t here;
			int32_t delta;

			pos++;			/* the hash code's low byte */
			here = pos;
			if (nf_int(r->pe, &pos, &delta) || instance_entry(r, here + delta))
				return -1;
		}
	}
	return 0;
}

/* A runtime function's begin and end RVAs. */
static int rf_get(const struct r2r *r, uint32_t i, uint32_t *begin, uint32_t *end)
{
	const uint8_t *p = at(r->pe, (uint64_t)r->rf_rva + (uint64_t)i * r->rf_entry, r->rf_entry);
	uint32_t unwind, xdata;

	if (!p)
		return -1;
	*begin = le32(p);
	if (!r->arm64) {
		*end = le32(p + 4);
	} else {
		/* arm64: the length is in the packed unwind data or .xdata */
		unwind = le32(p + 4);
		if (unwind & 3)
			*end = *begin + ((unwind >> 2) & 0x7ff) * 4;
		else if (!rva32(r->pe, unwind, &xdata))
			*end = *begin + (xdata & 0x3ffff) * 4;
		else
			return -1;
	}
	return *end < *begin ? -1 : 0;
}

/* Report code from @begin to @end (RVAs), cut at the end of its section. */
static int emit(const struct r2r *r, uint32_t begin, uint32_t end, const char *name,
		pe_sym_cb cb, void *arg)
{
	int64_t off = pe_rva_to_offset(r->pe, begin);
	uint64_t size = end - begin;

	if (off < 0 || !pe_offset_is_code(r->pe, off))
		return 0;
	if (size > pe_code_end(r->pe, off) - off)
		size = pe_code_end(r->pe, off) - off;
	return cb(arg, off, size, name) ? -1 : 1;
}

static int rf_cmp(const void *a, const void *b)
{
	const struct method *x = a, *y = b;

	if (x->rf != y->rf)
		return x->rf < y->rf ? -1 : 1;
	return strcmp(x->name, y->name);
}

/*
 * Each method's code: its first runtime function and those after it that
 * no method starts at (its funclets). Those that follow on from each other
 * (but for alignment padding) make one symbol; a part elsewhere (cold
 * code) another, of the same name.
 */
static int report(struct r2r *r, const uint8_t *is_start, pe_sym_cb cb, void *arg)
{
	size_t i;
	int nr = 0;

	for (i = 0; i < r->nr_m; i++) {
		uint32_t f = r->m[i].rf, begin, end, b, e;
		int first = i == 0 || r->m[i - 1].rf != f, ret;

		if (f >= r->nr_rf || rf_get(r, f, &begin, &end))
			continue;
		r->st->covered += first;
		for (f++; f < r->nr_rf && !is_start[f]; f++) {
			if (rf_get(r, f, &b, &e))
				break;
			r->st->covered += first;
			if (b >= end && b - end < 64) {
				end = e;
				continue;
			}
			if (emit(r, b, e, r->m[i].name, cb, arg) < 0)
				return -1;
		}
		ret = emit(r, begin, end, r->m[i].name, cb, arg);
		if (ret < 0)
			return -1;
		nr += ret;
	}
	return nr;
}

int r2r_methods(const struct pe *pe, pe_sym_cb cb, void *arg, r2r_load_cb load,
		void *load_arg, struct r2r_stats *st, const char **err)
{
	uint32_t md_rva, md_size, hdr = rtr_header(pe, &md_rva, &md_size), rva, size, i, prev;
	struct r2r r = { .pe = pe, .st = st, .load = load, .load_arg = load_arg };
	uint32_t *by_rf = NULL;
	uint8_t *is_start = NULL;
	const uint8_t *p;
	int ret = -1;

	memset(st, 0, sizeof(*st));
	p = at(pe, hdr, 16);
	*err = "no ReadyToRun header";
	if (!p || le32(p) != RTR_SIGNATURE)
		return -1;
	st->major = le16(p + 4);
	st->minor = le16(p + 6);
	for (i = 0; i < ARRAY_SIZE(oses); i++) {
		if ((pe->machine ^ oses[i].marker) == 0xaa64)
			r.arm64 = 1;
		if ((pe->machine ^ oses[i].marker) == 0xaa64 ||
		    (pe->machine ^ oses[i].marker) == 0x8664)
			st->os = oses[i].name;
	}
	r.rf_entry = r.arm64 ? 8 : 12;

	*err = "no RUNTIME_FUNCTIONS section";
	r.rf_rva = rtr_section(pe, hdr, SEC_RUNTIME_FUNCTIONS, &size);
	if (!r.rf_rva)
		return -1;
	*err = "RUNTIME_FUNCTIONS outside the image's sections";
	if (!at(pe, r.rf_rva, size))
		return -1;
	/* crossgen2 may end the table with a ~0 sentinel. */
	*err = "corrupt RUNTIME_FUNCTIONS: not a whole number of entries";
	if (size % r.rf_entry &&
	    (size % r.rf_entry != 4 || rva32(pe, (uint64_t)r.rf_rva + size - 4, &i) || ~i))
		return -1;
	r.nr_rf = size / r.rf_entry;
	st->functions = r.nr_rf;
	*err = "corrupt RUNTIME_FUNCTIONS: not sorted, or outside the code";
	for (i = 0, prev = 0; i < r.nr_rf; i++) {
		uint32_t begin, end;
		int64_t off;

		if (rf_get(&r, i, &begin, &end) || begin < prev || end == begin)
			return -1;
		off = pe_rva_to_offset(pe, begin);
		if (off < 0 || !pe_offset_is_code(pe, off))
			return -1;
		prev = end;
	}

	if (md_open(&r.md, pe, md_rva, md_size, err))
		goto out;
	r.md.r = &r;
	*err = "out of memory";
	r.refs = calloc(r.md.rows[T_ASSEMBLYREF] + 1, sizeof(*r.refs));
	if (!r.refs)
		goto out;

	*err = "corrupt METHODDEF_ENTRYPOINTS";
	rva = rtr_section(pe, hdr, SEC_METHODDEF_ENTRIES, &size);
	if (rva && methoddef_entries(&r, rva))
		goto out;
	*err = "corrupt INSTANCE_METHOD_ENTRYPOINTS";
	rva = rtr_section(pe, hdr, SEC_INSTANCE_ENTRIES, &size);
	if (rva && instance_entries(&r, rva))
		goto out;

	*err = "out of memory";
	is_start = calloc(r.nr_rf ? r.nr_rf : 1, 1);
	if (!is_start)
		goto out;
	for (i = 0; i < r.nr_m; i++)
		if (r.m[i].rf < r.nr_rf)
			is_start[r.m[i].rf] = 1;
	/*
	 * Cold parts (HOT_COLD_MAP: pairs of cold, hot function indices) are
	 * named as the method whose hot part they belong to.
	 */
	rva = rtr_section(pe, hdr, SEC_HOT_COLD_MAP, &size);
	if (rva && r.nr_m) {
		qsort(r.m, r.nr_m, sizeof(*r.m), rf_cmp);
		*err = "out of memory";
		by_rf = malloc(r.nr_rf * sizeof(*by_rf) + 1);
		if (!by_rf)
			goto out;
		memset(by_rf, 0xff, r.nr_rf * sizeof(*by_rf));
		for (i = r.nr_m; i-- > 0;)
			if (r.m[i].rf < r.nr_rf)
				by_rf[r.m[i].rf] = i;
	}
	for (i = 0; by_rf && i + 1 < size / 4; i += 2) {
		struct name n = { .len = 0 };
		uint32_t cold, hot;

		*err = "corrupt HOT_COLD_MAP";
		if (rva32(pe, rva + 4ULL * i, &cold) || rva32(pe, rva + 4ULL * i + 4, &hot))
			goto out;
		if (cold >= r.nr_rf || hot >= r.nr_rf || by_rf[hot] == UINT32_MAX ||
		    is_start[cold])
			continue;
		put(&n, r.m[by_rf[hot]].name);
		*err = "out of memory";
		if (add_method(&r, cold, &n))
			goto out;
		is_start[cold] = 1;
	}
	if (r.nr_m)
		qsort(r.m, r.nr_m, sizeof(*r.m), rf_cmp);
	*err = "out of memory";
	ret = report(&r, is_start, cb, arg);
	/* The code of the thunks calls to not yet prepared methods go through. */
	rva = rtr_section(pe, hdr, SEC_DELAYLOAD_THUNKS, &size);
	if (ret >= 0 && rva && size &&
	    emit(&r, rva, rva + size, "ReadyToRun::DelayLoadMethodCallThunks", cb, arg) < 0)
		ret = -1;
	if (ret >= 0)
		*err = NULL;
out:
	for (i = 0; i < r.nr_m; i++)
		free(r.m[i].name);
	free(r.m);
	free(is_start);
	free(by_rf);
	for (i = 0; r.refs && i <= r.md.rows[T_ASSEMBLYREF]; i++) {
		md_close(&r.refs[i].md);
		pe_close(&r.refs[i].pe);
	}
	free(r.refs);
	md_close(&r.md);
	return ret;
}
