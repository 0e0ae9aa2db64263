// SPDX-License-Identifier: GPL-2.0
/*
 * Benchmark input: a perf.data with one sample in each of a list of PE
 * images (Wine's DLLs), written directly, no process or recording: one
 * process, the code of each image mapped as Wine maps it (a file mapping,
 * PROT_READ|PROT_EXEC, from the first code section's page to the last one's
 * end, at their file offset), and one user space sample at the image's entry
 * point (else its first export in code), each mapping followed by its
 * sample. Images without code get neither.
 * 'perf report' of it loads the symbols of every image once, and does little
 * else.
 *
 * usage: mkpedata [-a] [-e ELF] OUT <paths
 * The image paths are read one a line from stdin; each one sampled is
 * printed as "path file-offset" (hex), each one skipped (no code) to stderr
 * with the reason. -a: also a sample at the start of each of the image's x64
 * function ranges (.pdata), to compare the names two symbol sources give.
 * -e ELF: before the images, the ELF executable that runs them (Wine's
 * loader) mapped, with a sample at its entry point: as in a real process,
 * perf finds the process's machine from an ELF object, not trying every
 * image for it at each new mapping.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>

#define PID		4000000		/* no /tmp/perf-PID.map to find */
#define BASE		0x10000000000ULL
#define STRIDE		0x100000000ULL	/* 4 GiB an image */
#define PAGE		0x1000ULL
#define SCN_CODE	0x20000020	/* contains code, executable */

static FILE *out;
static uint64_t data_size, timestamp;

static void put(const void *p, size_t n)
{
	if (fwrite(p, 1, n, out) != n) {
		perror("mkpedata: write");
		exit(1);
	}
	data_size += n;
}

static uint16_t le16(const uint8_t *p)
{
	return p[0] | p[1] << 8;
}

static uint32_t le32(const uint8_t *p)
{
	return le16(p) | (uint32_t)le16(p + 2) << 16;
}

/* What a non-sample event ends with (sample_id_all): pid, tid and time */
static void put_id(void)
{
	uint32_t ids[2] = { PID, PID };

	put(ids, sizeof(ids));
	timestamp++;
	put(&timestamp, 8);
}

static void put_comm(const char *comm)
{
	struct perf_event_header h = { PERF_RECORD_COMM, 0, 0 };
	uint32_t ids[2] = { PID, PID };
	char name[16] = { 0 };

	strncpy(name, comm, sizeof(name) - 1);
	h.size = sizeof(h) + sizeof(ids) + sizeof(name) + 16;
	put(&h, sizeof(h));
	put(ids, sizeof(ids));
	put(name, sizeof(name));
	put_id();
}

static void put_mmap2(uint64_t addr, uint64_t len, uint64_t pgoff, const char *path)
{
	struct perf_event_header h = { PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER, 0 };
	uint32_t ids[2] = { PID, PID }, dev[2] = { 0, 0 }, prot[2] = { 5, 2 };
	uint64_t range[3] = { addr, len, pgoff }, ino[2] = { 0, 0 };
	size_t n = strlen(path) + 1, pad = (8 - n % 8) % 8;
	char zero[8] = { 0 };

	h.size = sizeof(h) + sizeof(ids) + sizeof(range) + sizeof(dev) + sizeof(ino) +
		 sizeof(prot) + n + pad + 16;
	put(&h, sizeof(h));
	put(ids, sizeof(ids));
	put(range, sizeof(range));
	put(dev, sizeof(dev));
	put(ino, sizeof(ino));
	put(prot, sizeof(prot));	/* PROT_READ|PROT_EXEC, MAP_PRIVATE */
	put(path, n);
	put(zero, pad);
	put_id();
}

/* PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD */
static void put_sample(uint64_t ip)
{
	struct perf_event_header h = { PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, 40 };
	uint32_t ids[2] = { PID, PID };
	uint64_t period = 1;

	put(&h, sizeof(h));
	put(&ip, 8);
	put(ids, sizeof(ids));
	timestamp++;
	put(&timestamp, 8);
	put(&period, 8);
}

struct image {
	uint8_t *buf;
	size_t size;
	const uint8_t *opt, *scn;	/* the optional header, the section table */
	int nscn;
	uint32_t dir;			/* the offset of the data directories in opt */
};

/* The section whose raw data holds @rva (a code section's only if @code), or -1 */
static int find_scn(const struct image *im, uint32_t rva, int code)
{
	int i;

	for (i = 0; i < im->nscn; i++) {
		const uint8_t *s = im->scn + 40 * i;

		if (rva - le32(s + 12) < le32(s + 16) && le32(s + 20) + (uint64_t)le32(s + 16) <= im->size &&
		    (!code || (le32(s + 36) & SCN_CODE)))
			return i;
	}
	return -1;
}

