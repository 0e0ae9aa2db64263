// SPDX-License-Identifier: GPL-2.0
/*
 * mkdebugelf: write an ELF debug file naming the code of a non-ELF image
 * (a PE DLL, a .NET ReadyToRun image, a runtime's own AOT format), so that
 * perf, stock or not, names samples in that image in every process.
 *
 * perf turns a sample in a file mapping into a file offset (ip - map start +
 * pgoff) and, for an object it can't read, looks for a debug file such as
 * /usr/lib/debug/<path>.debug. Symbols at the image's file offsets in a NOBITS
 * .text whose address equals its file offset come out right, whatever address
 * the image is mapped at.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <getopt.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include "pdb.h"
#include "pe.h"
#include "r2r.h"

#define ALIGN(x, a)	(((x) + (a) - 1) & ~((uint64_t)(a) - 1))

struct sym {
	uint64_t offset, size;
	char *name;
};

struct syms {
	struct sym *v;
	size_t nr, alloc;
	uint64_t limit;		/* symbols must start below this file offset */
	unsigned long skipped;
};

static const char *prog = "mkdebugelf";

static int syms_add(void *arg, uint64_t offset, uint64_t size, const char *name)
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

/*
 * Sort by offset, drop exact duplicates (an export that is also a COFF
 * symbol), give unknown sizes the room up to the next symbol, cut sizes that
 * run into the next symbol, and make repeated names unique with "#N".
 */
static int syms_finish(struct syms *s, const struct pe *pe)
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
		uint64_t next = i + 1 < s->nr ? s->v[i + 1].offset : s->limit;

		if (pe && pe_code_end(pe, s->v[i].offset) < next)
			next = pe_code_end(pe, s->v[i].offset);
		/* Symbols at one offset (aliases) share the next one's start. */
		for (j = i + 1; j < s->nr && s->v[j].offset == s->v[i].offset; j++)
			next = j + 1 < s->nr ? s->v[j + 1].offset : s->limit;
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
static int read_map(FILE *f, const char *path, struct syms *s, const struct pe *pe, int rva)
{
	unsigned long bad = 0, header = 0, lineno = 0;
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
		if (strlen(line) != (size_t)len || parse_hex(&p, &start) ||
		    parse_hex(&p, &size) || !*p) {
			bad++;
			continue;
		}
		if (rva && start >= 0xfffffffbULL && start <= 0xffffffffULL && !size) {
			header++;
			continue;
		}
		if (!size || start + size < start) {
			bad++;
			continue;
		}
		off = rva ? pe_rva_to_offset(pe, start) : (int64_t)start;
		if (off < 0) {
			s->skipped++;
			continue;
		}
		if (syms_add(s, off, size, p)) {
			free(line);
			return -1;
		}
	}
	free(line);
	if (bad)
		fprintf(stderr, "%s: %s: skipped %lu malformed of %lu lines\n", prog, path, bad,
			lineno);
	if (header)
		fprintf(stderr, "%s: %s: skipped %lu crossgen2 header records\n", prog, path,
			header);
	return 0;
}

static int pe_machine(uint16_t m, int *em, int *class)
{
	switch (m) {
	case 0x8664: *em = EM_X86_64; *class = ELFCLASS64; return 0;
	case 0x014c: *em = EM_386; *class = ELFCLASS32; return 0;
	case 0xaa64: *em = EM_AARCH64; *class = ELFCLASS64; return 0;
	case 0x01c0: case 0x01c2: case 0x01c4: *em = EM_ARM; *class = ELFCLASS32; return 0;
	default: return -1;
	}
}

static int named_machine(const char *name, int *em, int *class)
{
	if (!strcmp(name, "x86_64")) {
		*em = EM_X86_64; *class = ELFCLASS64;
	} else if (!strcmp(name, "i386") || !strcmp(name, "i686")) {
		*em = EM_386; *class = ELFCLASS32;
	} else if (!strcmp(name, "aarch64") || !strcmp(name, "arm64")) {
		*em = EM_AARCH64; *class = ELFCLASS64;
	} else if (!strncmp(name, "arm", 3)) {
		*em = EM_ARM; *class = ELFCLASS32;
	} else {
		return -1;
	}
	return 0;
}

