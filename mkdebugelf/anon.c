// SPDX-License-Identifier: GPL-2.0
/*
 * --write-perf-map PID: a perf map for the PE images a process runs from
 * anonymous memory. Wine can't mmap() the sections of an image whose file
 * offsets are off the page boundary of their RVAs (the 0x200 FileAlignment
 * Windows linkers use by default): it maps the headers from the file and
 * copies the rest into anonymous memory, where no debug file applies. perf
 * names anonymous code from /tmp/perf-PID.map only, and Wine writes none.
 *
 * An image is found by the file mapping of its headers (file offset 0, "MZ"),
 * whose start is its base. For the parts of [base, base + SizeOfImage) that
 * are anonymous executable memory, a "START SIZE name" line is appended for
 * each of its functions (PDB, COFF symbols, exports) at base + RVA, to the
 * perf map where perf looks for it (in the process's mount namespace), made
 * the process's user's if new, in one write(), so that a perf reading it
 * never sees half of what was written. Lines for addresses the perf map
 * names already are left out, so running it again after new DLLs are loaded
 * adds theirs only.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include "mkdebugelf.h"

struct vma {
	uint64_t start, end, pgoff;
	int exec;
	char *name;		/* "" for anonymous memory */
};

struct lines {
	char *buf;
	size_t len, alloc;
	unsigned long nr;
};

static void free_vmas(struct vma *v, size_t nr)
{
	while (nr--)
		free(v[nr].name);
	free(v);
}

/* The mappings of process @pid: *nr in *out, or -1 */
static int read_vmas(long pid, struct vma **out, size_t *nr)
{
	char path[64], *line = NULL;
	struct vma *v = NULL, *p;
	size_t n = 0;
	FILE *f;
	int ret = -1;

	*nr = 0;
	snprintf(path, sizeof(path), "/proc/%ld/maps", pid);
	f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "%s: cannot open %s: %s\n", prog, path, strerror(errno));
		return -1;
	}
	while (getline(&line, &n, f) > 0) {
		unsigned long long start, end, pgoff;
		char perm[5];
		int pos;

		if (sscanf(line, "%llx-%llx %4s %llx %*s %*s %n", &start, &end, perm, &pgoff,
			   &pos) != 4)
			continue;
		p = realloc(v, (*nr + 1) * sizeof(*v));
		if (!p)
			goto out;
		v = p;
		line[pos + strcspn(line + pos, "\n")] = '\0';
		v[*nr] = (struct vma){ start, end, pgoff, perm[2] == 'x', strdup(line + pos) };
		if (!v[*nr].name)
			goto out;
		(*nr)++;
	}
	ret = 0;
out:
	if (ret) {
		free_vmas(v, *nr);
		v = NULL;
		*nr = 0;
	}
	*out = v;
	free(line);
	fclose(f);
	return ret;
}

/* Is @addr in anonymous executable memory of @v? */
static int in_anon_code(const struct vma *v, size_t nr, uint64_t addr)
{
	size_t i;

	for (i = 0; i < nr; i++) {
		if (addr >= v[i].start && addr < v[i].end)
			return v[i].exec && !v[i].name[0];
	}
	return 0;
}

static int lines_add(struct lines *l, uint64_t start, uint64_t size, const char *name)
{
	size_t need = strlen(name) + 48;

	if (l->alloc - l->len < need) {
		size_t alloc = l->alloc * 2 > l->len + need ? l->alloc * 2 : l->len + need + 4096;
		char *buf = realloc(l->buf, alloc);

		if (!buf)
			return -1;
		l->buf = buf;
		l->alloc = alloc;
	}
	l->len += snprintf(l->buf + l->len, l->alloc - l->len, "%llx %llx %s\n",
			   (unsigned long long)start, (unsigned long long)size, name);
	l->nr++;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The lines for image @m of process @pid, if it is a PE image with code in
 * anonymous memory, but for addresses in @have (sorted), added to @l: 1 for
 * a PE image, 0 for another file, or -1.
 */
static int image_lines(long pid, const struct vma *m, const struct vma *v, size_t nr,
		       const uint64_t *have, size_t nr_have, struct lines *l,
		       const struct opts *o)
{
	char path[PATH_MAX];
	unsigned long before = l->nr, here = 0;
	struct syms s = { 0 };
	const uint8_t *buf;
	struct pe pe;
	const char *err;
	uint64_t base = m->start, end;
	size_t len, i;
	int ret = 0;

	snprintf(path, sizeof(path), "/proc/%ld/root%s", pid, m->name);
	buf = map_file(path, &len);
	if (!buf)
		return 0;
	if (len < 2 || memcmp(buf, "MZ", 2) || pe_open(&pe, buf, len, &err)) {
		munmap((void *)buf, len);
		return 0;
	}
	ret = 1;
	end = base + pe.image_size;
	for (i = 0; i < nr; i++)
		here += v[i].exec && !v[i].name[0] && v[i].start >= base && v[i].start < end;
	if (!here)
		goto out;

	s.limit = len;
	if (pe_exports(&pe, syms_add, &s) < 0)
		fprintf(stderr, "%s: %s: corrupt export table, not used\n", prog, m->name);
	if (pe_coff_symbols(&pe, syms_add, &s) < 0)
		fprintf(stderr, "%s: %s: corrupt COFF symbol table, not used\n", prog, m->name);
	if (add_pdb(m->name, path, &pe, &s, o) < 0 || syms_use_functions(&s, &pe) ||
	    syms_finish(&s, &pe)) {
		ret = -1;
		goto out;
	}
	for (i = 0; i < s.nr; i++) {
		int64_t rva = pe_offset_to_rva(&pe, s.v[i].offset);
		uint64_t addr = base + rva;

		if (rva < 0 || !in_anon_code(v, nr, addr) ||
		    (nr_have && bsearch(&addr, have, nr_have, sizeof(addr), cmp_u64)))
			continue;
		if (lines_add(l, addr, s.v[i].size, s.v[i].name)) {
			ret = -1;
			goto out;
		}
	}
	printf("%s: %lu functions in anonymous memory at %#llx-%#llx, of %zu\n", m->name,
	       l->nr - before, (unsigned long long)base, (unsigned long long)end, s.nr);
out:
	syms_free(&s);
	pe_close(&pe);
	munmap((void *)buf, len);
	return ret;
}

/* The effective uid and gid of process @pid, from /proc/PID/status */
static int process_ids(long pid, uid_t *uid, gid_t *gid)
{
	char path[64], *line = NULL;
	unsigned int r, e, found = 0;
	size_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/status", pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (getline(&line, &n, f) > 0) {
		if (sscanf(line, "Uid: %u %u", &r, &e) == 2) {
			*uid = e;
			found |= 1;
		} else if (sscanf(line, "Gid: %u %u", &r, &e) == 2) {
			*gid = e;
			found |= 2;
		}
	}
	free(line);
	fclose(f);
	return found == 3 ? 0 : -1;
}

