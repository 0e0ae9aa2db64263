// SPDX-License-Identifier: GPL-2.0
/*
 * PE/PE32+ reader: every read is checked against the file size, so a
 * truncated or hostile image gives an error, never an out of bounds access.
 */
#include <stdlib.h>
#include <string.h>
#include "pe.h"

#define SCN_CNT_CODE		0x00000020
#define SCN_MEM_EXECUTE		0x20000000
#define COFF_SYM_SIZE		18
#define COFF_DTYPE_FUNCTION	0x20
#define COFF_CLASS_EXTERNAL	2
#define COFF_CLASS_STATIC	3
#define MAX_NAME		4096
#define MACHINE_AMD64		0x8664
#define UNW_FLAG_CHAININFO	0x4
#define MAX_CHAIN		32

static int rd16(const struct pe *pe, uint64_t off, uint16_t *v)
{
	if (off > pe->len || pe->len - off < 2)
		return -1;
	*v = pe->buf[off] | pe->buf[off + 1] << 8;
	return 0;
}

/* What the headers say the file holds reaches @end at least */
static void need(struct pe *pe, uint64_t end)
{
	if (end > pe->need)
		pe->need = end;
}

static int rd32(const struct pe *pe, uint64_t off, uint32_t *v)
{
	if (off > pe->len || pe->len - off < 4)
		return -1;
	*v = (uint32_t)pe->buf[off] | (uint32_t)pe->buf[off + 1] << 8 |
	     (uint32_t)pe->buf[off + 2] << 16 | (uint32_t)pe->buf[off + 3] << 24;
	return 0;
}

/* A NUL terminated string at @off, inside the file and not too long. */
static const char *rdstr(const struct pe *pe, uint64_t off)
{
	const void *nul;

	if (off >= pe->len)
		return NULL;
	nul = memchr(pe->buf + off, '\0', pe->len - off < MAX_NAME ? pe->len - off : MAX_NAME);
	if (!nul || nul == pe->buf + off)
		return NULL;
	return (const char *)pe->buf + off;
}

