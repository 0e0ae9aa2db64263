/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A bounds-checked reader for the code of .NET ReadyToRun images: the
 * READYTORUN_HEADER's method entry points and RUNTIME_FUNCTIONS give each
 * method's code, the image's ECMA-335 metadata its name.
 */
#ifndef MKDEBUGELF_R2R_H
#define MKDEBUGELF_R2R_H

#include "pe.h"

struct r2r_stats {
	unsigned long methods;		/* MethodDef entry points */
	unsigned long instances;	/* instantiated generic methods */
	unsigned long unnamed;		/* methods not fully named */
	unsigned long other;		/* named from another assembly's metadata */
	unsigned long functions;	/* RUNTIME_FUNCTIONS */
	unsigned long covered;		/* of which in a method's code */
	unsigned int major, minor;	/* format version */
	const char *os;			/* from the machine field */
};

/*
 * Is @pe a ReadyToRun image? 1 if it is one and we can read it, with *em
 * and *class its ELF machine and class; 0 if it is not .NET; 2 if it is a
 * .NET image of IL only; -1 with *err set if it is one we cannot read
 * (another architecture, a component of a composite image).
 */
int r2r_detect(const struct pe *pe, int *em, int *class, const char **err);

/*
 * The image of an assembly the ReadyToRun image refers to, by its simple
 * name (its AssemblyRef's), for the names of the methods of that assembly
 * the image holds code for: the bytes, valid until r2r_methods() returns,
 * and their length; or NULL.
 */
typedef const uint8_t *(*r2r_load_cb)(void *arg, const char *assembly, size_t *len);

/*
 * Report each precompiled method's code: its file offset, its size (the
 * extent of its runtime functions: body and funclets) and its name,
 * Namespace.Type::Method, nested types joined with '+' as .NET writes them.
 * @load (may be NULL) finds referenced assemblies. Returns the number of
 * methods reported or -1 with *err set.
 */
int r2r_methods(const struct pe *pe, pe_sym_cb cb, void *arg, r2r_load_cb load,
		void *load_arg, struct r2r_stats *st, const char **err);

#endif