/* The file offset of @rva in code, 0 if it is not in a code section's data */
static uint64_t code_off(const struct image *im, uint32_t rva)
{
	int i = find_scn(im, rva, 1);

	return i < 0 ? 0 : le32(im->scn + 40 * i + 20) + rva - le32(im->scn + 40 * i + 12);
}

/* @len bytes at @rva, or NULL */
static const uint8_t *at_rva(const struct image *im, uint32_t rva, uint32_t len)
{
	int i = find_scn(im, rva, 0);
	const uint8_t *s;

	if (i < 0)
		return NULL;
	s = im->scn + 40 * i;
	if (len > le32(s + 16) - (rva - le32(s + 12)))
		return NULL;
	return im->buf + le32(s + 20) + rva - le32(s + 12);
}

/* Data directory @i: its RVA and size */
static uint32_t dir_rva(const struct image *im, int i)
{
	return le32(im->opt + im->dir + 8 * i);
}

static uint32_t dir_size(const struct image *im, int i)
{
	return le32(im->opt + im->dir + 8 * i + 4);
}

/* Read the PE image @path: NULL if it is one, else why not */
static const char *open_image(struct image *im, const char *path)
{
	FILE *f = fopen(path, "rb");
	const uint8_t *pe;
	uint32_t lfanew;
	long size;

	memset(im, 0, sizeof(*im));
	if (!f)
		return "cannot open";
	if (fseek(f, 0, SEEK_END) || (size = ftell(f)) < 0x200 || fseek(f, 0, SEEK_SET)) {
		fclose(f);
		return "not a PE image";
	}
	im->size = size;
	im->buf = malloc(size);
	if (!im->buf || fread(im->buf, 1, size, f) != (size_t)size) {
		fclose(f);
		return "cannot read";
	}
	fclose(f);
	lfanew = le32(im->buf + 0x3c);
	if (memcmp(im->buf, "MZ", 2) || lfanew > im->size - 0x200 || memcmp(im->buf + lfanew, "PE\0\0", 4))
		return "not a PE image";
	pe = im->buf + lfanew;
	im->nscn = le16(pe + 6);
	im->opt = pe + 24;
	im->scn = im->opt + le16(pe + 20);
	im->dir = le16(im->opt) == 0x20b ? 112 : 96;
	if ((le16(im->opt) != 0x20b && le16(im->opt) != 0x10b) || le16(pe + 20) < im->dir + 32 ||
	    im->scn + 40 * im->nscn > im->buf + im->size)
		return "not a PE image";
	return NULL;
}

/*
 * An ELF executable's code: the PT_LOAD segment holding its entry point,
 * its page-aligned file extent in @start, @end; the entry's file offset, 0
 * if none
 */
static uint64_t elf_entry(const char *path, uint64_t *start, uint64_t *end)
{
	uint8_t eh[64], ph[56];
	uint64_t entry, phoff;
	FILE *f = fopen(path, "rb");
	int i, n;

	if (!f || fread(eh, 1, 64, f) != 64 || memcmp(eh, "\177ELF\2\1", 6)) {
		if (f)
			fclose(f);
		return 0;
	}
	entry = le32(eh + 24) | (uint64_t)le32(eh + 28) << 32;
	phoff = le32(eh + 32) | (uint64_t)le32(eh + 36) << 32;
	n = le16(eh + 56);
	for (i = 0; i < n; i++) {
		uint64_t off, va, sz;

		if (fseek(f, phoff + 56 * i, SEEK_SET) || fread(ph, 1, 56, f) != 56)
			break;
		off = le32(ph + 8) | (uint64_t)le32(ph + 12) << 32;
		va = le32(ph + 16) | (uint64_t)le32(ph + 20) << 32;
		sz = le32(ph + 32) | (uint64_t)le32(ph + 36) << 32;
		/* PT_LOAD, PF_X */
		if (le32(ph) == 1 && (le32(ph + 4) & 1) && entry - va < sz) {
			fclose(f);
			*start = off & ~(PAGE - 1);
			*end = (off + sz + PAGE - 1) & ~(PAGE - 1);
			return off + entry - va;
		}
	}
	fclose(f);
	return 0;
}

