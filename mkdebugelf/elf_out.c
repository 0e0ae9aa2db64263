// SPDX-License-Identifier: GPL-2.0
/*
 * The debug file writer: an ELF file whose NOBITS .text has its file
 * offsets as addresses, and a symbol table naming the image's code there.
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

int write_elf(const char *out, const struct syms *s, int em, int class)
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
