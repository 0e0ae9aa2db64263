// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target for mkdebugelf's ReadyToRun reader: any input, any
 * truncation, only in-bounds reads, and every method it reports named and
 * inside the file.
 */
#include <stdint.h>
#include <stdlib.h>
#include "../mkdebugelf/r2r.h"

static size_t input_len;
static const uint8_t *input;

/* Any assembly it refers to: the input again, its metadata read twice. */
static const uint8_t *load(void *arg, const char *name, size_t *len)
{
	(void)arg;
	(void)name;
	*len = input_len;
	return input;
}

static int check(void *arg, uint64_t offset, uint64_t size, const char *name)
{
	(void)arg;
	if (offset >= input_len || size > input_len - offset || !name[0])
		abort();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct r2r_stats st;
	const char *err;
	int em, class;
	struct pe pe;

	input_len = size;
	input = data;
	if (pe_open(&pe, data, size, &err))
		return 0;
	if (r2r_detect(&pe, &em, &class, &err) == 1 &&
	    r2r_methods(&pe, check, NULL, load, NULL, &st, &err) >= 0 && st.covered > st.functions)
		abort();
	pe_close(&pe);
	return 0;
}