static Elf_Scn *new_section(Elf *e, const char *name, size_t *shstr_off, char *shstr,
			    Elf64_Word type, Elf64_Xword flags)
{
	Elf_Scn *scn = elf_newscn(e);
	GElf_Shdr shdr;

	if (!scn || !gelf_getshdr(scn, &shdr))
		return NULL;
	shdr.sh_name = *shstr_off;
	shdr.sh_type = type;
	shdr.sh_flags = flags;
	strcpy(shstr + *shstr_off, name);
	*shstr_off += strlen(name) + 1;
	if (!gelf_update_shdr(scn, &shdr))
		return NULL;
	return scn;
}

static int add_data(Elf_Scn *scn, void *buf, size_t size, Elf_Type type, size_t align)
{
	Elf_Data *d = elf_newdata(scn);

	if (!d)
		return -1;
	d->d_buf = buf;
	d->d_size = size;
	d->d_type = type;
	d->d_align = align;
	d->d_version = EV_CURRENT;
	return 0;
}

/* Put a byte section at file offset @off; returns the offset after it. */
static uint64_t place(Elf_Scn *scn, uint64_t off, size_t size)
{
	GElf_Shdr shdr;

	gelf_getshdr(scn, &shdr);
	shdr.sh_offset = off;
	shdr.sh_size = size;
	shdr.sh_addralign = 1;
	gelf_update_shdr(scn, &shdr);
	return off + size;
}

static int write_elf(const char *out, const struct syms *s, int em, int class)
{
	char shstr[64] = "";
	size_t shstr_off = 1, str_size = 1, i;
	uint64_t off;
	Elf_Scn *text, *symtab, *strtab, *shstrtab;
	GElf_Shdr shdr;
	GElf_Ehdr ehdr;
	void *syms = NULL;
	char *str = NULL;
	int fd, ret = -1;
	size_t symsz = class == ELFCLASS64 ? sizeof(Elf64_Sym) : sizeof(Elf32_Sym);
	Elf *e;

	fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "%s: cannot write %s: %s\n", prog, out, strerror(errno));
		return -1;
	}
	e = elf_begin(fd, ELF_C_WRITE, NULL);
	if (!e || !gelf_newehdr(e, class) || !gelf_getehdr(e, &ehdr))
		goto out;
	ehdr.e_ident[EI_DATA] = ELFDATA2LSB;
	ehdr.e_ident[EI_VERSION] = EV_CURRENT;
	ehdr.e_type = ET_DYN;
	ehdr.e_machine = em;
	ehdr.e_version = EV_CURRENT;

	text = new_section(e, ".text", &shstr_off, shstr, SHT_NOBITS,
			   SHF_ALLOC | SHF_EXECINSTR);
	symtab = new_section(e, ".symtab", &shstr_off, shstr, SHT_SYMTAB, 0);
	strtab = new_section(e, ".strtab", &shstr_off, shstr, SHT_STRTAB, 0);
	shstrtab = new_section(e, ".shstrtab", &shstr_off, shstr, SHT_STRTAB, 0);
	if (!text || !symtab || !strtab || !shstrtab)
		goto out;
	ehdr.e_shstrndx = elf_ndxscn(shstrtab);
	if (!gelf_update_ehdr(e, &ehdr))
		goto out;

	for (i = 0; i < s->nr; i++)
		str_size += strlen(s->v[i].name) + 1;
	str = calloc(1, str_size);
	syms = calloc(s->nr + 1, symsz);
	if (!str || !syms)
		goto out;
	if (add_data(symtab, syms, (s->nr + 1) * symsz, ELF_T_SYM, 8) ||
	    add_data(strtab, str, str_size, ELF_T_BYTE, 1) ||
	    add_data(shstrtab, shstr, shstr_off, ELF_T_BYTE, 1))
		goto out;
	str_size = 1;
	for (i = 0; i < s->nr; i++) {
		GElf_Sym sym = {
			.st_name = str_size,
			.st_value = s->v[i].offset,
			.st_size = s->v[i].size,
			.st_info = GELF_ST_INFO(STB_GLOBAL, STT_FUNC),
			.st_shndx = elf_ndxscn(text),
		};

		strcpy(str + str_size, s->v[i].name);
		str_size += strlen(s->v[i].name) + 1;
		if (!gelf_update_sym(elf_getdata(symtab, NULL), i + 1, &sym))
			goto out;
	}

	/*
	 * Lay the file out here, so that .text (NOBITS, covering the image) can
	 * have its address equal to its offset: perf then takes the symbol
	 * values as they are, file offsets in the image.
	 */
	elf_flagelf(e, ELF_C_SET, ELF_F_LAYOUT);
	off = class == ELFCLASS64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	off = ALIGN(off, 16);
	gelf_getshdr(text, &shdr);
	shdr.sh_offset = shdr.sh_addr = off;
	shdr.sh_size = s->limit;
	shdr.sh_addralign = 16;
	gelf_update_shdr(text, &shdr);

	off = ALIGN(off, 8);
	gelf_getshdr(symtab, &shdr);
	shdr.sh_offset = off;
	shdr.sh_size = (s->nr + 1) * symsz;
	shdr.sh_link = elf_ndxscn(strtab);
	shdr.sh_info = 1;
	shdr.sh_entsize = symsz;
	shdr.sh_addralign = 8;
	gelf_update_shdr(symtab, &shdr);
	off += shdr.sh_size;

	off = place(strtab, off, str_size);
	off = place(shstrtab, off, shstr_off);

	gelf_getehdr(e, &ehdr);
	ehdr.e_shoff = ALIGN(off, 8);
	gelf_update_ehdr(e, &ehdr);
	if (elf_update(e, ELF_C_WRITE) < 0)
		goto out;
	ret = 0;
