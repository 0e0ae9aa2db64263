/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A bounds-checked reader for the function names in a PDB (MSF 7.00) file:
 * the procedures of its modules' symbol streams and its public symbols.
 */
#ifndef MKDEBUGELF_PDB_H
#define MKDEBUGELF_PDB_H

#include <stddef.h>
#include <stdint.h>
#include "pe.h"

struct pdb {
	const uint8_t *buf;
	size_t len;
	uint32_t block_size, nr_blocks;
	uint8_t *dir;		/* the stream directory, read whole */
	uint32_t nr_streams;
	const uint8_t *sizes;	/* nr_streams little-endian u32s in dir */
	uint32_t *first_block;	/* where each stream's block list is in dir */
	uint8_t guid[16];	/* from the PDB info stream */
	uint32_t age;		/* from the DBI stream */
};

/* Returns 0, or -1 with *err set to a static message. */
int pdb_open(struct pdb *pdb, const uint8_t *buf, size_t len, const char **err);
void pdb_close(struct pdb *pdb);

/* Was the PDB written by the link that made the image with record @cv? */
int pdb_matches(const struct pdb *pdb, const struct pe_codeview *cv);

struct pdb_stats {
	unsigned long procs, publics, outside;
};

/*
 * Report the functions of the image @pe at their file offsets: each module's
 * S_GPROC32 and S_LPROC32 records (names as the compiler wrote them, with
 * their length), then the S_PUB32 records flagged as functions that start
 * where no procedure does (decorated names, no length). Returns the number
 * reported or -1 with *err set.
 */
int pdb_symbols(const struct pdb *pdb, const struct pe *pe, pe_sym_cb cb, void *arg,
		struct pdb_stats *stats, const char **err);

#endif
