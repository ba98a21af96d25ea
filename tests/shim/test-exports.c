/*
 * test-exports.c - libdnntrace.so exports exactly the functions the
 * wrapped libraries' headers declare (their API listings), each under its
 * library's version node (libcudnn.so.9, libcublas.so.13,
 * libcublasLt.so.13), plus the C library functions it interposes and its
 * own entries; and every function a real library exports and its headers
 * declare is wrapped, under the version the real one carries, so that a
 * program linked against the real library binds to the wrapper. Symbols
 * read with libelf.
 *
 * usage: test-exports LIBDNNTRACE {LIBRARY API-LISTING VERSION-NODE}...
 */
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test-util.h"

struct syms {
	char **name;
	char **version;
	size_t n;
};

static void add(struct syms *s, const char *name, const char *version)
{
	s->name = realloc(s->name, (s->n + 1) * sizeof(char *));
	s->version = realloc(s->version, (s->n + 1) * sizeof(char *));
	s->name[s->n] = strdup(name);
	s->version[s->n] = strdup(version ? version : "");
	s->n++;
}

static const char *find(const struct syms *s, const char *name)
{
	for (size_t i = 0; i < s->n; i++)
		if (!strcmp(s->name[i], name))
			return s->version[i];
	return NULL;
}

/* Version name of each verdef index. */
static const char *verdef_name(Elf *e, Elf_Scn *scn, size_t strndx,
			       unsigned idx)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t off = 0;
	GElf_Verdef vd;

	while (d && gelf_getverdef(d, (int)off, &vd)) {
		if (vd.vd_ndx == idx) {
			GElf_Verdaux aux;
			if (!gelf_getverdaux(d, (int)(off + vd.vd_aux), &aux))
				return NULL;
			return elf_strptr(e, strndx, aux.vda_name);
		}
		if (!vd.vd_next)
			break;
		off += vd.vd_next;
	}
	return NULL;
}

/* Defined, global function symbols of a shared object's .dynsym. */
static int read_exports(const char *path, struct syms *out)
{
	int fd = open(path, O_RDONLY);
	Elf *e;
	Elf_Scn *scn = NULL, *dynsym = NULL, *versym = NULL, *verdef = NULL;
	size_t verdef_str = 0;

	if (fd < 0 || !(e = elf_begin(fd, ELF_C_READ, NULL))) {
		fprintf(stderr, "%s: cannot read\n", path);
		return -1;
	}
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		gelf_getshdr(scn, &sh);
		if (sh.sh_type == SHT_DYNSYM)
			dynsym = scn;
		else if (sh.sh_type == SHT_GNU_versym)
			versym = scn;
		else if (sh.sh_type == SHT_GNU_verdef) {
			verdef = scn;
			verdef_str = sh.sh_link;
		}
	}
	if (!dynsym)
		return -1;
	GElf_Shdr sh;
	gelf_getshdr(dynsym, &sh);
	Elf_Data *d = elf_getdata(dynsym, NULL),
		 *vd = versym ? elf_getdata(versym, NULL) : NULL;
	size_t n = sh.sh_size / sh.sh_entsize;
	for (size_t i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Versym ver = 0;
		gelf_getsym(d, (int)i, &sym);
		if (sym.st_shndx == SHN_UNDEF ||
		    GELF_ST_TYPE(sym.st_info) != STT_FUNC ||
		    GELF_ST_BIND(sym.st_info) == STB_LOCAL)
			continue;
		if (vd)
			gelf_getversym(vd, (int)i, &ver);
		const char *vname = verdef ? verdef_name(e, verdef, verdef_str,
							 ver & 0x7fff)
					   : NULL;
		add(out, elf_strptr(e, sh.sh_link, sym.st_name), vname);
	}
	elf_end(e);
	close(fd);
	return 0;
}

/* One wrapped library: the real one's exports, the functions its listing
 * declares, the version node the wrappers carry. */
struct lib {
	struct syms real, decl;
	const char *path, *node;
};

static int read_listing(const char *path, struct syms *decl)
{
	char line[4096];
	FILE *f = fopen(path, "r");

	if (!f)
		return perror(path), -1;
	while (fgets(line, sizeof(line), f))
		if (line[0] != '#' && strchr(line, '('))
			*strchr(line, '(') = 0, add(decl, line, NULL);
	fclose(f);
	return 0;
}

/* The shim's exports that are no wrapped library's function: the C
 * library's, the CUDA runtime's, driver's and CUPTI's it interposes, and
 * its own entries. Checks their versions; false for a wrapper. */
