// SPDX-License-Identifier: GPL-2.0
/*
 * PDB reader. A PDB is an MSF container: a file of fixed size blocks, a
 * superblock, and a stream directory that lists each stream's size and
 * blocks. Function names are in two places: each module's symbol stream
 * (S_GPROC32/S_LPROC32: section, offset, length and the name the compiler
 * gave) and the symbol record stream the DBI stream names, whose S_PUB32
 * records are the linker's public symbols (decorated names, no length). The
 * section numbers they use are the image's own (1-based), so the image's
 * section table turns them into file offsets.
 *
 * Streams are copied out of their blocks one at a time, never more than the
 * file holds; every offset read from the file is checked before use.
 */
#include <stdlib.h>
#include <string.h>
#include "pdb.h"

#define MSF_MAGIC		"Microsoft C/C++ MSF 7.00\r\n\x1a" "DS\0\0\0"
#define MSF_MAGIC_LEN		32
#define NIL_STREAM		0xffffffffu
#define STREAM_PDB		1
#define STREAM_DBI		3
#define DBI_HEADER_LEN		64
#define MODI_HEADER_LEN		64
#define NO_STREAM		0xffff

#define S_PUB32			0x110e
#define S_LPROC32		0x110f
#define S_GPROC32		0x1110
#define S_LPROC32_ID		0x1146
#define S_GPROC32_ID		0x1147
#define PROC_NAME		39	/* offsets in a record, its length field included */
#define PUB_NAME		14
#define CVPSF_FUNCTION		0x2