out:
	if (ret)
		fprintf(stderr, "%s: cannot write %s: %s\n", prog, out, elf_errmsg(-1));
	if (e)
		elf_end(e);
	close(fd);
	free(syms);
	free(str);
	if (ret)
		unlink(out);
	return ret;
}

static int mkdir_parents(char *path)
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

struct opts {
	const char *map, *out, *root, *machine, *pdb;
	int rva, no_pe, install, verbose;
	int quiet;		/* -q, kept for a directory only */
	int in_dir;		/* one image of a directory: skip what isn't one */
};

/* An executable mapping of an image in a live process. */
struct range {
	uint64_t start, end, pgoff;
};

/*
 * Symbols for an image of a live process: the perf map's entries (absolute
 * addresses) that start inside one of the image's executable mappings,
 * turned into file offsets as perf does (ip - start + pgoff). Returns how
 * many there are, added to @s unless it is NULL, or -1.
 */
static long add_live(struct syms *s, const struct syms *perf_map, const struct range *r,
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
static const uint8_t *map_file(const char *path, size_t *len)
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
 * The symbols of the PDB the image @pe was linked with, if there is one:
 * --pdb FILE, else the file its CodeView record names, looked for next to
 * the image, then at the path recorded. One that isn't the image's (another
 * GUID or age) is refused. Returns the number added, 0 if there is no PDB
 * to read, -1 on errors.
 */
static int add_pdb(const char *image, const char *file, const struct pe *pe, struct syms *s,
		   const struct opts *o)
{
	const char *tried[3] = { NULL }, *base = NULL, *err;
	char *next_to = NULL, *slash;
	struct pe_codeview cv;
	struct pdb_stats st;
	const uint8_t *buf = NULL;
	struct pdb pdb;
	size_t len = 0;
	int i, nr = -1;

	if (pe_codeview(pe, &cv)) {
		if (o->pdb)
			fprintf(stderr, "%s: %s has no CodeView record: it names no PDB to check "
				"%s against\n", prog, image, o->pdb);
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
	for (i = 0; tried[i] && !buf; i++)
		buf = map_file(tried[i], &len);
	if (!buf) {
		if (o->pdb)
			fprintf(stderr, "%s: --pdb %s: %s\n", prog, o->pdb, strerror(errno));
		else if (!o->quiet)
			fprintf(stderr, "%s: %s: its PDB %s is not next to it nor at %s: give it "
				"with --pdb FILE for the names of its functions\n", prog, image,
				base, cv.path);
		free(next_to);
		return o->pdb ? -1 : 0;
	}
	i--;
	if (pdb_open(&pdb, buf, len, &err)) {
		fprintf(stderr, "%s: %s: %s\n", prog, tried[i], err);
	} else if (!pdb_matches(&pdb, &cv)) {
		fprintf(stderr, "%s: %s is not the PDB of %s: its GUID or age differs (another "
			"build's?)\n", prog, tried[i], image);
		pdb_close(&pdb);
	} else {
		nr = pdb_symbols(&pdb, pe, syms_add, s, &st, &err);
		if (nr < 0)
			fprintf(stderr, "%s: %s: %s\n", prog, tried[i], err);
		else if (!o->quiet)
			printf("%s: %s: %lu functions, %lu more public symbols\n", image,
			       tried[i], st.procs, st.publics);
		pdb_close(&pdb);
	}
	munmap((void *)buf, len);
	free(next_to);
	return nr;
}

static int do_image(const char *image, const char *file, const struct opts *o,
		    const struct syms *perf_map, const struct range *r, size_t nr)
{
	const char *err = "not a PE image", *machine = o->machine, *out = o->out;
	const struct pe_section *sec;
	struct syms s = { 0 };
	struct pe pe = { 0 };
	char *path = NULL;
	struct utsname uts;
	const uint8_t *buf;
	int is_pe = 0, is_r2r = 0, em, class, fd, ret = -1;
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
			fprintf(stderr, "%s: %s: %s\n", prog, image, err);
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
		if (add_live(&s, perf_map, r, nr) < 0)
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
			fprintf(stderr, "%s: %s: %s\n", prog, image, err);
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
			fprintf(stderr, "%s: %s: corrupt export table, not used\n", prog, image);
		if (nr_coff < 0)
			fprintf(stderr, "%s: %s: corrupt COFF symbol table, not used\n", prog,
				image);
		if (add_pdb(image, file, &pe, &s, o) < 0 && o->pdb)
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
			     image) < 0 || mkdir_parents(path))
			goto out;
		out = path;
	}
	if (write_elf(out, &s, em, class))
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
			"where no debug file applies (perf names anonymous code only from "
			"/tmp/perf-PID.map)\n", prog, image, sec->name, sec->raw_offset,
			sec->vaddr);
	ret = 0;