/* The file offset to sample: the entry point, else the first export in code; 0 if none */
static uint64_t pick(const struct image *im)
{
	const uint8_t *exp = at_rva(im, dir_rva(im, 0), 40), *funcs;
	uint64_t off = code_off(im, le32(im->opt + 16));
	uint32_t i, n;

	if (le32(im->opt + 16) && off)
		return off;
	n = exp ? le32(exp + 20) : 0;
	funcs = exp ? at_rva(im, le32(exp + 28), n * 4) : NULL;
	for (i = 0; funcs && i < n; i++) {
		off = code_off(im, le32(funcs + 4 * i));
		if (off)
			return off;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = 1,
		.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			       PERF_SAMPLE_PERIOD,
		.exclude_kernel = 1,
		.sample_id_all = 1,
	};
	uint64_t header[13] = { 0 }, ids_sec[2], id = 1, feat[2], nr = 0, ns = 0;
	uint32_t nrcpus[2] = { 1, 1 };
	const char *elf = NULL;
	char path[4096];
	int all = 0, opt;

	while ((opt = getopt(argc, argv, "ae:")) != -1) {
		if (opt == 'a')
			all = 1;
		else if (opt == 'e')
			elf = optarg;
		else
			optind = argc + 1;
	}
	if (optind != argc - 1) {
		fprintf(stderr, "usage: %s [-a] [-e ELF] OUT <paths\n", argv[0]);
		return 2;
	}
	out = fopen(argv[argc - 1], "wb");
	if (!out) {
		perror(argv[argc - 1]);
		return 1;
	}
	/*
	 * The file header (magic, its size, an attr entry's size, the attrs,
	 * data and event types sections, the features: HEADER_NRCPUS only);
	 * the attr's one id, the attr, then the events
	 */
	memcpy(header, "PERFILE2", 8);
	header[1] = sizeof(header);
	header[2] = sizeof(attr) + 16;
	header[3] = sizeof(header) + 8;
	header[4] = header[2];
	header[5] = header[3] + header[4];
	header[9] = 1 << 7;	/* HEADER_NRCPUS */
	put(header, sizeof(header));
	put(&id, 8);
	ids_sec[0] = sizeof(header);
	ids_sec[1] = 8;
	put(&attr, sizeof(attr));
	put(ids_sec, sizeof(ids_sec));
	data_size = 0;

	put_comm("wine-dlls");
	if (elf) {
		uint64_t start, end, off = elf_entry(elf, &start, &end);

		if (!off) {
			fprintf(stderr, "mkpedata: %s: not an x86-64 ELF executable with an entry point\n", elf);
			return 1;
		}
		put_mmap2(BASE / 2 + start, end - start, start, elf);
		put_sample(BASE / 2 + off);
	}
	while (fgets(path, sizeof(path), stdin)) {
		uint64_t off, start = ~0ULL, end = 0, addr = BASE + nr * STRIDE;
		struct image im;
		const char *why;
		int i;

		path[strcspn(path, "\n")] = '\0';
		if (!*path)
			continue;
		why = open_image(&im, path);
		off = why ? 0 : pick(&im);
		if (!off) {
			fprintf(stderr, "%s: skipped: %s\n", path, why ? why : "no entry point or export in code");
			free(im.buf);
			continue;
		}
		/* One mapping from the first code section's page to the last one's end */
		for (i = 0; i < im.nscn; i++) {
			const uint8_t *sh = im.scn + 40 * i;

			if (!(le32(sh + 36) & SCN_CODE) || !le32(sh + 16))
				continue;
			start = le32(sh + 20) < start ? le32(sh + 20) : start;
			end = le32(sh + 20) + le32(sh + 16) > end ? le32(sh + 20) + le32(sh + 16) : end;
		}
		start &= ~(PAGE - 1);
		end = (end + PAGE - 1) & ~(PAGE - 1);
		put_mmap2(addr + start, end - start, start, path);
		put_sample(addr + off);
		ns++;
		/* -a: and one at every x64 function range's start (.pdata) */
		if (all) {
			uint32_t n = dir_size(&im, 3) / 12;
			const uint8_t *pdata = at_rva(&im, dir_rva(&im, 3), n * 12);

			for (i = 0; pdata && i < (int)n; i++) {
				off = code_off(&im, le32(pdata + 12 * i));
				if (off) {
					put_sample(addr + off);
					ns++;
				}
			}
		}
		printf("%s %#llx\n", path, (unsigned long long)pick(&im));
		free(im.buf);
		nr++;
	}
	/* The data section's size, the features' table and HEADER_NRCPUS */
	header[6] = data_size;
	feat[0] = header[5] + data_size + sizeof(feat);
	feat[1] = sizeof(nrcpus);
	put(feat, sizeof(feat));
	put(nrcpus, sizeof(nrcpus));
	if (fseek(out, 0, SEEK_SET) || fwrite(header, 1, sizeof(header), out) != sizeof(header) ||
	    fclose(out)) {
		perror(argv[argc - 1]);
		return 1;
	}
	fprintf(stderr, "mkpedata: %llu images, %llu samples\n", (unsigned long long)nr,
		(unsigned long long)ns);
	return nr ? 0 : 1;
}