static bool check_other_export(const char *name, const char *version)
{
	static const char *const libc_fns[] = {
		"dlsym",   "execve",     "execv",       "execvp",
		"execvpe", "fexecve",    "execl",       "execlp",
		"execle",  "_exit",      "_Exit",       "sigaction",
		"signal",  "bsd_signal", "sysv_signal", "pthread_exit",
		"close",   "closefrom",  "close_range", "dup2",
		"dup3"
	};
	for (size_t j = 0; j < sizeof(libc_fns) / sizeof(libc_fns[0]); j++)
		if (!strcmp(name, libc_fns[j])) {
			CHECK(!strncmp(version, "GLIBC_", 6));
			return true;
		}
	if (!strcmp(name, "InitializeInjection") ||
	    !strcmp(name, "InitializeInjectionNvtx2") ||
	    !strcmp(name, "dnntrace_recording")) {
		/* the CUDA driver's and NVTX's injection entries; whether the
		 * process records, for programs that ask */
		CHECK_EQ_S(version, "DNNTRACE_0");
		return true;
	}
	if (!strncmp(name, "cudaGraph", 9) ||
	    !strcmp(name, "__cudaRegisterFunction")) {
		/* the CUDA runtime's graph calls and kernel registrations,
		 * either version */
		CHECK(!strcmp(version, "libcudart.so.12") ||
		      !strcmp(version, "libcudart.so.13"));
		return true;
	}
	if (!strncmp(name, "cuGraph", 7) ||
	    !strncmp(name, "cuGetProcAddress", 16)) {
		/* the driver's, unversioned there */
		CHECK_EQ_S(version, "DNNTRACE_0");
		return true;
	}
	if (!strncmp(name, "cupti", 5)) {
		/* interposed to share CUPTI with another client */
		CHECK_EQ_S(version, "libcupti.so.13");
		return true;
	}
	return false;
}

/* The real library's exports: each one its headers declare is wrapped,
 * under the version the real one carries (when it carries one). */
static void check_real(const struct lib *l, const struct syms *shim)
{
	for (size_t i = 0; i < l->real.n; i++) {
		const char *v;
		if (!find(&l->decl, l->real.name[i]))
			continue;
		if (!(v = find(shim, l->real.name[i]))) {
			fprintf(stderr, "%s exports %s, not wrapped\n", l->path,
				l->real.name[i]);
			dt_test_failures++;
		} else if (l->real.version[i][0] &&
			   strcmp(v, l->real.version[i])) {
			fprintf(stderr, "%s: version '%s', %s's is '%s'\n",
				l->real.name[i], v, l->path,
				l->real.version[i]);
			dt_test_failures++;
		}
	}
	for (size_t i = 0; i < l->decl.n; i++)
		if (!find(&l->real, l->decl.name[i]))
			printf("declared but not exported by %s: %s\n", l->path,
			       l->decl.name[i]);
}

int main(int argc, char **argv)
{
	struct syms shim = { 0 };
	struct lib libs[8] = { 0 };
	int nlibs = (argc - 2) / 3;

	if (argc < 5 || (argc - 2) % 3 || nlibs > 8) {
		fprintf(stderr,
			"usage: %s LIBDNNTRACE {LIBRARY API-LISTING "
			"VERSION-NODE}...\n",
			argv[0]);
		return 2;
	}
	elf_version(EV_CURRENT);
	if (read_exports(argv[1], &shim))
		return 1;
	for (int l = 0; l < nlibs; l++) {
		libs[l].path = argv[2 + 3 * l];
		libs[l].node = argv[4 + 3 * l];
		if (read_exports(libs[l].path, &libs[l].real) ||
		    read_listing(argv[3 + 3 * l], &libs[l].decl))
			return 1;
		printf("%s: %zu declared functions, %zu real exports\n",
		       libs[l].path, libs[l].decl.n, libs[l].real.n);
		CHECK(libs[l].decl.n > 40);
	}
	printf("%zu shim exports\n", shim.n);

	for (size_t i = 0; i < shim.n; i++) {
		int l = 0;
		if (check_other_export(shim.name[i], shim.version[i]))
			continue;
		while (l < nlibs && !find(&libs[l].decl, shim.name[i]))
			l++;
		if (l == nlibs) {
			fprintf(stderr, "exported but not declared: %s\n",
				shim.name[i]);
			dt_test_failures++;
		} else if (strcmp(shim.version[i], libs[l].node)) {
			fprintf(stderr, "%s has version '%s', not %s\n",
				shim.name[i], shim.version[i], libs[l].node);
			dt_test_failures++;
		}
	}
	for (int l = 0; l < nlibs; l++) {
		for (size_t i = 0; i < libs[l].decl.n; i++)
			if (!find(&shim, libs[l].decl.name[i])) {
				fprintf(stderr,
					"declared but not wrapped: %s\n",
					libs[l].decl.name[i]);
				dt_test_failures++;
			}
		check_real(&libs[l], &shim);
	}
	TEST_DONE();
}