out:
	for (i = 0; i < s.nr; i++)
		free(s.v[i].name);
	free(s.v);
	free(path);
	pe_close(&pe);
	munmap((void *)buf, st.st_size);
	return ret;
}

/*
 * Open a live process's perf map as perf's fallback does: no symlink, no
 * blocking on a FIFO, a regular file owned by root, by us or by the process.
 */
static FILE *open_perf_map(const char *path, uid_t pid_uid)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	struct stat st = { 0 };
	FILE *f;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (st.st_uid && st.st_uid != geteuid() && st.st_uid != pid_uid)) {
		if (!S_ISREG(st.st_mode))
			fprintf(stderr, "%s: %s: not a regular file, not read\n", prog, path);
		else
			fprintf(stderr, "%s: %s: owned by uid %u, not root, you or the process: "
				"not read\n", prog, path, (unsigned int)st.st_uid);
		close(fd);
		errno = EPERM;
		return NULL;
	}
	f = fdopen(fd, "r");
	if (!f)
		close(fd);
	return f;
}

/* The pid of process @pid in its own pid namespace (the last NSpid field). */
static long ns_pid(long pid)
{
	char path[64], *line = NULL;
	long nspid = pid;
	size_t n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/status", pid);
	f = fopen(path, "r");
	if (!f)
		return pid;
	while (getline(&line, &n, f) > 0) {
		char *p = line, *end;

		if (strncmp(line, "NSpid:", 6))
			continue;
		for (p += 6; ; p = end) {
			long v = strtol(p, &end, 10);

			if (end == p)
				break;
			nspid = v;
		}
		break;
	}
	free(line);
	fclose(f);
	return nspid;
}

