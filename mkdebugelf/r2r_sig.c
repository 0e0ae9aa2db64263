// SPDX-License-Identifier: GPL-2.0
/*
 * ReadyToRun reader, the signatures (ECMA-335 II.23.2 and ReadyToRun's
 * method signatures): types, parameters and methods spelt as the runtime's
 * perf map spells them, built into a bounded name.
 */
#include <stdio.h>
#include <string.h>
#include "r2r_priv.h"

/* ECMA-335 II.23.2 compressed unsigned integer. */
uint32_t sig_uint(struct cur *c)
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

void put(struct name *n, const char *s)
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

void put_unknown(struct name *n)
{
	put(n, "?");
	n->unknown = 1;
}

void put_str(struct name *n, const struct md *md, uint32_t idx)
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

/* A TypeDefOrRef token as in signatures: row << 2 | table. */
void put_tdor(struct name *n, const struct md *md, uint32_t tok, int depth)
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
void put_type(struct name *n, const struct md *md, struct cur *c, int depth)
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
void put_params(struct name *n, const struct md *md, uint32_t blob)
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
void put_methoddef(struct name *n, const struct md *md, uint32_t row, int owner)
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
