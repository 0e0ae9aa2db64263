// SPDX-License-Identifier: GPL-2.0
/*
 * One image: its symbols from the reader that fits (a live process's perf
 * map, --map, ReadyToRun metadata, PE tables and PDB), written as a debug
 * file; and every image of a directory.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include "mkdebugelf.h"
#include "pdb.h"
#include "r2r.h"

int mkdir_parents(char *path)
{
	char *p;

	for (p = strchr(path + 1, '/'); p; p = strchr(p + 1, '/')) {
		*p = '\0';
		if (mkdir(path, 0755) && errno != EEXIST) {
			fprintf(stderr, "%s: cannot create %s: %s\n", prog, path, strerror(errno));
			*p = '/';
			return -1;
		}
		*p = '/';
	}
	return 0;
}

/*
 * The directories from @root down to the debug file @file (@root followed
 * by "/usr/lib/debug/..."), made where missing, never followed if they are
 * symbolic links: with --root, DIR may be a process's root, whose absolute
 * links lead out of it; such a link is an error. With --symfs (@symfs),
 * perf report --symfs DIR looks for every object under DIR, so the rest of
 * / is made visible there: a link in the way is replaced by a directory,
 * and the entries of the same directory of / that one lacks are linked, so
 * that system libraries, their debug files and the kernel keep their names.
 */
static int install_dirs(const char *root, const char *file, int symfs)
{
	char dir[PATH_MAX], link[PATH_MAX], target[PATH_MAX];
	const char *q, *rel, *next, *base = strrchr(file, '/') + 1;
	size_t len = strlen(root), nlen;
	struct dirent *e;
	struct stat st;
	DIR *d;

	if (snprintf(dir, sizeof(dir), "%s/", root) >= (int)sizeof(dir) || mkdir_parents(dir))
		return -1;
	errno = ENAMETOOLONG;
	if (strlen(file) >= sizeof(dir))
		goto fail;
	/* Each directory below @root, then the file itself */
	for (q = file + len; q; q = q + 1 < base ? strchr(q + 1, '/') : NULL) {
		snprintf(dir, sizeof(dir), "%.*s", (int)(q - file), file);
		rel = dir + len;
		if (*rel && !lstat(dir, &st) && S_ISLNK(st.st_mode)) {
			errno = ELOOP;
			if (!symfs || unlink(dir))
				goto fail;
		}
		if (*rel && mkdir(dir, 0755) && errno != EEXIST)
			goto fail;
		d = symfs ? opendir(*rel ? rel : "/") : NULL;
		if (!d)
			continue;
		/* not the next directory down, or the debug file: those are made */
		next = q + 1;
		nlen = strcspn(next, "/");
		while ((e = readdir(d))) {
			if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
			    (strlen(e->d_name) == nlen && !strncmp(e->d_name, next, nlen)))
				continue;
			if (snprintf(link, sizeof(link), "%s/%s", dir, e->d_name) >=
			    (int)sizeof(link) || snprintf(target, sizeof(target), "%s/%s", rel,
			    e->d_name) >= (int)sizeof(target) || !lstat(link, &st))
				continue;
			if (symlink(target, link) && errno != EEXIST) {
				closedir(d);
				strcpy(dir, link);
				goto fail;
			}
		}
		closedir(d);
	}
	/* The file: written in place, not through a link (one made by an earlier run) */
	strcpy(dir, file);
	errno = ELOOP;
	if (!lstat(file, &st) && S_ISLNK(st.st_mode) && (!symfs || unlink(file)))
		goto fail;
	return 0;
fail:
	fprintf(stderr, "%s: cannot make %s: %s%s\n", prog, dir, strerror(errno),
		errno == ELOOP ? " (a symbolic link: not written through)" : "");
	return -1;
}

/* The assemblies a ReadyToRun image refers to: NAME.dll beside it. */
struct refs {
	const char *dir;
	struct {
		void *p;
		size_t len;
	} map[64];
	unsigned int nr;
};

