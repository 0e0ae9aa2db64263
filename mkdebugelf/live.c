// SPDX-License-Identifier: GPL-2.0
/*
 * Running processes: the non-ELF images a process runs code from and the
 * entries of its perf map that fall in them (--pid).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include "mkdebugelf.h"

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
long ns_pid(long pid)
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
int do_pid(long pid, const struct opts *o)
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
		if (syms_add_live(NULL, &perf_map, group, nr_group) <= 0)
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
	syms_free(&perf_map);
	return ret;
}