/*
 * --pid: a debug file for each non-ELF image mapped executable in process
 * @pid, from the entries of its perf map (or --map) that fall in the image.
 */
static int do_pid(long pid, const struct opts *o)
{
	char path[PATH_MAX], file[PATH_MAX], *line = NULL, **images = NULL;
	struct syms perf_map = { .limit = UINT64_MAX };
	unsigned long nr_deleted = 0, written = 0, failed = 0;
	struct range *r = NULL, *group = NULL;
	size_t n = 0, nr = 0, i, j, nr_group;
	struct stat st;
	int ret = 1, err_map;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld", pid);
	if (stat(path, &st)) {
		fprintf(stderr, "%s: no process %ld\n", prog, pid);
		return 1;
	}
	if (o->map) {
		snprintf(path, sizeof(path), "%s", o->map);
		f = open_perf_map(path, st.st_uid);
	} else {
		/* As perf looks: in the process's mount namespace, then here. */
		snprintf(path, sizeof(path), "/proc/%ld/root/tmp/perf-%ld.map", pid,
			 ns_pid(pid));
		f = open_perf_map(path, st.st_uid);
		if (!f && errno != EPERM) {
			snprintf(path, sizeof(path), "/tmp/perf-%ld.map", pid);
			f = open_perf_map(path, st.st_uid);
		}
	}
	if (!f) {
		if (errno != EPERM)
			fprintf(stderr, "%s: cannot open %s: %s\n", prog, path, strerror(errno));
		return 1;
	}
	err_map = read_map(f, path, &perf_map, NULL, 0);
	fclose(f);
	if (err_map)
		goto out;

	snprintf(path, sizeof(path), "/proc/%ld/maps", pid);
	f = fopen(path, "r");
	if (!f) {
		fprintf(stderr, "%s: cannot open %s: %s\n", prog, path, strerror(errno));
		goto out;
	}
	while (getline(&line, &n, f) > 0) {
		unsigned long long start, end, pgoff;
		char perm[5], *name;
		size_t len;
		void *p;
		int pos;

		if (sscanf(line, "%llx-%llx %4s %llx %*s %*s %n", &start, &end, perm, &pgoff,
			   &pos) != 4 || perm[2] != 'x')
			continue;
		name = line + pos;
		len = strcspn(name, "\n");
		name[len] = '\0';
		if (name[0] != '/')
			continue;	/* anon (perf names it from the perf map), [vdso] */
		if (len > 10 && !strcmp(name + len - 10, " (deleted)")) {
			nr_deleted++;	/* memfds too: nothing later processes map */
			continue;
		}
		p = realloc(r, (nr + 1) * sizeof(*r));
		if (!p)
			goto out_close;
		r = p;
		p = realloc(images, (nr + 1) * sizeof(*images));
		if (!p)
			goto out_close;
		images = p;
		images[nr] = strdup(name);
		if (!images[nr])
			goto out_close;
		r[nr++] = (struct range){ start, end, pgoff };
	}
	group = malloc((nr ? nr : 1) * sizeof(*group));
	if (!group)
		goto out_close;

	/* One debug file an image, from all its executable maps. */
	for (i = 0; i < nr; i++) {
		int err;

		if (!images[i][0])
			continue;
		for (j = i, nr_group = 0; j < nr; j++) {
			if (j > i && strcmp(images[j], images[i]))
				continue;
			group[nr_group++] = r[j];
			if (j > i)
				images[j][0] = '\0';	/* done with it */
		}
		if (add_live(NULL, &perf_map, group, nr_group) <= 0)
			continue;
		snprintf(file, sizeof(file), "/proc/%ld/root%s", pid, images[i]);
		err = do_image(images[i], file, o, &perf_map, group, nr_group);
		if (err < 0)
			failed++;
		else if (!err)
			written++;
	}
	if (nr_deleted)
		fprintf(stderr, "%s: %lu executable maps of memfds or deleted files: no later "
			"process maps them, perf's perf map fallback names them\n", prog,
			nr_deleted);
	if (!written && !failed)
		fprintf(stderr, "%s: no entry of the perf map falls in a non-ELF image "
			"of process %ld\n", prog, pid);
	ret = !written || failed;
out_close:
	fclose(f);
out:
	for (i = 0; i < nr; i++)
		free(images[i]);
	free(images);
	free(group);
	free(r);
	free(line);
	for (i = 0; i < perf_map.nr; i++)
		free(perf_map.v[i].name);
	free(perf_map.v);
	return ret;
}

