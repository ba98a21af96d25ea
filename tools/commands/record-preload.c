/*
 * record-preload.c - the LD_PRELOAD that `dnntrace record` gives a program.
 *
 * The shim goes first, before what the user preloads already, except for
 * AddressSanitizer's runtime: a program built with -fsanitize=address (or a
 * shim built so) stops at once unless libasan is the first library loaded.
 * Whether one needs it is read from the ELF file's DT_NEEDED entries (the
 * program, found in PATH as execvp would, and the shim). Not a general ELF
 * reader: 64-bit little-endian files only, read through their sections.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tools.h"

static bool read_at(int fd, off_t off, void *buf, size_t n)
{
	return pread(fd, buf, n, off) == (ssize_t)n;
}

/* The first DT_NEEDED entry of an ELF file that starts with prefix, copied
 * into out; false when there is none, or the file is no ELF. */
static bool elf_needed(const char *path, const char *prefix, char *out,
		       size_t size)
{
	/* never wait on a pipe that the command names */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	Elf64_Ehdr eh;
	Elf64_Shdr dyn, str;
	struct stat st;
	bool found = false;

	if (fd < 0)
		return false;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    !read_at(fd, 0, &eh, sizeof(eh)) || memcmp(eh.e_ident, ELFMAG, 4) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_shentsize != sizeof(Elf64_Shdr))
		goto out;
	for (unsigned i = 0; i < eh.e_shnum && !found; i++) {
		if (!read_at(fd, (off_t)(eh.e_shoff + i * sizeof(dyn)), &dyn,
			     sizeof(dyn)) ||
		    dyn.sh_type != SHT_DYNAMIC || dyn.sh_link >= eh.e_shnum ||
		    !read_at(fd,
			     (off_t)(eh.e_shoff + dyn.sh_link * sizeof(str)),
			     &str, sizeof(str)))
			continue;
		for (uint64_t k = 0; k + sizeof(Elf64_Dyn) <= dyn.sh_size;
		     k += sizeof(Elf64_Dyn)) {
			Elf64_Dyn d;
			char name[256] = "";
			if (!read_at(fd, (off_t)(dyn.sh_offset + k), &d,
				     sizeof(d)) ||
			    d.d_tag == DT_NULL)
				break;
			if (d.d_tag != DT_NEEDED || d.d_un.d_val >= str.sh_size)
				continue;
			if (pread(fd, name, sizeof(name) - 1,
				  (off_t)(str.sh_offset + d.d_un.d_val)) <= 0)
				continue;
			if (!strncmp(name, prefix, strlen(prefix))) {
				snprintf(out, size, "%s", name);
				found = true;
				break;
			}
		}
	}
out:
	close(fd);
	return found;
}

/* The file execvp would run for cmd, or NULL. */
static const char *find_command(const char *cmd, char *buf, size_t size)
{
	const char *path = getenv("PATH");

	if (strchr(cmd, '/'))
		return cmd;
	if (!path)
		path = "/bin:/usr/bin";
	for (const char *p = path;; p++) {
		size_t n = strcspn(p, ":");
		struct stat st;
		snprintf(buf, size, "%.*s%s%s", (int)n, n ? p : ".",
			 n ? "/" : "", cmd);
		if (!stat(buf, &st) && S_ISREG(st.st_mode) &&
		    !access(buf, X_OK))
			return buf;
		p += n;
		if (!*p)
			return NULL;
	}
}

/* An LD_PRELOAD entry that is AddressSanitizer's runtime. */
static bool is_asan(const char *entry, size_t n)
{
	const char *base = entry;

	for (size_t i = 0; i < n; i++)
		if (entry[i] == '/')
			base = entry + i + 1;
	return !strncmp(base, "libasan.so", 10) ||
	       !strncmp(base, "libclang_rt.asan", 16);
}

int dt_record_preload(const char *shim, const char *cmd)
{
	const char *old = getenv("LD_PRELOAD");
	char asan[256] = "", exe[PATH_MAX];
	const char *prog = find_command(cmd, exe, sizeof(exe));
	size_t cap = strlen(shim) + (old ? strlen(old) : 0) + sizeof(asan) + 4;
	char *v = malloc(cap), *rest = malloc(cap);
	int rc;

	if (!v || !rest) {
		free(v);
		free(rest);
		return -1;
	}
	rest[0] = 0;
	/* entries are separated by colons or spaces; one that is libasan
	 * goes first, the others after the shim */
	for (const char *p = old ? old : ""; *p;) {
		size_t n = strcspn(p, ": ");
		if (n && is_asan(p, n) && !asan[0])
			snprintf(asan, sizeof(asan), "%.*s", (int)n, p);
		else if (n)
			snprintf(rest + strlen(rest), cap - strlen(rest),
				 ":%.*s", (int)n, p);
		p += n + (p[n] != 0);
	}
	if (!asan[0] &&
	    !(prog && elf_needed(prog, "libasan.so", asan, sizeof(asan))))
		elf_needed(shim, "libasan.so", asan, sizeof(asan));
	snprintf(v, cap, "%s%s%s%s", asan, asan[0] ? ":" : "", shim, rest);
	rc = setenv("LD_PRELOAD", v, 1);
	free(v);
	free(rest);
	return rc;
}
