// SPDX-License-Identifier: GPL-2.0
/*
 * The debug file writer: an ELF file whose NOBITS sections cover the image's
 * code (a PE image's at its addresses as linked, other images' at their file
 * offsets), and a symbol table naming the code there.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "mkdebugelf.h"

#define ALIGN(x, a)	(((x) + (a) - 1) & ~((uint64_t)(a) - 1))

int pe_machine(uint16_t m, int *em, int *class)
{
	switch (m) {
	case 0x8664: *em = EM_X86_64; *class = ELFCLASS64; return 0;
	case 0x014c: *em = EM_386; *class = ELFCLASS32; return 0;
	case 0xaa64: *em = EM_AARCH64; *class = ELFCLASS64; return 0;
	case 0x01c0: case 0x01c2: case 0x01c4: *em = EM_ARM; *class = ELFCLASS32; return 0;
	default: return -1;
	}
}

int named_machine(const char *name, int *em, int *class)
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

/* A NOBITS section: file offsets [start, end) of the image at address addr */
struct text_scn {
	uint64_t start, end, addr;
	int file;		/* not a PE section's: at address = offset */
	size_t nr;		/* symbols in it */
	char name[24];
	Elf_Scn *scn;
};

/*
 * The sections the symbols go in, *nr of them, and in (*where)[i] symbol
 * i's: with @pe, one for each PE section whose file data holds symbols, at
 * its address as linked (ImageBase + RVA); and one at address = file offset
 * for the other symbols (all of them without @pe). The one holding most
 * symbols is .text, whose address less its offset perf takes as the
 * object's text offset for annotate; the names of all hold "text", or perf
 * ignores their symbols.
 */
static struct text_scn *text_scns(const struct syms *s, const struct pe *pe, size_t *nr,
			    size_t **where)
{
	size_t n = pe ? pe->nr_sections + 1 : 1, i, k, main = 0;
	struct text_scn *p = calloc(n, sizeof(*p));

	*where = calloc(s->nr ? s->nr : 1, sizeof(**where));
	if (!p || !*where) {
		free(p);
		free(*where);
		return NULL;
	}
	for (k = 0; k + 1 < n; k++) {
		p[k].start = pe->sections[k].raw_offset;
		p[k].end = p[k].start + pe->sections[k].raw_size;
		p[k].addr = pe->image_base + pe->sections[k].vaddr;
		snprintf(p[k].name, sizeof(p[k].name), ".text.%zu", k + 1);
	}
	p[n - 1].end = s->limit;
	p[n - 1].file = 1;
	strcpy(p[n - 1].name, ".text.file");
	for (i = 0; i < s->nr; i++) {
		for (k = 0; k + 1 < n; k++)
			if (s->v[i].offset >= p[k].start && s->v[i].offset < p[k].end)
				break;
		(*where)[i] = k;
		p[k].nr++;
	}
	/* Keep those that hold symbols (the last one if none does) */
	for (k = 0, *nr = 0; k < n; k++) {
		if (!p[k].nr && (k + 1 < n || *nr))
			continue;
		for (i = 0; i < s->nr; i++)
			if ((*where)[i] == k)
				(*where)[i] = *nr;
		p[(*nr)++] = p[k];
	}
	for (k = 1; k < *nr; k++)
		if (p[k].nr > p[main].nr)
			main = k;
	strcpy(p[main].name, ".text");
	return p;
}

/* An ELF note: name "GNU", type NT_GNU_BUILD_ID, the build ID as its descriptor */
#define NOTE_SIZE	(12 + 4 + PE_BUILD_ID_SIZE)

static void build_id_note(uint8_t *note, const uint8_t *id)
{
	static const uint8_t head[16] = {
		4, 0, 0, 0, PE_BUILD_ID_SIZE, 0, 0, 0, NT_GNU_BUILD_ID, 0, 0, 0, 'G', 'N', 'U', 0
	};

	memcpy(note, head, sizeof(head));
	memcpy(note + sizeof(head), id, PE_BUILD_ID_SIZE);
}