/* Append @l to the perf map at @path, the process's (@uid's) if new */
static int append(const char *path, const struct lines *l, uid_t uid, gid_t gid)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
		      0644);
	struct stat st;
	ssize_t n;

	if (fd < 0) {
		fprintf(stderr, "%s: cannot open %s: %s\n", prog, path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (st.st_uid != uid && st.st_uid != 0 && st.st_uid != geteuid())) {
		fprintf(stderr, "%s: %s: not a regular file of root, you or the process's user: "
			"not written\n", prog, path);
		close(fd);
		return -1;
	}
	/* perf trusts a perf map of the process's user to name objects */
	if (st.st_size == 0 && st.st_uid != uid && geteuid() == 0 && fchown(fd, uid, gid))
		fprintf(stderr, "%s: %s: cannot give it to uid %u: %s\n", prog, path,
			(unsigned int)uid, strerror(errno));
	n = write(fd, l->buf, l->len);
	close(fd);
	if (n != (ssize_t)l->len) {
		fprintf(stderr, "%s: %s: write failed: %s\n", prog, path,
			n < 0 ? strerror(errno) : "short write");
		return -1;
	}
	return 0;
}

int do_write_perf_map(long pid, const struct opts *o)
{
	struct syms have = { .limit = UINT64_MAX };
	struct lines l = { 0 };
	char path[PATH_MAX];
	uint64_t *starts = NULL;
	struct vma *v = NULL;
	size_t nr = 0, i;
	unsigned long images = 0;
	uid_t uid = 0;
	gid_t gid = 0;
	int ret = 1, r;
	FILE *f;

	if (process_ids(pid, &uid, &gid) || read_vmas(pid, &v, &nr)) {
		fprintf(stderr, "%s: no process %ld\n", prog, pid);
		goto out;
	}
	/* Where perf looks first: /tmp of its mount namespace, its pid there */
	snprintf(path, sizeof(path), "/proc/%ld/root/tmp/perf-%ld.map", pid, ns_pid(pid));
	f = fopen(path, "r");
	if (f) {
		int err = read_map(f, path, &have, NULL, 0);

		fclose(f);
		if (err)
			goto out;
		starts = malloc((have.nr ? have.nr : 1) * sizeof(*starts));
		if (!starts)
			goto out;
		for (i = 0; i < have.nr; i++)
			starts[i] = have.v[i].offset;
		qsort(starts, have.nr, sizeof(*starts), cmp_u64);
	}

	for (i = 0; i < nr; i++) {
		const struct vma *m = &v[i];
		size_t len = strlen(m->name);

		if (m->pgoff || m->name[0] != '/' ||
		    (len > 10 && !strcmp(m->name + len - 10, " (deleted)")) ||
		    (i && !strcmp(v[i - 1].name, m->name)))
			continue;
		r = image_lines(pid, m, v, nr, starts, have.nr, &l, o);
		if (r < 0)
			goto out;
		images += r;
	}
	if (!images) {
		fprintf(stderr, "%s: process %ld maps no PE image: nothing to name (a Wine "
			"process maps its .exe once it has started)\n", prog, pid);
		goto out;
	}
	if (!l.nr) {
		fprintf(stderr, "%s: process %ld runs no code of PE images from anonymous memory "
			"that %s doesn't name already\n", prog, pid, path);
		ret = 0;
		goto out;
	}
	if (append(path, &l, uid, gid))
		goto out;
	printf("%s: %lu lines appended\n", path, l.nr);
	ret = 0;
out:
	free(l.buf);
	free(starts);
	syms_free(&have);
	free_vmas(v, nr);
	return ret;
}