static const uint8_t *load_ref(void *arg, const char *name, size_t *len)
{
	struct refs *refs = arg;
	char path[PATH_MAX];
	struct stat st;
	void *p;
	int fd;

	if (refs->nr == sizeof(refs->map) / sizeof(refs->map[0]) || strchr(name, '/') ||
	    snprintf(path, sizeof(path), "%s/%s.dll", refs->dir, name) >= (int)sizeof(path))
		return NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || !st.st_size) {
		close(fd);
		return NULL;
	}
	p = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return NULL;
	refs->map[refs->nr].p = p;
	refs->map[refs->nr++].len = st.st_size;
	*len = st.st_size;
	return p;
}

/*
 * Write the debug file for @image, read at @file (the same file, seen from
 * this process). Its symbols come from the live process's perf map if
 * @perf_map is given, else from --map, the image's ReadyToRun code or its PE
 * tables. Returns 0, 1 if @image is ELF (nothing to write), 2 if, one image
 * of a directory, it has nothing to name (not PE, no symbols), or -1.
 */
/* Map @path read-only: its bytes, *len of them, or NULL with errno set */
const uint8_t *map_file(const char *path, size_t *len)
{
	struct stat st;
	void *p;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size == 0) {
		close(fd);
		errno = EINVAL;
		return NULL;
	}
	p = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return NULL;
	*len = st.st_size;
	return p;
}

/*
 * A truncated image whose CodeView record is cut off names no PDB: say so
 * if one named after the image is next to it, since it can't be checked.
 */
static void pdb_cut_off(const char *image, const char *file, const struct pe *pe)
{
	const char *slash = strrchr(file, '/'), *dot = strrchr(file, '.');
	struct stat st;
	char *pdb;

	if (pe->need <= pe->len)
		return;
	if (!dot || (slash && dot < slash))
		dot = file + strlen(file);
	if (asprintf(&pdb, "%.*s.pdb", (int)(dot - file), file) < 0)
		return;
	if (!stat(pdb, &st))
		fprintf(stderr, "%s: %s: %s is not read: the image's CodeView record, which "
			"names its PDB and identifies its build, is cut off by the truncation\n",
			prog, image, pdb);
	free(pdb);
}

/*
 * The symbols of the PDB the image @pe was linked with, if there is one:
 * --pdb FILE, else the file its CodeView record names, looked for next to
 * the image, then at the path recorded. One that isn't the image's (another
 * GUID or age) is refused, and the next place is tried. Returns the number
 * added, 0 if there is no PDB to read, -1 on errors.
 */
int add_pdb(const char *image, const char *file, const struct pe *pe, struct syms *s,
	    const struct opts *o)
{
	const char *tried[3] = { NULL }, *base = NULL, *err, *refused = NULL;
	char *next_to = NULL, *slash;
	struct pe_codeview cv;
	struct pdb_stats st;
	const uint8_t *buf;
	int i, nr = -1, found = 0;
	struct pdb pdb;
	size_t len;

	if (pe_codeview(pe, &cv)) {
		if (o->pdb)
			fprintf(stderr, "%s: %s has no CodeView record%s: it names no PDB to "
				"check %s against\n", prog, image, pe->need > pe->len ?
				" (cut off by the truncation)" : "", o->pdb);
		else
			pdb_cut_off(image, file, pe);
		return o->pdb ? -1 : 0;
	}
	if (o->pdb) {
		tried[0] = o->pdb;
	} else {
		/* A path from Windows or from here: its last component, either way */
		base = cv.path;
		for (i = 0; cv.path[i]; i++)
			if (cv.path[i] == '/' || cv.path[i] == '\\')
				base = cv.path + i + 1;
		slash = strrchr(file, '/');
		if (asprintf(&next_to, "%.*s/%s", slash ? (int)(slash - file) : 1,
			     slash ? file : ".", base) < 0)
			return -1;
		tried[0] = next_to;
		if (strcmp(next_to, cv.path))
			tried[1] = cv.path;
	}
	/* The first of them that is the image's PDB */
	for (i = 0; tried[i] && nr < 0; i++) {
		buf = map_file(tried[i], &len);
		if (!buf) {
			if (o->pdb)
				fprintf(stderr, "%s: --pdb %s: %s\n", prog, o->pdb, strerror(errno));
			continue;
		}
		found = 1;
		if (pdb_open(&pdb, buf, len, &err)) {
			fprintf(stderr, "%s: %s: %s\n", prog, tried[i], err);
		} else if (!pdb_matches(&pdb, &cv)) {
			refused = tried[i];
			fprintf(stderr, "%s: %s is not the PDB of %s: its GUID or age differs "
				"(another build's?)%s\n", prog, tried[i], image,
				tried[i + 1] ? "; looking at the path the image records" : "");
			pdb_close(&pdb);
		} else {
			nr = pdb_symbols(&pdb, pe, syms_add, s, &st, &err);
			if (nr < 0)
				fprintf(stderr, "%s: %s: %s\n", prog, tried[i], err);
			else if (!o->quiet)
				printf("%s: %s: %lu functions, %lu more public symbols%s%s\n",
				       image, tried[i], st.procs, st.publics,
				       refused ? ", not from " : "", refused ? refused : "");
			pdb_close(&pdb);
		}
		munmap((void *)buf, len);
	}
	if (!found && !o->pdb && !o->quiet)
		fprintf(stderr, "%s: %s: its PDB %s is not next to it nor at %s: give it "
			"with --pdb FILE for the names of its functions\n", prog, image, base,
			cv.path);
	free(next_to);
	return found ? nr : o->pdb ? -1 : 0;
}

