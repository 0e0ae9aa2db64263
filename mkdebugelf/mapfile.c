// SPDX-License-Identifier: GPL-2.0
/*
 * Symbol lists in text: "START SIZE name" lines in hex, as perf maps and
 * crossgen2 --perfmap files (RVAs, with header records) have them.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "mkdebugelf.h"

static int parse_hex(const char **pp, uint64_t *v)
{
	const char *p = *pp;
	int digits = 0;

	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	for (*v = 0; ; p++, digits++) {
		int d;

		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else if (*p >= 'A' && *p <= 'F')
			d = *p - 'A' + 10;
		else
			break;
		if (*v >> 60)
			return -1;
		*v = *v << 4 | d;
	}
	if (!digits || (*p != ' ' && *p != '\t'))
		return -1;
	while (*p == ' ' || *p == '\t')
		p++;
	*pp = p;
	return 0;
}

/*
 * "OFFSET SIZE name" lines, or with @rva "RVA SIZE name" (crossgen2's
 * --perfmap): its header pseudo-records (RVAs 0xFFFFFFFB-0xFFFFFFFF, size 0)
 * are recognised and skipped.
 */
#define BAD_LINES_SHOWN	8

int read_map(FILE *f, const char *path, struct syms *s, const struct pe *pe, int rva)
{
	unsigned long bad = 0, header = 0, lineno = 0, bad_lines[BAD_LINES_SHOWN];
	char *line = NULL;
	size_t n = 0;
	ssize_t len;

	while ((len = getline(&line, &n, f)) > 0) {
		uint64_t start, size;
		const char *p = line;
		int64_t off;

		lineno++;
		while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
			line[--len] = '\0';
		/* Leading blanks, as perf's reader (strtoull) skips them */
		while (*p == ' ' || *p == '\t')
			p++;
		if (strlen(line) != (size_t)len || parse_hex(&p, &start) ||
		    parse_hex(&p, &size) || !*p)
			goto malformed;
		if (rva && start >= 0xfffffffbULL && start <= 0xffffffffULL && !size) {
			header++;
			continue;
		}
		if (!size || start + size < start)
			goto malformed;
		off = rva ? pe_rva_to_offset(pe, start) : (int64_t)start;
		if (off < 0) {
			s->skipped++;
			continue;
		}
		if (syms_add(s, off, size, p)) {
			free(line);
			return -1;
		}
		continue;
malformed:
		if (bad < BAD_LINES_SHOWN)
			bad_lines[bad] = lineno;
		bad++;
	}
	free(line);
	if (bad) {
		unsigned long i;

		fprintf(stderr, "%s: %s: skipped %lu malformed of %lu lines: line", prog, path,
			bad, lineno);
		for (i = 0; i < bad && i < BAD_LINES_SHOWN; i++)
			fprintf(stderr, "%s %lu", i ? "," : bad > 1 ? "s" : "", bad_lines[i]);
		fprintf(stderr, "%s\n", bad > BAD_LINES_SHOWN ? ", ..." : "");
	}
	if (header)
		fprintf(stderr, "%s: %s: skipped %lu crossgen2 header records\n", prog, path,
			header);
	return 0;
}