int pe_open(struct pe *pe, const uint8_t *buf, size_t len, const char **err)
{
	uint32_t lfanew, sig, nr_dirs;
	uint16_t magic, nr_sections, opt_size, mz;
	uint64_t coff, opt, sect;
	unsigned int i;

	memset(pe, 0, sizeof(*pe));
	pe->buf = buf;
	pe->len = len;

	*err = "not a PE image (no MZ header)";
	if (rd16(pe, 0, &mz) || mz != 0x5a4d || rd32(pe, 0x3c, &lfanew))
		return -1;
	*err = "not a PE image (no PE signature)";
	if (rd32(pe, lfanew, &sig) || sig != 0x00004550)
		return -1;

	*err = "truncated PE headers";
	coff = (uint64_t)lfanew + 4;
	need(pe, coff + 20 + 2);	/* the COFF header and the optional header's magic */
	if (rd16(pe, coff, &pe->machine) || rd16(pe, coff + 2, &nr_sections) ||
	    rd32(pe, coff + 8, &pe->symtab_offset) || rd32(pe, coff + 12, &pe->nr_syms) ||
	    rd16(pe, coff + 16, &opt_size))
		return -1;

	opt = coff + 20;
	if (rd16(pe, opt, &magic))
		return -1;
	*err = "unknown PE optional header magic";
	if (magic != 0x10b && magic != 0x20b)
		return -1;
	pe->is_64 = magic == 0x20b;
	need(pe, opt + opt_size);

	if (rd32(pe, opt + 56, &pe->image_size))
		return -1;
	if (pe->is_64) {
		uint32_t lo, hi;

		if (rd32(pe, opt + 24, &lo) || rd32(pe, opt + 28, &hi))
			return -1;
		pe->image_base = (uint64_t)hi << 32 | lo;
	} else {
		uint32_t base;

		if (rd32(pe, opt + 28, &base))
			return -1;
		pe->image_base = base;
	}
	/* The data directories: number, then the export table's RVA and size. */
	*err = "truncated PE optional header";
	if (rd32(pe, opt + (pe->is_64 ? 108 : 92), &nr_dirs))
		return -1;
	if (nr_dirs > 0 && (uint64_t)(pe->is_64 ? 112 : 96) + 8 <= opt_size) {
		if (rd32(pe, opt + (pe->is_64 ? 112 : 96), &pe->export_rva) ||
		    rd32(pe, opt + (pe->is_64 ? 116 : 100), &pe->export_size))
			return -1;
	}
	/* The debug directory, the seventh: where a CodeView record names the PDB */
	if (nr_dirs > 6 && (uint64_t)(pe->is_64 ? 112 : 96) + 7 * 8 <= opt_size) {
		if (rd32(pe, opt + (pe->is_64 ? 160 : 144), &pe->debug_rva) ||
		    rd32(pe, opt + (pe->is_64 ? 164 : 148), &pe->debug_size))
			return -1;
	}

	/* The exception directory, the fourth: x64 function ranges */
	if (nr_dirs > 3 && (uint64_t)(pe->is_64 ? 112 : 96) + 4 * 8 <= opt_size) {
		if (rd32(pe, opt + (pe->is_64 ? 136 : 120), &pe->except_rva) ||
		    rd32(pe, opt + (pe->is_64 ? 140 : 124), &pe->except_size))
			return -1;
	}

	/* The certificate table, the fifth: a file offset, at the file's end */
	if (nr_dirs > 4 && (uint64_t)(pe->is_64 ? 112 : 96) + 5 * 8 <= opt_size) {
		uint32_t cert, cert_size;

		if (!rd32(pe, opt + (pe->is_64 ? 144 : 128), &cert) &&
		    !rd32(pe, opt + (pe->is_64 ? 148 : 132), &cert_size) && cert && cert_size)
			need(pe, (uint64_t)cert + cert_size);
	}

	sect = opt + opt_size;
	need(pe, sect + (uint64_t)nr_sections * 40);
	*err = "section table outside the file";
	if (sect > len || (len - sect) / 40 < nr_sections)
		return -1;
	pe->sections = calloc(nr_sections ? nr_sections : 1, sizeof(*pe->sections));
	*err = "out of memory";
	if (!pe->sections)
		return -1;
	pe->nr_sections = nr_sections;
	for (i = 0; i < nr_sections; i++) {
		struct pe_section *s = &pe->sections[i];
		uint64_t o = sect + (uint64_t)i * 40;

		memcpy(s->name, buf + o, 8);
		rd32(pe, o + 8, &s->vsize);
		rd32(pe, o + 12, &s->vaddr);
		rd32(pe, o + 16, &s->raw_size);
		rd32(pe, o + 20, &s->raw_offset);
		rd32(pe, o + 36, &s->flags);
		if (s->raw_size)
			need(pe, (uint64_t)s->raw_offset + s->raw_size);
		/* Raw data past the end of the file: keep what is there. */
		if (s->raw_offset > len)
			s->raw_size = 0;
		else if (len - s->raw_offset < s->raw_size)
			s->raw_size = len - s->raw_offset;
	}
	/*
	 * The COFF symbol table, then its string table's size and strings
	 * (lld-link writes one without symbols, for long section names)
	 */
	if (pe->symtab_offset) {
		uint64_t strtab = pe->symtab_offset + (uint64_t)pe->nr_syms * COFF_SYM_SIZE;
		uint32_t size = 4;

		rd32(pe, strtab, &size);
		need(pe, strtab + (size < 4 ? 4 : size));
	}
	*err = NULL;
	return 0;
}

void pe_close(struct pe *pe)
{
	free(pe->sections);
	pe->sections = NULL;
}

int64_t pe_rva_to_offset(const struct pe *pe, uint64_t rva)
{
	unsigned int i;

	for (i = 0; i < pe->nr_sections; i++) {
		const struct pe_section *s = &pe->sections[i];

		if (rva >= s->vaddr && rva - s->vaddr < s->raw_size)
			return s->raw_offset + (rva - s->vaddr);
	}
	return -1;
}

int64_t pe_offset_to_rva(const struct pe *pe, uint64_t offset)
{
	unsigned int i;

	for (i = 0; i < pe->nr_sections; i++) {
		const struct pe_section *s = &pe->sections[i];

		if (offset >= s->raw_offset && offset - s->raw_offset < s->raw_size)
			return s->vaddr + (offset - s->raw_offset);
	}
	return -1;
}