/*
 * A ReadyToRun image that can't be read: in a truncated file, what is
 * missing is cut off, not corrupt, and the message says so.
 */
static void r2r_error(const char *image, const char *err, int truncated)
{
	if (truncated)
		fprintf(stderr, "%s: %s: its ReadyToRun data is cut off by the truncation (%s)\n",
			prog, image, err);
	else
		fprintf(stderr, "%s: %s: %s\n", prog, image, err);
}

int do_image(const char *image, const char *file, const struct opts *o,
		    const struct syms *perf_map, const struct range *r, size_t nr)
{
	const char *err = "not a PE image", *machine = o->machine, *out = o->out;
	const struct pe_section *sec;
	struct syms s = { 0 };
	struct pe pe = { 0 };
	char *path = NULL;
	struct utsname uts;
	const uint8_t *buf;
	int is_pe = 0, is_r2r = 0, truncated, em, class, fd, ret = -1;
	char why[128];
	uint8_t build_id[PE_BUILD_ID_SIZE];
	struct r2r_stats r2r;
	struct stat st;
	size_t i;

	fd = open(file, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_size == 0) {
		fprintf(stderr, "%s: %s: not a readable, non-empty regular file\n", prog, image);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	buf = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (buf == MAP_FAILED) {
		fprintf(stderr, "%s: cannot map %s: %s\n", prog, image, strerror(errno));
		return -1;
	}
	if (st.st_size >= 4 && !memcmp(buf, ELFMAG, SELFMAG)) {
		if (!o->quiet)
			fprintf(stderr, "%s: %s is ELF: perf reads its symbols itself\n", prog,
				image);
		ret = 1;
		goto out;
	}
	s.limit = st.st_size;

	is_pe = !o->no_pe && pe_open(&pe, buf, st.st_size, &err) == 0;
	truncated = !o->no_pe && pe.need > (uint64_t)st.st_size;
	if (truncated && !is_pe) {
		snprintf(why, sizeof(why), "truncated PE image: %llu bytes, its headers "
			 "alone take %llu", (unsigned long long)st.st_size,
			 (unsigned long long)pe.need);
		err = why;
	} else if (truncated) {
		fprintf(stderr, "%s: %s is truncated: %llu bytes, its headers describe %llu "
			"at least\n", prog, image, (unsigned long long)st.st_size,
			(unsigned long long)pe.need);
	}
	if (o->in_dir && !is_pe) {
		if (!o->quiet)
			fprintf(stderr, "%s: %s: skipped: %s\n", prog, image, err);
		ret = 2;
		goto out;
	}
	if (!o->map && !perf_map && !is_pe) {
		fprintf(stderr, "%s: %s: %s; give its symbols with --map\n", prog, image, err);
		goto out;
	}
	if (is_pe && !o->map && !perf_map) {
		is_r2r = r2r_detect(&pe, &em, &class, &err);
		if (is_r2r < 0) {
			r2r_error(image, err, truncated);
			goto out;
		}
		if (is_r2r == 2 && o->in_dir) {
			if (!o->quiet)
				fprintf(stderr, "%s: %s: skipped: .NET IL only, no precompiled "
					"code\n", prog, image);
			ret = 2;
			goto out;
		}
		if (is_r2r == 2) {
			fprintf(stderr, "%s: %s: .NET IL only: no precompiled code to name (the "
				"runtime's perf map names what it JIT compiles)\n", prog, image);
			goto out;
		}
		is_r2r = is_r2r == 1;
	}
	if (o->rva && !is_pe) {
		fprintf(stderr, "%s: --rva needs a PE image: %s: %s\n", prog, image,
			o->no_pe ? "--no-pe given" : err);
		goto out;
	}

	if (is_r2r && !machine) {
		/* the ReadyToRun image's own, found by r2r_detect() */
	} else if (is_pe && pe_machine(pe.machine, &em, &class) == 0 && !machine) {
		/* the image's own */
	} else {
		if (!machine) {
			uname(&uts);
			machine = uts.machine;
		}
		if (named_machine(machine, &em, &class)) {
			fprintf(stderr, "%s: unknown machine %s\n", prog, machine);
			goto out;
		}
	}

	if (perf_map) {
		if (syms_add_live(&s, perf_map, r, nr) < 0)
			goto out;
	} else if (o->map) {
		FILE *f = fopen(o->map, "r");
		int err_map;

		if (!f) {
			fprintf(stderr, "%s: cannot open %s: %s\n", prog, o->map, strerror(errno));
			goto out;
		}
		err_map = read_map(f, o->map, &s, is_pe ? &pe : NULL, o->rva);
		fclose(f);
		if (err_map)
			goto out;
	} else if (is_r2r) {
		const char *slash = strrchr(file, '/');
		struct refs refs = { 0 };
		int nr_r2r;

		/* The assemblies it refers to, from its directory. */
		if (asprintf(&path, "%.*s", slash ? (int)(slash - file) : 1,
			     slash ? file : ".") < 0)
			goto out;
		refs.dir = path;
		nr_r2r = r2r_methods(&pe, syms_add, &s, load_ref, &refs, &r2r, &err);
		while (refs.nr--)
			munmap(refs.map[refs.nr].p, refs.map[refs.nr].len);
		free(path);
		path = NULL;
		if (nr_r2r < 0) {
			r2r_error(image, err, truncated);
			goto out;
		}
		if (!o->quiet)
			printf("%s: ReadyToRun %u.%u image for %s: %lu methods, %lu generic "
			       "instantiations (%lu not fully named, %lu from other assemblies), "
			       "%lu of %lu runtime functions in them\n", image, r2r.major,
			       r2r.minor, r2r.os, r2r.methods, r2r.instances, r2r.unnamed,
			       r2r.other, r2r.covered, r2r.functions);
	} else {
		int nr_exp = pe_exports(&pe, syms_add, &s);
		int nr_coff = pe_coff_symbols(&pe, syms_add, &s);

		if (nr_exp < 0)
			fprintf(stderr, truncated ? "%s: %s: export table cut off by the "
				"truncation, not used\n" : "%s: %s: corrupt export table, not "
				"used\n", prog, image);
		if (nr_coff < 0)
			fprintf(stderr, truncated ? "%s: %s: COFF symbol table cut off by the "
				"truncation, not used\n" : "%s: %s: corrupt COFF symbol table, "
				"not used\n", prog, image);
		if (add_pdb(image, file, &pe, &s, o) < 0 && o->pdb)
			goto out;
		if (syms_use_functions(&s, &pe))
			goto out;
	}
	if (s.skipped)
		fprintf(stderr, "%s: %s: skipped %lu symbols outside the image's code\n", prog,
			image, s.skipped);
	if (syms_finish(&s, is_pe ? &pe : NULL))
		goto out;
	if (!s.nr) {
		if (!o->quiet)
			fprintf(stderr, "%s: no symbols for %s%s\n", prog, image,
				o->in_dir ? ": skipped" : "");
		if (o->in_dir)
			ret = 2;
		goto out;
	}

	if (o->install) {
		if (asprintf(&path, "%s/usr/lib/debug%s.debug", o->root ? o->root : "",
			     image) < 0 || (o->root ? install_dirs(o->root, path, o->symfs) :
					    mkdir_parents(path)))
			goto out;
		out = path;
	}
	if (write_elf(out, &s, em, class, is_pe ? &pe : NULL,
		      is_pe && !pe_build_id(&pe, build_id) ? build_id : NULL))
		goto out;
	if (o->verbose) {
		for (i = 0; i < s.nr; i++)
			printf("%#10llx %#8llx %s\n", (unsigned long long)s.v[i].offset,
			       (unsigned long long)s.v[i].size, s.v[i].name);
	}
	if (!o->quiet)
		printf("%s: %zu symbols\n", out, s.nr);
	sec = is_pe && !is_r2r ? pe_unaligned_code(&pe) : NULL;
	if (sec)
		fprintf(stderr, "%s: %s: section %s is at file offset %#x for RVA %#x, not "
			"on a page boundary: Wine copies such code into anonymous memory, "
			"where no debug file applies; run mkdebugelf --write-perf-map PID "
			"while the program runs\n", prog, image, sec->name, sec->raw_offset,
			sec->vaddr);
	ret = 0;
out:
	syms_free(&s);
	free(path);
	pe_close(&pe);
	munmap((void *)buf, st.st_size);
	return ret;
}

/* Entries of a directory that are not read, by kind */
enum { NOT_DIR, NOT_LINK, NOT_FIFO, NOT_EMPTY, NOT_OTHER, NR_NOT };

static const char *const not_read_kind[NR_NOT][2] = {
	[NOT_DIR] = { "folder", "folders" },
	[NOT_LINK] = { "symbolic link", "symbolic links" },
	[NOT_FIFO] = { "FIFO", "FIFOs" },
	[NOT_EMPTY] = { "empty file", "empty files" },
	[NOT_OTHER] = { "other entry (socket, device)", "other entries (sockets, devices)" },
};

static int not_read(const struct stat *st)
{
	if (S_ISDIR(st->st_mode))
		return NOT_DIR;
	if (S_ISLNK(st->st_mode))
		return NOT_LINK;
	if (S_ISFIFO(st->st_mode))
		return NOT_FIFO;
	if (S_ISREG(st->st_mode))
		return NOT_EMPTY;
	return NOT_OTHER;
}

/*
 * --install DIR: a debug file for each image in directory @dir (regular
 * files, not symlinks: perf sees the files they point to; not its
 * subdirectories): a whole .NET shared framework in one command. What isn't
 * a PE image, or has nothing to name, is skipped with a note; the entries
 * not read are counted by kind in the summary.
 */
int do_dir(const char *dir, struct opts *o)
{
	unsigned long written = 0, skipped = 0, failed = 0, nots[NR_NOT] = { 0 };
	struct dirent **ents;
	char path[PATH_MAX];
	struct stat st;
	int i, k, nr, err, sep = ';';

	nr = scandir(dir, &ents, NULL, alphasort);
	if (nr < 0) {
		fprintf(stderr, "%s: cannot read %s: %s\n", prog, dir, strerror(errno));
		return 1;
	}
	o->in_dir = 1;
	for (i = 0; i < nr; i++) {
		const char *name = ents[i]->d_name;

		if (!strcmp(name, ".") || !strcmp(name, "..")) {
			free(ents[i]);
			continue;
		}
		if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path) ||
		    lstat(path, &st)) {
			nots[NOT_OTHER]++;
			free(ents[i]);
			continue;
		}
		free(ents[i]);
		if (!S_ISREG(st.st_mode) || !st.st_size) {
			nots[not_read(&st)]++;
			continue;
		}
		err = do_image(path, path, o, NULL, NULL, 0);
		fflush(stdout);		/* its lines before the next one's notes */
		if (err < 0)
			failed++;
		else if (err)
			skipped++;
		else
			written++;
	}
	free(ents);
	printf("%s: %lu debug files written, %lu files skipped, %lu failed", dir, written,
	       skipped, failed);
	for (k = 0; k < NR_NOT; k++) {
		if (!nots[k])
			continue;
		printf("%c %s%lu %s", sep, sep == ';' ? "not read: " : "", nots[k],
		       not_read_kind[k][nots[k] != 1]);
		sep = ',';
	}
	printf("\n");
	return failed || !written;
}
