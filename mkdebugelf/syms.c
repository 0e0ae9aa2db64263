// SPDX-License-Identifier: GPL-2.0
/*
 * The symbols found for an image: file offsets, sizes and names, gathered
 * from any reader, then sorted and sized for the debug file.
 */
#include <stdlib.h>
#include <string.h>
#include "mkdebugelf.h"

int syms_add(void *arg, uint64_t offset, uint64_t size, const char *name)
{
	struct syms *s = arg;

	if (offset >= s->limit || !name[0]) {
		s->skipped++;
		return 0;
	}
	if (s->nr == s->alloc) {
		size_t n = s->alloc ? s->alloc * 2 : 256;
		struct sym *v = realloc(s->v, n * sizeof(*v));

		if (!v)
			return -1;
		s->v = v;
		s->alloc = n;
	}
	s->v[s->nr].name = strdup(name);
	if (!s->v[s->nr].name)
		return -1;
	s->v[s->nr].offset = offset;
	s->v[s->nr].size = size;
	s->nr++;
	return 0;
}

static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;

	if (x->offset != y->offset)
		return x->offset < y->offset ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int name_cmp(const void *a, const void *b)
{
	const struct sym *const *x = a, *const *y = b;
	int r = strcmp((*x)->name, (*y)->name);

	if (r)
		return r;
	return (*x)->offset < (*y)->offset ? -1 : (*x)->offset > (*y)->offset;
}

int syms_use_functions(struct syms *s, const struct pe *pe)
{
	long nr = pe_functions(pe, &s->funcs);

	if (nr < 0)
		return -1;
	s->nr_funcs = nr;
	return 0;
}

/*
 * Where a symbol of unknown size at @offset must end: at the end of the
 * function range it starts in, and before the next range starts (code there
 * is another function's, named or not).
 */
static uint64_t function_limit(const struct syms *s, uint64_t offset)
{
	size_t lo = 0, hi = s->nr_funcs, mid;
	uint64_t limit = UINT64_MAX;

	/* The first range starting after @offset: hi */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (s->funcs[mid].start <= offset)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (hi < s->nr_funcs)
		limit = s->funcs[hi].start;
	if (hi && offset < s->funcs[hi - 1].end && s->funcs[hi - 1].end < limit)
		limit = s->funcs[hi - 1].end;
	return limit;
}

/*
 * Sort by offset, drop exact duplicates (an export that is also a COFF
 * symbol), give unknown sizes the room up to the next symbol, cut sizes that
 * run into the next symbol, and make repeated names unique with "#N".
 */
int syms_finish(struct syms *s, const struct pe *pe)
{
	struct sym **by_name;
	char **renamed;
	size_t i, j;
	int ret = -1;

	if (!s->nr)
		return 0;
	qsort(s->v, s->nr, sizeof(*s->v), sym_cmp);
	for (i = 0, j = 0; i < s->nr; i++) {
		if (j && s->v[j - 1].offset == s->v[i].offset &&
		    !strcmp(s->v[j - 1].name, s->v[i].name)) {
			if (!s->v[j - 1].size)
				s->v[j - 1].size = s->v[i].size;
			free(s->v[i].name);
			continue;
		}
		s->v[j++] = s->v[i];
	}
	s->nr = j;

	for (i = 0; i < s->nr; i++) {
		uint64_t next = s->limit, off = s->v[i].offset;

		/* Symbols at one offset (aliases) share the next one's start. */
		for (j = i + 1; j < s->nr && s->v[j].offset == off; j++)
			;
		if (j < s->nr)
			next = s->v[j].offset;
		if (pe && pe_code_end(pe, off) < next)
			next = pe_code_end(pe, off);
		if (!s->v[i].size && function_limit(s, off) < next)
			next = function_limit(s, off);
		if (!s->v[i].size || s->v[i].size > next - s->v[i].offset)
			s->v[i].size = next - s->v[i].offset;
	}

	by_name = malloc((s->nr ? s->nr : 1) * sizeof(*by_name));
	renamed = calloc(s->nr ? s->nr : 1, sizeof(*renamed));
	if (!by_name || !renamed)
		goto out;
	for (i = 0; i < s->nr; i++)
		by_name[i] = &s->v[i];
	qsort(by_name, s->nr, sizeof(*by_name), name_cmp);
	for (i = 1, j = 1; i < s->nr; i++) {
		if (strcmp(by_name[i]->name, by_name[i - 1]->name)) {
			j = 1;
			continue;
		}
		if (asprintf(&renamed[by_name[i] - s->v], "%s#%zu", by_name[i]->name, ++j) < 0)
			goto out;
	}
	for (i = 0; i < s->nr; i++) {
		if (renamed[i]) {
			free(s->v[i].name);
			s->v[i].name = renamed[i];
			renamed[i] = NULL;
		}
	}
	ret = 0;
out:
	for (i = 0; renamed && i < s->nr; i++)
		free(renamed[i]);
	free(renamed);
	free(by_name);
	return ret;
}

/*
 * Symbols for an image of a live process: the perf map's entries (absolute
 * addresses) that start inside one of the image's executable mappings,
 * turned into file offsets as perf does (ip - start + pgoff). Returns how
 * many there are, added to @s unless it is NULL, or -1.
 */
long syms_add_live(struct syms *s, const struct syms *perf_map, const struct range *r,
		   size_t nr)
{
	long found = 0;
	size_t i, j;

	for (i = 0; i < perf_map->nr; i++) {
		const struct sym *e = &perf_map->v[i];

		for (j = 0; j < nr; j++) {
			uint64_t size = e->size;

			if (e->offset < r[j].start || e->offset >= r[j].end)
				continue;
			if (size > r[j].end - e->offset)
				size = r[j].end - e->offset;
			if (s && syms_add(s, e->offset - r[j].start + r[j].pgoff, size, e->name))
				return -1;
			found++;
			break;
		}
	}
	return found;
}

void syms_free(struct syms *s)
{
	size_t i;

	for (i = 0; i < s->nr; i++)
		free(s->v[i].name);
	free(s->v);
	s->v = NULL;
	s->nr = s->alloc = 0;
	free(s->funcs);
	s->funcs = NULL;
	s->nr_funcs = 0;
}