static const struct pe_section *code_section(const struct pe *pe, uint64_t offset)
{
	unsigned int i;

	for (i = 0; i < pe->nr_sections; i++) {
		const struct pe_section *s = &pe->sections[i];

		if ((s->flags & (SCN_CNT_CODE | SCN_MEM_EXECUTE)) &&
		    offset >= s->raw_offset && offset - s->raw_offset < s->raw_size)
			return s;
	}
	return NULL;
}

const struct pe_section *pe_unaligned_code(const struct pe *pe)
{
	unsigned int i;

	for (i = 0; i < pe->nr_sections; i++) {
		const struct pe_section *s = &pe->sections[i];

		if ((s->flags & (SCN_CNT_CODE | SCN_MEM_EXECUTE)) && s->raw_size &&
		    (s->raw_offset ^ s->vaddr) & 0xfff)
			return s;
	}
	return NULL;
}

int pe_offset_is_code(const struct pe *pe, uint64_t offset)
{
	return code_section(pe, offset) != NULL;
}

uint64_t pe_code_end(const struct pe *pe, uint64_t offset)
{
	const struct pe_section *s = code_section(pe, offset);

	return s ? (uint64_t)s->raw_offset + s->raw_size : offset;
}

/* Report a symbol if it is named and in code: 1 if reported, 0 if not, -1 on error. */
static int emit(const struct pe *pe, pe_sym_cb cb, void *arg, int64_t code, const char *name)
{
	if (!name || code < 0 || !pe_offset_is_code(pe, code))
		return 0;
	return cb(arg, code, 0, name) ? -1 : 1;
}

/* Where the export directory's three tables are in the file. */
struct export_dir {
	uint32_t nr_funcs, nr_names;
	int64_t f_off, n_off, o_off;
};

/* 0 with @d filled, 1 for an image without exports, -1 if it is bad. */
static int export_dir(const struct pe *pe, struct export_dir *d)
{
	uint32_t funcs, names, ordinals;
	int64_t dir;

	if (!pe->export_rva)
		return 1;
	dir = pe_rva_to_offset(pe, pe->export_rva);
	if (dir < 0 || rd32(pe, dir + 20, &d->nr_funcs) || rd32(pe, dir + 24, &d->nr_names) ||
	    rd32(pe, dir + 28, &funcs) || rd32(pe, dir + 32, &names) ||
	    rd32(pe, dir + 36, &ordinals))
		return -1;

	d->f_off = pe_rva_to_offset(pe, funcs);
	d->n_off = pe_rva_to_offset(pe, names);
	d->o_off = pe_rva_to_offset(pe, ordinals);
	if (d->nr_names && (d->f_off < 0 || d->n_off < 0 || d->o_off < 0))
		return -1;
	return 0;
}

/*
 * The name (NULL if unreadable) and code RVA of named export @i: 0, 1 for an
 * ordinal out of range, -1 if the tables can't be read.
 */
static int export_entry(const struct pe *pe, const struct export_dir *d, uint32_t i,
			const char **name, uint32_t *func_rva)
{
	uint32_t name_rva;
	int64_t name_off;
	uint16_t ord;

	if (rd32(pe, d->n_off + 4ULL * i, &name_rva) || rd16(pe, d->o_off + 2ULL * i, &ord))
		return -1;
	if (ord >= d->nr_funcs || rd32(pe, d->f_off + 4ULL * ord, func_rva))
		return 1;
	name_off = pe_rva_to_offset(pe, name_rva);
	*name = name_off < 0 ? NULL : rdstr(pe, name_off);
	return 0;
}

int pe_exports(const struct pe *pe, pe_sym_cb cb, void *arg)
{
	struct export_dir d;
	uint32_t i;
	int nr = 0, ret;

	ret = export_dir(pe, &d);
	if (ret)
		return ret < 0 ? -1 : 0;

	for (i = 0; i < d.nr_names; i++) {
		uint32_t func_rva;
		const char *name;

		ret = export_entry(pe, &d, i, &name, &func_rva);
		if (ret < 0)
			return -1;
		if (ret)
			continue;
		/* Forwarders point back into the export directory. */
		if (func_rva >= pe->export_rva && func_rva - pe->export_rva < pe->export_size)
			continue;
		ret = emit(pe, cb, arg, pe_rva_to_offset(pe, func_rva), name);
		if (ret < 0)
			return -1;
		nr += ret;
	}
	return nr;
}