int write_elf(const char *out, const struct syms *s, int em, int class, const struct pe *pe,
	      const uint8_t *build_id)
{
	uint8_t note[NOTE_SIZE];
	Elf_Scn *notes = NULL;
	char *shstr = NULL;
	size_t shstr_off = 1, str_size = 1, i, nr_places = 0, *where = NULL;
	uint64_t off;
	Elf_Scn *symtab, *strtab, *shstrtab;
	struct text_scn *p = NULL;
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
	p = text_scns(s, pe, &nr_places, &where);
	shstr = calloc(1, 96 + nr_places * sizeof(p->name));
	if (!e || !p || !shstr || !gelf_newehdr(e, class) || !gelf_getehdr(e, &ehdr))
		goto out;
	ehdr.e_ident[EI_DATA] = ELFDATA2LSB;
	ehdr.e_ident[EI_VERSION] = EV_CURRENT;
	ehdr.e_type = ET_DYN;
	ehdr.e_machine = em;
	ehdr.e_version = EV_CURRENT;

	for (i = 0; i < nr_places; i++) {
		p[i].scn = new_section(e, p[i].name, &shstr_off, shstr, SHT_NOBITS,
				       SHF_ALLOC | SHF_EXECINSTR);
		if (!p[i].scn)
			goto out;
	}
	if (build_id) {
		build_id_note(note, build_id);
		notes = new_section(e, ".note.gnu.build-id", &shstr_off, shstr, SHT_NOTE,
				    SHF_ALLOC);
		if (!notes || add_data(notes, note, sizeof(note), ELF_T_BYTE, 4))
			goto out;
	}
	symtab = new_section(e, ".symtab", &shstr_off, shstr, SHT_SYMTAB, 0);
	strtab = new_section(e, ".strtab", &shstr_off, shstr, SHT_STRTAB, 0);
	shstrtab = new_section(e, ".shstrtab", &shstr_off, shstr, SHT_STRTAB, 0);
	if (!symtab || !strtab || !shstrtab)
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
		const struct text_scn *at = &p[where[i]];
		GElf_Sym sym = {
			.st_name = str_size,
			.st_value = s->v[i].offset - at->start + at->addr,
			.st_size = s->v[i].size,
			.st_info = GELF_ST_INFO(STB_GLOBAL, STT_FUNC),
			.st_shndx = elf_ndxscn(at->scn),
		};

		strcpy(str + str_size, s->v[i].name);
		str_size += strlen(s->v[i].name) + 1;
		if (!gelf_update_sym(elf_getdata(symtab, NULL), i + 1, &sym))
			goto out;
	}

	/*
	 * Lay the file out here, so that each NOBITS section can have the
	 * offset of the image's code it covers: perf takes a symbol's value
	 * less its section's address plus its offset, a file offset in the
	 * image. Symbols outside the PE sections (or of another image) are at
	 * their file offsets, in a section whose address is its offset.
	 */
	elf_flagelf(e, ELF_C_SET, ELF_F_LAYOUT);
	off = class == ELFCLASS64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	off = ALIGN(off, 16);
	for (i = 0; i < nr_places; i++) {
		gelf_getshdr(p[i].scn, &shdr);
		if (!p[i].file) {
			shdr.sh_offset = p[i].start;
			shdr.sh_addr = p[i].addr;
			shdr.sh_size = p[i].end - p[i].start;
		} else {
			shdr.sh_offset = shdr.sh_addr = off;
			shdr.sh_size = s->limit;
		}
		shdr.sh_addralign = 16;
		gelf_update_shdr(p[i].scn, &shdr);
	}

	if (notes) {
		off = place(notes, off, sizeof(note));
		gelf_getshdr(notes, &shdr);
		shdr.sh_addralign = 4;
		gelf_update_shdr(notes, &shdr);
	}

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
	free(shstr);
	free(where);
	free(p);
	if (ret)
		unlink(out);
	return ret;
}
