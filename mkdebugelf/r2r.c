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
 *
 * This file reads the R2R header and its sections; r2r_md.c the metadata
 * tables, r2r_sig.c the signatures that name methods (r2r_priv.h).
 */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "r2r_priv.h"

#define RTR_SIGNATURE		0x00525452	/* "RTR" */
#define RTR_FLAG_COMPONENT	0x00000020
#define SEC_RUNTIME_FUNCTIONS	102
#define SEC_METHODDEF_ENTRIES	103
#define SEC_DELAYLOAD_THUNKS	106
#define SEC_INSTANCE_ENTRIES	109
#define SEC_COMPONENT_ASMS	115
#define SEC_OWNER_COMPOSITE	116
#define SEC_HOT_COLD_MAP	120

static const struct {
	uint16_t marker;
	const char *name;
} oses[] = {
	{ 0x0000, "Windows" }, { 0x7b79, "Linux" }, { 0x4644, "Apple" },
	{ 0xadc4, "FreeBSD" }, { 0x1993, "NetBSD" }, { 0x1992, "SunOS" },
};

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