uint32_t pe_export_rva(const struct pe *pe, const char *name)
{
	struct export_dir d;
	const char *s;
	uint32_t i, rva;
	int ret;

	if (export_dir(pe, &d))
		return 0;
	for (i = 0; i < d.nr_names; i++) {
		ret = export_entry(pe, &d, i, &s, &rva);
		if (ret < 0)
			return 0;
		if (!ret && s && !strcmp(s, name))
			return rva;
	}
	return 0;
}

int pe_coff_symbols(const struct pe *pe, pe_sym_cb cb, void *arg)
{
	uint64_t strtab, end;
	uint32_t i, strtab_size;
	int nr = 0, ret;

	if (!pe->symtab_offset || !pe->nr_syms)
		return 0;
	strtab = (uint64_t)pe->symtab_offset + (uint64_t)pe->nr_syms * COFF_SYM_SIZE;
	if (strtab > pe->len || rd32(pe, strtab, &strtab_size))
		return -1;
	end = strtab + strtab_size;
	if (end > pe->len)
		end = pe->len;

	for (i = 0; i < pe->nr_syms; i++) {
		uint64_t o = (uint64_t)pe->symtab_offset + (uint64_t)i * COFF_SYM_SIZE;
		const uint8_t *s = pe->buf + o;
		uint32_t value = 0, zeroes = 0, str_off = 0;
		uint16_t type = 0, sec = 0;
		char short_name[9];
		const char *name;
		int secnum;
		int64_t code;
		uint8_t class = s[16], naux = s[17];

		rd32(pe, o, &zeroes);
		rd32(pe, o + 4, &str_off);
		rd32(pe, o + 8, &value);
		rd16(pe, o + 12, &sec);
		rd16(pe, o + 14, &type);
		secnum = (int16_t)sec;
		i += naux;

		/*
		 * Functions, and symbols of no type (assembly routines such as
		 * ___chkstk_ms, import thunks) where they are code: not section
		 * symbols (auxiliary records, names starting with '.').
		 */
		if ((class != COFF_CLASS_EXTERNAL && class != COFF_CLASS_STATIC) ||
		    ((type & 0x30) != COFF_DTYPE_FUNCTION && (type || naux)) ||
		    secnum <= 0 || (unsigned int)secnum > pe->nr_sections)
			continue;

		if (zeroes == 0) {
			if (strtab + str_off >= end)
				continue;
			name = rdstr(pe, strtab + str_off);
		} else {
			memcpy(short_name, s, 8);
			short_name[8] = '\0';
			name = short_name[0] ? short_name : NULL;
		}
		if (!type && name && name[0] == '.')
			continue;
		code = pe_rva_to_offset(pe, (uint64_t)pe->sections[secnum - 1].vaddr + value);
		ret = emit(pe, cb, arg, code, name);
		if (ret < 0)
			return -1;
		nr += ret;
	}
	return nr;
}

struct func_entry {
	uint64_t start, end;
	uint32_t primary;	/* RVA where the function it belongs to starts */
};

