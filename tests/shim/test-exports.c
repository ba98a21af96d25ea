/*
 * test-exports.c - libdnntrace.so exports exactly the functions the cuDNN
 * headers declare, each under the version node libcudnn.so.9, plus the C
 * library functions it interposes; and every function the real libcudnn
 * exports and the headers declare is wrapped. Symbols read with libelf.
 *
 * usage: test-exports LIBDNNTRACE LIBCUDNN API-LISTING
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

int main(int argc, char **argv)
{
	struct syms shim = { 0 }, real = { 0 }, decl = { 0 };
	char line[4096];
	FILE *f;

	if (argc != 4) {
		fprintf(stderr, "usage: %s LIBDNNTRACE LIBCUDNN API-LISTING\n",
			argv[0]);
		return 2;
	}
	elf_version(EV_CURRENT);
	if (read_exports(argv[1], &shim) || read_exports(argv[2], &real))
		return 1;
	if (!(f = fopen(argv[3], "r")))
		return perror(argv[3]), 1;
	while (fgets(line, sizeof(line), f))
		if (line[0] != '#' && strchr(line, '('))
			*strchr(line, '(') = 0, add(&decl, line, NULL);
	fclose(f);
	printf("%zu declared functions, %zu shim exports, %zu real exports\n",
	       decl.n, shim.n, real.n);
	CHECK(decl.n > 200);

	static const char *const libc_fns[] = {
		"dlsym",   "execve",    "execv",  "execvp",     "execvpe",
		"fexecve", "execl",     "execlp", "execle",     "_exit",
		"_Exit",   "sigaction", "signal", "bsd_signal", "sysv_signal",
		"pthread_exit", "close", "closefrom", "close_range", "dup2",
		"dup3"
	};
	for (size_t i = 0; i < shim.n; i++) {
		bool is_libc = false;
		for (size_t j = 0; j < sizeof(libc_fns) / sizeof(libc_fns[0]);
		     j++)
			is_libc |= !strcmp(shim.name[i], libc_fns[j]);
		if (is_libc) {
			CHECK(!strncmp(shim.version[i], "GLIBC_", 6));
			continue;
		}
		if (!strcmp(shim.name[i], "InitializeInjection") ||
		    !strcmp(shim.name[i], "InitializeInjectionNvtx2") ||
		    !strcmp(shim.name[i], "dnntrace_recording")) {
			/* the CUDA driver's and NVTX's injection entries;
			 * whether the process records, for programs that
			 * ask */
			CHECK_EQ_S(shim.version[i], "DNNTRACE_0");
			continue;
		}
		if (!strncmp(shim.name[i], "cudaGraph", 9) ||
		    !strcmp(shim.name[i], "__cudaRegisterFunction")) {
			/* the CUDA runtime's graph calls and kernel
			 * registrations, either version */
			CHECK(!strcmp(shim.version[i], "libcudart.so.12") ||
			      !strcmp(shim.version[i], "libcudart.so.13"));
			continue;
		}
		if (!strncmp(shim.name[i], "cuGraph", 7) ||
		    !strncmp(shim.name[i], "cuGetProcAddress", 16)) {
			/* the driver's, unversioned there */
			CHECK_EQ_S(shim.version[i], "DNNTRACE_0");
			continue;
		}
		if (!strncmp(shim.name[i], "cupti", 5)) {
			/* interposed to share CUPTI with another client */
			CHECK_EQ_S(shim.version[i], "libcupti.so.13");
			continue;
		}
		if (!find(&decl, shim.name[i])) {
			fprintf(stderr, "exported but not declared: %s\n",
				shim.name[i]);
			dt_test_failures++;
		} else if (strcmp(shim.version[i], "libcudnn.so.9")) {
			fprintf(stderr,
				"%s has version '%s', not libcudnn.so.9\n",
				shim.name[i], shim.version[i]);
			dt_test_failures++;
		}
	}
	for (size_t i = 0; i < decl.n; i++)
		if (!find(&shim, decl.name[i])) {
			fprintf(stderr, "declared but not wrapped: %s\n",
				decl.name[i]);
			dt_test_failures++;
		}
	for (size_t i = 0; i < real.n; i++) {
		if (strncmp(real.name[i], "cudnn", 5))
			continue;
		if (!find(&decl, real.name[i]))
			printf("not in the headers, left unwrapped: %s\n",
			       real.name[i]);
		else
			CHECK(find(&shim, real.name[i]) != NULL);
	}
	for (size_t i = 0; i < decl.n; i++)
		if (!find(&real, decl.name[i]))
			printf("declared but not exported by %s: %s\n", argv[2],
			       decl.name[i]);
	TEST_DONE();
}
