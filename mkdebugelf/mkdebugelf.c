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
#include <errno.h>
#include <getopt.h>
#include <libelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "mkdebugelf.h"

const char *prog = "mkdebugelf";

static void usage(FILE *f)
{
	fprintf(f,
"usage: %s [options] IMAGE\n"
"       %s --pid PID --install [--root DIR | --symfs DIR] [--map FILE]\n"
"       %s --install [--root DIR | --symfs DIR] DIRECTORY\n"
"       %s --write-perf-map PID [--pdb FILE]\n"
"Write an ELF debug file naming the code in IMAGE (a PE image's at its linked\n"
"addresses, others' at file offsets), which perf reads for samples in IMAGE,\n"
"whatever address it is mapped at.\n"
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
"                    (perf then looks for every object there)\n"
"  --symfs DIR       --root DIR, and link into DIR what else is in /, so that\n"
"                    'perf report --symfs DIR' keeps every other object's names\n"
"Other:\n"
"  -m, --machine M   x86_64, i386, aarch64 or arm, for non-PE images\n"
"                    (default: this machine's)\n"
"  -v, --verbose     print the symbols written\n"
"  -q, --quiet       with a directory, print only its summary and errors\n"
"  --version         print the version\n"
"\n"
"--write-perf-map PID: PE images whose code Wine copied into anonymous memory\n"
"(sections off the page boundary, as with the 0x200 FileAlignment Windows\n"
"linkers use) get no debug file: append lines naming their functions at\n"
"their addresses to the process's /tmp/perf-PID.map, which perf reads for\n"
"anonymous code. Run it once the program has loaded its images, and again\n"
"after it loads more; what the perf map names already is not written twice.\n",
		prog, prog, prog, prog);
}

/* What is wrong with a command line of @nr_args arguments, or NULL */
static const char *cmdline_error(const struct opts *o, int nr_args, long pid)
{
	if (o->write_pid)
		return pid || nr_args || o->out || o->install || o->map || o->root ?
		       "--write-perf-map takes a PID only, and --pdb" : NULL;
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
		return o->symfs ? "--symfs goes with --install" : "--root goes with --install";
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
		{ "symfs", required_argument, NULL, 'S' },
		{ "machine", required_argument, NULL, 'm' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "write-perf-map", required_argument, NULL, 'W' },
		{ "version", no_argument, NULL, 'V' },
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
		case 'R':
		case 'S':
			if (o.root) {
				fprintf(stderr, "%s: --root and --symfs: give one of them\n", prog);
				return 2;
			}
			o.root = optarg;
			o.symfs = c == 'S';
			break;
		case 'm': o.machine = optarg; break;
		case 'v': o.verbose = 1; break;
		case 'q': o.quiet = 1; break;
		case 'W':
			o.write_pid = strtol(optarg, &end, 10);
			if (*end || o.write_pid <= 0) {
				fprintf(stderr, "%s: --write-perf-map %s: not a process id\n", prog,
					optarg);
				return 2;
			}
			break;
		case 'V': printf("%s %s\n", prog, MKDEBUGELF_VERSION); return 0;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (pid && o.out) {
		fprintf(stderr, "%s: --pid writes a file for each image: use --install\n", prog);
		return 2;
	}
	if (o.symfs && (!*o.root || (!realpath(o.root, image) ? errno != ENOENT :
				     !strcmp(image, "/")))) {
		fprintf(stderr, "%s: --symfs %s: not a folder of its own (/ is where --install "
			"goes without it)\n", prog, o.root);
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
	if (o.write_pid)
		return do_write_perf_map(o.write_pid, &o);
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