/*
 * --install DIR: a debug file for each image in directory @dir (regular
 * files, not symlinks: perf sees the files they point to; not its
 * subdirectories): a whole .NET shared framework in one command. What isn't
 * a PE image, or has nothing to name, is skipped with a note.
 */
static int do_dir(const char *dir, struct opts *o)
{
	unsigned long written = 0, skipped = 0, failed = 0;
	struct dirent **ents;
	char path[PATH_MAX];
	struct stat st;
	int i, nr, err;

	nr = scandir(dir, &ents, NULL, alphasort);
	if (nr < 0) {
		fprintf(stderr, "%s: cannot read %s: %s\n", prog, dir, strerror(errno));
		return 1;
	}
	o->in_dir = 1;
	for (i = 0; i < nr; i++) {
		if (snprintf(path, sizeof(path), "%s/%s", dir, ents[i]->d_name) >=
		    (int)sizeof(path) || lstat(path, &st) || !S_ISREG(st.st_mode) ||
		    !st.st_size) {
			free(ents[i]);
			continue;
		}
		free(ents[i]);
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
	printf("%s: %lu debug files written, %lu files skipped, %lu failed\n", dir, written,
	       skipped, failed);
	return failed || !written;
}

static void usage(FILE *f)
{
	fprintf(f,
"usage: %s [options] IMAGE\n"
"       %s --pid PID --install [--root DIR] [--map FILE]\n"
"       %s --install [--root DIR] DIRECTORY\n"
"Write an ELF debug file naming the code in IMAGE at its file offsets, which\n"
"perf reads for samples in IMAGE, whatever address it is mapped at.\n"
"\n"
"Symbols (by default: a .NET ReadyToRun image's precompiled methods, named\n"
"from its metadata; else the PE export and COFF symbol tables and the PDB\n"
"the image names, found next to it or at the path it records):\n"
"  --pdb FILE        read the PDB FILE (refused unless it is the image's)\n"
"  --map FILE        from FILE's \"OFFSET SIZE name\" lines (hex file offsets)\n"
"  --rva             FILE's values are RVAs, as crossgen2 --perfmap writes them\n"
"  --no-pe           with --map, ignore IMAGE's own PE tables\n"
"  --pid PID         for each non-ELF image that process PID runs code from, the\n"
"                    entries of its perf map (/tmp/perf-PID.map, or --map FILE)\n"
"                    that fall in the image: what a runtime logged once names\n"
"                    the image in every later process\n"
"Output (one of):\n"
"  -o, --output OUT  write the debug file to OUT\n"
"  --install         write it where perf looks: /usr/lib/debug/<IMAGE path>.debug;\n"
"                    IMAGE may be a directory: each image in it (e.g. a .NET\n"
"                    shared framework), what isn't one skipped\n"
"  --root DIR        with --install: under DIR, for 'perf report --symfs DIR'\n"
"Other:\n"
"  -m, --machine M   x86_64, i386, aarch64 or arm, for non-PE images\n"
"                    (default: this machine's)\n"
"  -v, --verbose     print the symbols written\n"
"  -q, --quiet       with a directory, print only its summary and errors\n",
		prog, prog, prog);
}

/* What is wrong with a command line of @nr_args arguments, or NULL */
static const char *cmdline_error(const struct opts *o, int nr_args, long pid)
{
	if (pid && nr_args)
		return "--pid takes no IMAGE";
	if (!pid && !nr_args)
		return "no IMAGE given";
	if (nr_args > 1)
		return "more than one IMAGE given";
	if (o->out && o->install)
		return "-o and --install: give one of them";
	if (!o->out && !o->install)
		return "where to write it? give -o OUT or --install";
	if (o->root && !o->install)
		return "--root goes with --install";
	if ((o->rva || o->no_pe) && (!o->map || pid))
		return "--rva and --no-pe go with --map and an IMAGE";
	return NULL;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "map", required_argument, NULL, 'M' },
		{ "rva", no_argument, NULL, 'r' },
		{ "no-pe", no_argument, NULL, 'n' },
		{ "pdb", required_argument, NULL, 'P' },
		{ "pid", required_argument, NULL, 'p' },
		{ "output", required_argument, NULL, 'o' },
		{ "install", no_argument, NULL, 'i' },
		{ "root", required_argument, NULL, 'R' },
		{ "machine", required_argument, NULL, 'm' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = { 0 };
	char image[PATH_MAX], *end;
	const char *err;
	struct stat st;
	long pid = 0;
	int c;

	while ((c = getopt_long(argc, argv, "o:m:vqh", opts, NULL)) != -1) {
		switch (c) {
		case 'M': o.map = optarg; break;
		case 'r': o.rva = 1; break;
		case 'n': o.no_pe = 1; break;
		case 'P': o.pdb = optarg; break;
		case 'p':
			pid = strtol(optarg, &end, 10);
			if (*end || pid <= 0) {
				fprintf(stderr, "%s: --pid %s: not a process id\n", prog, optarg);
				return 2;
			}
			break;
		case 'o': o.out = optarg; break;
		case 'i': o.install = 1; break;
		case 'R': o.root = optarg; break;
		case 'm': o.machine = optarg; break;
		case 'v': o.verbose = 1; break;
		case 'q': o.quiet = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (pid && o.out) {
		fprintf(stderr, "%s: --pid writes a file for each image: use --install\n", prog);
		return 2;
	}
	err = cmdline_error(&o, argc - optind, pid);
	if (err) {
		fprintf(stderr, "%s: %s (--help for more)\n", prog, err);
		return 2;
	}
	if (elf_version(EV_CURRENT) == EV_NONE) {
		fprintf(stderr, "%s: libelf: %s\n", prog, elf_errmsg(-1));
		return 1;
	}
	if (pid) {
		o.quiet = 0;
		return do_pid(pid, &o);
	}
	if (!realpath(argv[optind], image)) {
		fprintf(stderr, "%s: %s: %s\n", prog, argv[optind], strerror(errno));
		return 1;
	}
	if (!stat(image, &st) && S_ISDIR(st.st_mode)) {
		if (!o.install || o.map) {
			fprintf(stderr, "%s: %s is a directory: use --install, without --map\n",
				prog, image);
			return 2;
		}
		return do_dir(image, &o);
	}
	o.quiet = 0;
	return do_image(image, image, &o, NULL, NULL, 0) ? 1 : 0;
}