static uint16_t le16(const uint8_t *p)
{
	return p[0] | p[1] << 8;
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static uint32_t stream_size(const struct pdb *pdb, uint32_t stream)
{
	uint32_t size = le32(pdb->sizes + 4 * stream);

	return size == NIL_STREAM ? 0 : size;
}

static uint32_t nr_blocks(const struct pdb *pdb, uint32_t size)
{
	return size / pdb->block_size + !!(size % pdb->block_size);
}

/* A copy of stream @stream, *len bytes, to free(); NULL with *err set. */
static uint8_t *read_stream(const struct pdb *pdb, uint32_t stream, uint32_t *len,
			    const char **err)
{
	const uint8_t *blocks;
	uint32_t size, i, n;
	uint8_t *buf;

	/* Blocks checked by read_directory() */
	*err = "stream number out of range";
	if (stream >= pdb->nr_streams)
		return NULL;
	size = stream_size(pdb, stream);
	blocks = pdb->dir + pdb->first_block[stream];
	buf = malloc(size ? size : 1);
	*err = "out of memory";
	if (!buf)
		return NULL;
	for (i = 0; i < nr_blocks(pdb, size); i++) {
		uint32_t block = le32(blocks + 4 * i);

		n = size - i * pdb->block_size;
		if (n > pdb->block_size)
			n = pdb->block_size;
		memcpy(buf + (size_t)i * pdb->block_size,
		       pdb->buf + (size_t)block * pdb->block_size, n);
	}
	*len = size;
	return buf;
}

/* The superblock and the stream directory */
static int read_directory(struct pdb *pdb, const char **err)
{
	uint32_t dir_len, map_block, i, n, stream, at;
	const uint8_t *map;
	uint8_t *used;

	*err = "not a PDB file (no MSF 7.00 superblock)";
	if (pdb->len < MSF_MAGIC_LEN + 24 || memcmp(pdb->buf, MSF_MAGIC, MSF_MAGIC_LEN))
		return -1;
	pdb->block_size = le32(pdb->buf + 32);
	pdb->nr_blocks = le32(pdb->buf + 40);
	dir_len = le32(pdb->buf + 44);
	map_block = le32(pdb->buf + 52);
	*err = "bad MSF block size";
	if (pdb->block_size != 512 && pdb->block_size != 1024 &&
	    pdb->block_size != 2048 && pdb->block_size != 4096)
		return -1;
	*err = "truncated PDB file: fewer blocks than its superblock says";
	if ((uint64_t)pdb->nr_blocks * pdb->block_size > pdb->len)
		return -1;
	/* Its blocks are listed in one block: at most block_size / 4 of them */
	*err = "bad stream directory size or place";
	if (dir_len < 4 || nr_blocks(pdb, dir_len) > pdb->block_size / 4 ||
	    map_block == 0 || map_block >= pdb->nr_blocks)
		return -1;
	pdb->dir = malloc(dir_len);
	*err = "out of memory";
	if (!pdb->dir)
		return -1;
	map = pdb->buf + (size_t)map_block * pdb->block_size;
	for (i = 0; i < nr_blocks(pdb, dir_len); i++) {
		uint32_t block = le32(map + 4 * i);

		n = dir_len - i * pdb->block_size;
		if (n > pdb->block_size)
			n = pdb->block_size;
		*err = "a stream directory block is past the end of the file";
		if (block == 0 || block >= pdb->nr_blocks)
			return -1;
		memcpy(pdb->dir + (size_t)i * pdb->block_size,
		       pdb->buf + (size_t)block * pdb->block_size, n);
	}

	/* Number of streams, their sizes, then each one's block numbers */
	pdb->nr_streams = le32(pdb->dir);
	*err = "bad stream directory: more streams than it has room for";
	if (pdb->nr_streams > (dir_len - 4) / 4)
		return -1;
	pdb->sizes = pdb->dir + 4;
	pdb->first_block = calloc(pdb->nr_streams ? pdb->nr_streams : 1,
				  sizeof(*pdb->first_block));
	*err = "out of memory";
	if (!pdb->first_block)
		return -1;
	/* Each block in one stream at most: streams take no more than the file */
	used = calloc(pdb->nr_blocks / 8 + 1, 1);
	*err = "out of memory";
	if (!used)
		return -1;
	at = 4 + 4 * pdb->nr_streams;
	for (stream = 0; stream < pdb->nr_streams; stream++) {
		n = nr_blocks(pdb, stream_size(pdb, stream));
		*err = "bad stream directory: block lists past its end";
		if ((dir_len - at) / 4 < n)
			goto out;
		pdb->first_block[stream] = at;
		for (i = 0; i < n; i++, at += 4) {
			uint32_t block = le32(pdb->dir + at);

			*err = "bad stream directory: a block past the end of the file";
			if (block >= pdb->nr_blocks)
				goto out;
			*err = "bad stream directory: a block in two streams";
			if (used[block / 8] & 1 << block % 8)
				goto out;
			used[block / 8] |= 1 << block % 8;
		}
	}
	*err = NULL;
out:
	free(used);
	return *err ? -1 : 0;
}

int pdb_open(struct pdb *pdb, const uint8_t *buf, size_t len, const char **err)
{
	uint8_t *info = NULL, *dbi = NULL;
	uint32_t info_len, dbi_len;
	int ret = -1;

	memset(pdb, 0, sizeof(*pdb));
	pdb->buf = buf;
	pdb->len = len;
	if (read_directory(pdb, err))
		goto out;
	/* PDB info stream: version, signature, age, GUID */
	info = read_stream(pdb, STREAM_PDB, &info_len, err);
	if (!info)
		goto out;
	*err = "no PDB info stream";
	if (info_len < 28)
		goto out;
	memcpy(pdb->guid, info + 12, sizeof(pdb->guid));
	/* The DBI stream's age is the one the image records */
	dbi = read_stream(pdb, STREAM_DBI, &dbi_len, err);
	if (!dbi)
		goto out;
	*err = "no DBI stream (a PDB without debug information)";
	if (dbi_len < DBI_HEADER_LEN || le32(dbi) != 0xffffffffu)
		goto out;
	pdb->age = le32(dbi + 8);
	*err = NULL;
	ret = 0;
out:
	free(info);
	free(dbi);
	if (ret)
		pdb_close(pdb);
	return ret;
}

void pdb_close(struct pdb *pdb)
{
	free(pdb->dir);
	free(pdb->first_block);
	pdb->dir = NULL;
	pdb->first_block = NULL;
}

int pdb_matches(const struct pdb *pdb, const struct pe_codeview *cv)
{
	return !memcmp(pdb->guid, cv->guid, sizeof(cv->guid)) && pdb->age == cv->age;
}

struct walk {
	const struct pdb *pdb;
	const struct pe *pe;
	pe_sym_cb cb;
	void *arg;
	struct pdb_stats *stats;
	uint64_t *procs;	/* file offsets where procedures start */
	size_t nr_procs, alloc_procs;
	int nr;
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The file offset of code at section @seg, offset @off of the image, or -1 */
static int64_t code_offset(const struct pe *pe, uint16_t seg, uint32_t off)
{
	int64_t fo;

	if (seg == 0 || seg > pe->nr_sections)
		return -1;
	fo = pe_rva_to_offset(pe, (uint64_t)pe->sections[seg - 1].vaddr + off);
	return fo >= 0 && pe_offset_is_code(pe, fo) ? fo : -1;
}

/* A name that ends inside its record, or NULL */
static const char *record_name(const uint8_t *rec, uint32_t rec_len, uint32_t at)
{
	if (at >= rec_len || !memchr(rec + at, '\0', rec_len - at) || !rec[at])
		return NULL;
	return (const char *)rec + at;
}

/*
 * Call @fn for each record of @buf[start, end): a u16 length (of what
 * follows it), a u16 kind, the rest. -1 with *err set for a record that
 * runs past @end.
 */
static int walk_records(struct walk *w, const uint8_t *buf, uint32_t start, uint32_t end,
			int (*fn)(struct walk *w, const uint8_t *rec, uint32_t len),
			const char **err)
{
	uint32_t at = start;

	if (start > end) {
		*err = "a symbol stream shorter than its header";
		return -1;
	}
	while (end - at >= 4) {
		uint32_t len = 2 + le16(buf + at);

		if (len < 4 || len > end - at) {
			*err = "a symbol record runs past its stream's end";
			return -1;
		}
		if (fn(w, buf + at, len) < 0) {
			*err = "out of memory";
			return -1;
		}
		at += len;
	}
	return 0;
}

static int add_proc(struct walk *w, const uint8_t *rec, uint32_t len)
{
	uint16_t kind = le16(rec + 2);
	const char *name;
	int64_t fo;

	if (kind != S_GPROC32 && kind != S_LPROC32 && kind != S_GPROC32_ID &&
	    kind != S_LPROC32_ID)
		return 0;
	name = record_name(rec, len, PROC_NAME);
	fo = name ? code_offset(w->pe, le16(rec + 36), le32(rec + 32)) : -1;
	if (fo < 0) {
		w->stats->outside++;
		return 0;
	}
	if (w->nr_procs == w->alloc_procs) {
		size_t n = w->alloc_procs ? 2 * w->alloc_procs : 256;
		uint64_t *v = realloc(w->procs, n * sizeof(*v));

		if (!v)
			return -1;
		w->procs = v;
		w->alloc_procs = n;
	}
	w->procs[w->nr_procs++] = fo;
	w->stats->procs++;
	w->nr++;
	return w->cb(w->arg, fo, le32(rec + 16), name) ? -1 : 0;
}

static int add_public(struct walk *w, const uint8_t *rec, uint32_t len)
{
	const char *name;
	uint64_t fo;
	int64_t at;

	if (le16(rec + 2) != S_PUB32 || len < PUB_NAME || !(le32(rec + 4) & CVPSF_FUNCTION))
		return 0;
	name = record_name(rec, len, PUB_NAME);
	at = name ? code_offset(w->pe, le16(rec + 12), le32(rec + 8)) : -1;
	if (at < 0) {
		w->stats->outside++;
		return 0;
	}
	/* The procedure there has the compiler's name and a length */
	fo = at;
	if (w->nr_procs && bsearch(&fo, w->procs, w->nr_procs, sizeof(fo), cmp_u64))
		return 0;
	w->stats->publics++;
	w->nr++;
	return w->cb(w->arg, fo, 0, name) ? -1 : 0;
}

int pdb_symbols(const struct pdb *pdb, const struct pe *pe, pe_sym_cb cb, void *arg,
		struct pdb_stats *stats, const char **err)
{
	struct walk w = { .pdb = pdb, .pe = pe, .cb = cb, .arg = arg, .stats = stats };
	uint32_t dbi_len, mod_len, at, end, stream_len;
	uint8_t *dbi, *stream, *seen;
	int ret = -1;

	memset(stats, 0, sizeof(*stats));
	seen = calloc(pdb->nr_streams ? pdb->nr_streams : 1, 1);
	dbi = seen ? read_stream(pdb, STREAM_DBI, &dbi_len, err) : NULL;
	if (!dbi) {
		if (!seen)
			*err = "out of memory";
		free(seen);
		return -1;
	}
	/* The module list follows the header */
	mod_len = le32(dbi + 24);
	*err = "bad DBI stream: module list past its end";
	if (mod_len > dbi_len - DBI_HEADER_LEN)
		goto out;
	end = DBI_HEADER_LEN + mod_len;
	for (at = DBI_HEADER_LEN; end - at >= MODI_HEADER_LEN; ) {
		const uint8_t *mod = dbi + at, *nul;
		uint16_t sym_stream = le16(mod + 34);
		uint32_t sym_len = le32(mod + 36);

		/* Then its module and object file names, padded to 4 bytes */
		nul = memchr(mod + MODI_HEADER_LEN, '\0', end - at - MODI_HEADER_LEN);
		nul = nul ? memchr(nul + 1, '\0', dbi + end - nul - 1) : NULL;
		*err = "bad DBI stream: a module's names run past the module list";
		if (!nul)
			goto out;
		at = nul + 1 - dbi;
		at += (4 - at % 4) % 4;
		if (at > end)
			at = end;
		/* Each stream once, whatever modules name it */
		if (sym_stream == NO_STREAM || !sym_len || sym_stream >= pdb->nr_streams ||
		    seen[sym_stream])
			continue;
		seen[sym_stream] = 1;
		stream = read_stream(pdb, sym_stream, &stream_len, err);
		if (!stream)
			goto out;
		/* A signature (4: C13), then the records */
		ret = sym_len <= stream_len ?
		      walk_records(&w, stream, 4, sym_len, add_proc, err) : -1;
		if (sym_len > stream_len)
			*err = "a module's symbols run past its stream's end";
		free(stream);
		if (ret)
			goto out;
		ret = -1;
	}

	/* The publics: from the symbol record stream */
	if (le16(dbi + 20) != NO_STREAM) {
		if (w.nr_procs)
			qsort(w.procs, w.nr_procs, sizeof(*w.procs), cmp_u64);
		stream = read_stream(pdb, le16(dbi + 20), &stream_len, err);
		if (!stream)
			goto out;
		ret = walk_records(&w, stream, 0, stream_len, add_public, err);
		free(stream);
		if (ret)
			goto out;
	}
	ret = w.nr;
out:
	free(w.procs);
	free(seen);
	free(dbi);
	return ret;
}
