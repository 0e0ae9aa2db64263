// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for mkdebugelf's PE reader: any input, any truncation,
 * only in-bounds reads, and every symbol it reports inside the file.
 */
#include <stdint.h>
#include <stdlib.h>
#include "../mkdebugelf/pe.h"

static size_t input_len;

static int check(void *arg, uint64_t offset, uint64_t size, const char *name)
{
	(void)arg;
	(void)size;
	if (offset >= input_len || !name[0])
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct pe pe;
	const char *err;

	input_len = size;
	if (pe_open(&pe, data, size, &err))
		return 0;
	pe_exports(&pe, check, NULL);
	pe_coff_symbols(&pe, check, NULL);
	pe_close(&pe);
	return 0;
}
