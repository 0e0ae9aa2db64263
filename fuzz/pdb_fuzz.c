// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for mkdebugelf's PDB reader: any input, only in-bounds
 * reads, and every function it reports in the code section of the image the
 * PDB is read for (here one .text at RVA 0x1000, file offset 0x400).
 */
#include <stdint.h>
#include <stdlib.h>
#include "../mkdebugelf/pdb.h"

static int check(void *arg, uint64_t offset, uint64_t size, const char *name)
{
	(void)arg;
	(void)size;
	if (offset < 0x400 || offset >= 0x400 + 0x100000 || !name[0])
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pe_section text = {
		.name = ".text", .vaddr = 0x1000, .vsize = 0x100000,
		.raw_size = 0x100000, .raw_offset = 0x400, .flags = 0x60000020,
	};
	struct pe pe = { .nr_sections = 1, .sections = &text, .is_64 = 1 };
	struct pe_codeview cv = { .age = 1 };
	struct pdb_stats stats;
	struct pdb pdb;
	const char *err;

	if (pdb_open(&pdb, data, size, &err))
		return 0;
	pdb_matches(&pdb, &cv);
	pdb_symbols(&pdb, &pe, check, NULL, &stats, &err);
	pdb_close(&pdb);
	return 0;
}