static int func_cmp(const void *a, const void *b)
{
	const struct func_entry *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

/*
 * The RVA of the function a RUNTIME_FUNCTION entry (@begin, @unwind)
 * belongs to: its own begin, or, for a chained entry, that of the entry its
 * unwind info chains to, followed to the end. An UnwindData with its low bit
 * set is the RVA of another entry (an indirect one).
 */
static uint32_t func_primary(const struct pe *pe, uint32_t begin, uint32_t unwind)
{
	uint32_t u = unwind, next;
	int hops;
	int64_t o;

	for (hops = 0; hops < MAX_CHAIN; hops++) {
		if (u & 1) {
			o = pe_rva_to_offset(pe, u & ~1U);
		} else {
			o = pe_rva_to_offset(pe, u);
			/* UNWIND_INFO: version and flags, prologue size, count of codes */
			if (o < 0 || o + 4 > (int64_t)pe->len ||
			    !((pe->buf[o] >> 3) & UNW_FLAG_CHAININFO))
				break;
			/* The chained RUNTIME_FUNCTION follows the codes, kept even */
			o += 4 + 2 * ((pe->buf[o + 2] + 1) & ~1);
		}
		if (o < 0 || rd32(pe, o, &next) || rd32(pe, o + 8, &u))
			break;
		begin = next;
	}
	return begin;
}

long pe_functions(const struct pe *pe, struct pe_func **out)
{
	struct func_entry *e;
	uint32_t i, n, begin, end, unwind;
	size_t nr = 0, j;
	int64_t dir, start;
	uint64_t code_end;

	*out = NULL;
	dir = pe->except_rva ? pe_rva_to_offset(pe, pe->except_rva) : -1;
	if (pe->machine != MACHINE_AMD64 || dir < 0)
		return 0;
	n = pe->except_size / 12;
	if ((uint64_t)n * 12 > pe->len - dir)
		n = (pe->len - dir) / 12;
	e = malloc((n ? n : 1) * sizeof(*e));
	if (!e)
		return -1;
	for (i = 0; i < n; i++) {
		uint64_t o = dir + 12ULL * i;

		rd32(pe, o, &begin);
		rd32(pe, o + 4, &end);
		rd32(pe, o + 8, &unwind);
		start = pe_rva_to_offset(pe, begin);
		if (end <= begin || start < 0 || !pe_offset_is_code(pe, start))
			continue;
		code_end = pe_code_end(pe, start);
		e[nr].start = start;
		e[nr].end = end - begin < code_end - start ? start + (end - begin) : code_end;
		e[nr].primary = func_primary(pe, begin, unwind);
		nr++;
	}
	qsort(e, nr, sizeof(*e), func_cmp);
	/* A chained part right after the part before it, of one function: one range */
	for (i = 0, j = 0; i < nr; i++) {
		if (j && e[j - 1].primary == e[i].primary && e[i].start <= e[j - 1].end) {
			if (e[i].end > e[j - 1].end)
				e[j - 1].end = e[i].end;
			continue;
		}
		e[j++] = e[i];
	}
	nr = j;
	*out = malloc((nr ? nr : 1) * sizeof(**out));
	if (!*out) {
		free(e);
		return -1;
	}
	for (j = 0; j < nr; j++) {
		(*out)[j].start = e[j].start;
		(*out)[j].end = e[j].end;
	}
	free(e);
	return nr;
}

int pe_codeview(const struct pe *pe, struct pe_codeview *cv)
{
	int64_t dir = pe->debug_rva ? pe_rva_to_offset(pe, pe->debug_rva) : -1;
	uint32_t i, type, size, raw, sig;
	const char *path;

	if (dir < 0)
		return -1;
	/* IMAGE_DEBUG_DIRECTORY entries of 28 bytes; type 2 is CodeView */
	for (i = 0; i < pe->debug_size / 28 && i < 64; i++) {
		uint64_t e = (uint64_t)dir + (uint64_t)i * 28;

		if (rd32(pe, e + 12, &type) || rd32(pe, e + 16, &size) ||
		    rd32(pe, e + 24, &raw))
			return -1;
		/* "RSDS", GUID, age, path: the PDB 7.0 format */
		if (type != 2 || size < 25 || rd32(pe, raw, &sig) || sig != 0x53445352 ||
		    raw + 24ULL > pe->len || rd32(pe, raw + 20ULL, &cv->age))
			continue;
		path = rdstr(pe, raw + 24ULL);
		if (!path || raw + 24ULL + strlen(path) >= (uint64_t)raw + size)
			continue;
		memcpy(cv->guid, pe->buf + raw + 4, sizeof(cv->guid));
		cv->path = path;
		return 0;
	}
	return -1;
}

int pe_build_id(const struct pe *pe, uint8_t id[PE_BUILD_ID_SIZE])
{
	static const uint8_t order[PE_BUILD_ID_SIZE] = {
		3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15
	};
	struct pe_codeview cv;
	int i;

	if (pe_codeview(pe, &cv))
		return -1;
	/* Data1 (4 bytes), Data2 and Data3 (2 each) are stored little-endian */
	for (i = 0; i < PE_BUILD_ID_SIZE; i++)
		id[i] = cv.guid[order[i]];
	return 0;
}
