/*
 * tools.h - what the dnntrace subcommands share: the command table,
 * error reporting and exit codes. Private to tools/.
 */
#ifndef TOOLS_H
#define TOOLS_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <stdint.h>

#include "dt-analyzer.h"

/* Output formats of the reading commands. */
enum dt_format { DT_TEXT, DT_MARKDOWN, DT_JSON, DT_HTML, DT_CSV };
#define DT_FORMATS_PLAIN ((1u << DT_TEXT) | (1u << DT_JSON))
#define DT_FORMATS_ALL \
	(DT_FORMATS_PLAIN | (1u << DT_MARKDOWN) | (1u << DT_HTML))

/* --format ARG among the allowed ones (a mask of 1 << DT_*): 0 and *f
 * set, or a usage error of cmd printed and EXIT_USAGE returned. */
int dt_parse_format(const char *cmd, const char *arg, unsigned allowed,
		    enum dt_format *f);

struct option;
/* getopt_long for cmd, which says itself what is wrong with an option
 * (one sentence: unknown, ambiguous, missing or unwanted value) and
 * returns '?' for it, after which the command returns EXIT_USAGE. */
int dt_getopt(const char *cmd, int argc, char **argv, const char *shortopts,
	      const struct option *longopts);

/* Exit codes: 0 success, 1 the command's own failure (a gate, a child that
 * failed), 2 bad usage, unreadable input, or output that could not be
 * written (a full disk, a closed pipe, an existing file). */
enum { EXIT_USAGE = 2 };

struct dt_cmd {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

int cmd_record(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_ops(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_fusion(int argc, char **argv);
int cmd_kernels(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_replay(int argc, char **argv);

/* What a recorded run left: the traces its processes wrote, and what went
 * wrong in them (a sentence each: a file that could not be created, or
 * could not take every record). */
struct dt_record_result {
	char **paths;
	size_t n_paths;
	char **notes;
	size_t n_notes;
	bool ran; /* the command was started */
};

/* Run cmd with the shim preloaded and traces named from tmpl; wait for
 * it. Returns its exit status (128 + signal when killed; 127 when it was
 * not found and 126 when it could not be run, as shells do), or a negative
 * number when recording could not be set up: a bad template, an output
 * where no trace can go (the reason is printed). Fills res (free it with
 * dt_record_free). */
int dt_record_run(char **cmd, const char *tmpl, struct dt_record_result *res);
void dt_record_free(struct dt_record_result *res);

/* Set LD_PRELOAD for cmd: the shim first, before what it held already,
 * but after AddressSanitizer's runtime where the program or the shim
 * needs it. Returns 0, or -1 with errno. */
int dt_record_preload(const char *shim, const char *cmd);

/* Print, on stderr, the traces written (unless quiet) and what went wrong. */
void dt_record_say(const struct dt_record_result *res, bool quiet);

/* Print a trace's summary / every record, as `info` / `dump` do. Return an
 * exit code. */
int dt_info_file(const char *path, long top_calls);
int dt_dump_file(const char *path, bool raw, bool mangled);

/* Print "dnntrace: <message>" on stderr. */
void dt_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Print the usage error, a hint to --help, and return EXIT_USAGE. */
int dt_usage_error(const char *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Open a trace or say why not (one sentence on stderr); NULL on failure. */
struct dt_session *dt_open_session(const char *path,
				   const struct dt_session_opts *opts);

/* Folder holding the running dnntrace executable (static storage). */
const char *dt_self_dir(void);

/* The first of dirs, relative to that folder, that holds name accessible
 * with mode (access(2)'s R_OK, X_OK): its absolute path in buf (PATH_MAX
 * bytes), or NULL. How dnntrace finds what is installed with it, wherever
 * the tree went. */
const char *dt_find_beside(const char *const *dirs, size_t n_dirs,
			   const char *name, int mode, char *buf);

/* --------------------------------------------------------- Escaping */

/* A trace's strings are the traced process's bytes (escape.c): printers
 * show them through these, never as they are. */

/* Bytes of the character at s (n left) that may be shown as it is: 1 to
 * 4; 0 for a control character (C0, DEL, C1) or a byte that starts no
 * UTF-8 character. */
int dt_char_shown(const char *s, size_t n);

/* s for text and Markdown: each byte of what dt_char_shown() refuses
 * written \xNN ("\x1b"), the rest as it is. Returns s itself when
 * nothing needed it (NULL stays NULL), else a copy that stays valid for
 * the next DT_TEXT_RING - 1 calls. */
#define DT_TEXT_RING 16
const char *dt_text(const char *s);
/* The same as a malloc'ed copy (the caller frees it); NULL for NULL or
 * without memory. */
char *dt_text_dup(const char *s);
/* s written to out as dt_text() shows it; keep_nl keeps its line ends
 * (prose that brings its own). */
void dt_put_text(FILE *out, const char *s, bool keep_nl);
/* The same for the first n bytes of s at most (a record's tail). */
void dt_put_textn(FILE *out, const char *s, size_t n);
/* What fmt makes of ap, written as dt_put_text() writes it: messages and
 * prose whose arguments may come from a trace. */
void dt_vprint_text(FILE *out, bool keep_nl, const char *fmt, va_list ap);
/* Whether a spreadsheet would run the CSV text s (n bytes) as a formula
 * (OWASP's CSV injection): its cell then takes a ' before it. */
bool dt_csv_formula(const char *s, size_t n);

/* ------------------------------------------------------------- JSON */

/* The JSON writer (json.c): it escapes, formats numbers and puts the
 * separators; the caller says which members and elements start a line
 * (nl: the indent of that line, or -1 to stay on the line). */
#define DT_JSON_DEPTH 16
struct dt_json_level {
	bool any;     /* something was written in it */
	int items;    /* an array's elements start a line with this indent */
	char bracket; /* '[' or '{' */
};
struct dt_json {
	FILE *out;
	int depth;
	bool after_key;
	bool compact; /* no space after ',' and ':' (set after init) */
	struct dt_json_level lv[DT_JSON_DEPTH];
	size_t len;         /* bytes in buf, not yet written to out */
	char buf[1 << 16];  /* last: dt_json_init() leaves it as it is */
};

void dt_json_init(struct dt_json *j, FILE *out);
/* '{' or '[' as the next value; an array's elements start a line indented
 * by items (-1: they follow each other on the line). */
void dt_json_open(struct dt_json *j, char bracket, int items);
/* Close the innermost container, on a line of its own when nl >= 0. */
void dt_json_close(struct dt_json *j, int nl);
/* The next member's key, on the line or starting a new one. */
void dt_json_key(struct dt_json *j, const char *key);
void dt_json_key_nl(struct dt_json *j, const char *key, int nl);
void dt_json_keyn(struct dt_json *j, const char *key, size_t n);
/* Values. */
void dt_json_str(struct dt_json *j, const char *s); /* null for NULL */
void dt_json_strn(struct dt_json *j, const char *s, size_t n);
void dt_json_u64(struct dt_json *j, uint64_t v);
void dt_json_i64(struct dt_json *j, int64_t v);
void dt_json_milli(struct dt_json *j, uint64_t v); /* v / 1000 with three
						     decimals: 1234 ->
						     1.234 */
void dt_json_num(struct dt_json *j, double v); /* integers without a
						  fraction, null unless
						  finite */
void dt_json_g(struct dt_json *j, double v);   /* %.6g */
void dt_json_opt(struct dt_json *j, double v); /* null when negative */
void dt_json_bool(struct dt_json *j, bool v);
void dt_json_tri(struct dt_json *j, int v); /* null when negative */
void dt_json_null(struct dt_json *j);
void dt_json_hex(struct dt_json *j, uint64_t v); /* "0x1f" */
/* A value printf formats (a number in a fixed format). */
void dt_json_raw(struct dt_json *j, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* A member on the line: "key": v. */
void dt_json_ku(struct dt_json *j, const char *key, uint64_t v);
void dt_json_ks(struct dt_json *j, const char *key, const char *v);
void dt_json_ki(struct dt_json *j, const char *key, int64_t v);
void dt_json_kn(struct dt_json *j, const char *key, double v); /* num */
void dt_json_kg(struct dt_json *j, const char *key, double v); /* %.6g */
/* Bytes of the valid UTF-8 character at p (n bytes left): 1 to 4, or 0
 * for a byte that starts none. */
int dt_utf8_len(const char *p, size_t n);
/* s as a JSON string on its own, quotes included; null for NULL. */
void dt_json_quote(FILE *out, const char *s);

/* A table printed aligned (text), as Markdown or as an HTML table:
 * headers and an alignment per column ('l' or 'r'), then cells row by
 * row. */
struct dt_table {
	size_t cols;
	const char *const *headers;
	const char *align;
	char **cells;
	size_t n_cells, cap;
	const char **row_class; /* HTML: a class per row, or NULL */
	size_t cap_rows;
};
struct dt_table *dt_table_new(const char *const *headers, const char *align);
void dt_table_cell(struct dt_table *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* The class of the row whose cells come next (static storage), for HTML:
 * what a row is, such as "slower". */
void dt_table_row_class(struct dt_table *t, const char *cls);
/* Text and Markdown put the header in bold when asked (a terminal). */
void dt_table_print(const struct dt_table *t, FILE *out, enum dt_format f,
		    bool bold);
void dt_table_free(struct dt_table *t);

/* A section's heading: a Markdown heading of md_level ("##"), an HTML
 * <h2>, or a plain line, in bold when asked. */
void dt_heading(FILE *out, enum dt_format f, const char *md_level, bool bold,
		const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* Prose: printed as it is in text and Markdown (fmt brings its line
 * ends), escaped into a paragraph of class cls (NULL for none) in HTML. */
void dt_para(FILE *out, enum dt_format f, const char *cls, const char *fmt,
	     ...) __attribute__((format(printf, 4, 5)));

/* ------------------------------------------------------------- HTML */

/* One self-contained page (html.c): inline CSS, inline SVG, no script, no
 * outside resource; monochrome under NO_COLOR, dark when the reader's
 * system is. */
void dt_html_begin(FILE *out, const char *title);
void dt_html_end(FILE *out);
/* s with &, <, >, " and ' escaped (NULL prints nothing). */
void dt_html_escape(FILE *out, const char *s);

/* An <svg> of w x h user units that scales to the page's width, with its
 * <title> and <desc> (escaped); dt_svg_close() ends it. */
void dt_svg_open(FILE *out, int w, int h, const char *title,
		 const char *desc);
void dt_svg_close(FILE *out);
/* An SVG <text> at x, y, anchored "start", "middle" or "end", escaped;
 * cls may be NULL. */
void dt_svg_text(FILE *out, double x, double y, const char *anchor,
		 const char *cls, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

/* Horizontal bars with their values written beside them. */
struct dt_svg_bar {
	const char *label; /* left of the bar */
	const char *tag;   /* between label and bar ("base", "new"), or NULL */
	const char *text;  /* the value, written after the bar */
	double value;      /* the bar's length, against the largest */
	int series;        /* 0 filled, 1 outlined (the second of a pair) */
};
void dt_svg_bars(FILE *out, const char *title, const char *desc,
		 const struct dt_svg_bar *bars, size_t n);

/* Whether output to stdout may be coloured: a terminal, NO_COLOR unset,
 * TERM not dumb. */
bool dt_colors(bool to_stdout);

struct dt_summary;
struct dt_summary_opts;

/* The traces named: files as they are, folders by their *.dnnt (sorted),
 * each malloc'ed, in a malloc'ed array of *count. A folder that cannot be
 * read or holds no trace is reported on stderr. */
char **dt_collect_inputs(char **args, int n, size_t *count);

/* Read the traces named (files, or folders of *.dnnt) into a finished
 * summary. Unreadable ones are reported on stderr and *rc set to
 * EXIT_USAGE; NULL when none could be read. */
struct dt_summary *dt_load_summary(char **args, int n,
				   const struct dt_summary_opts *opts, int *rc);

/* A line for each incomplete trace of s (dt_trace_complete(): how it
 * ended, what was lost), each starting with lead, and what that means;
 * returns how many. */
int dt_print_unclean(FILE *out, enum dt_format f, const struct dt_summary *s,
		     const char *lead);


/* {...}: CUDA graph launches, replays, kernels (analyzer/REPORT.md's
 * GRAPHS), the value of a "graphs" key. */
void dt_json_graphs(struct dt_json *j, const struct dt_graph_stats *g);
/* {...}: execution plans built, restored from JSON, and what their JSON
 * did not tell (analyzer/REPORT.md's PLANS), the value of a "plans" key. */
void dt_json_plans(struct dt_json *j, const struct dt_plan_stats *p);

/* Why f is incomplete, in words: how it ended when not cleanly, else what
 * its writer lost, else what CUPTI dropped. */
const char *dt_incomplete_why(const struct dt_sum_file *f);

/* A trace's "complete", "ended", "ended_how", "lost", ... fields, as
 * analyzer/REPORT.md lists them for a FILE. */
void dt_json_trace_end(struct dt_json *j, const struct dt_sum_file *f);

/* "gpu_sample": a trace's sampled GPU recording (record --gpu-sample), as
 * analyzer/REPORT.md lists it for a FILE. */
void dt_json_gpu_sample(struct dt_json *j, const struct dt_gpu_sampling *sm);

/* 1.23e12 -> "1.23 T" (three significant digits, SI prefix; "-" for 0). */
const char *dt_fmt_si(double v, char *buf, size_t size);
/* bytes moved in ns, per second, in words ("1.2 TB/s", "45.0 GB/s"); "-"
 * when either is 0. */
const char *dt_fmt_rate(double bytes, uint64_t ns, char *buf, size_t size);
/* part as a percentage of whole; -1 (unknown) when whole is 0. */
double dt_pct_of(double part, double whole);
/* 12.3 -> "12%", 4.56 -> "4.6%", negative (unknown) -> "-". */
const char *dt_fmt_pct(double v, char *buf, size_t size);
/* "4.8T", "900G", "1.2e12", "67 TFLOP/s", "10us" style numbers: see
 * dt_parse_rate (SI prefix, optional unit) ; -1 when malformed. */
double dt_parse_rate(const char *s);

/* The version of the dnntrace.report JSON schema (analyzer/REPORT.md). */
#define DT_REPORT_SCHEMA_VERSION 3

/* The fusion part of a summary made with opts.fusion: the report's text
 * section (the top chains), and its JSON object. */
void dt_fusion_text(FILE *out, const struct dt_summary *s, enum dt_format f,
		    bool color, long top);

/* The report's sections on all GPU work (report-gpu.c): GPU time by
 * library and operation family; and by phase (batches, token generation),
 * printed only when some matrix products were matrix-vector ones. */
void dt_report_libraries(FILE *out, const struct dt_summary *s,
			 enum dt_format f, bool color);
/* DRAM traffic sampled from the GPU's counters (record --gpu-metrics):
 * the section, and its JSON "dram" member; nothing when no trace asked. */
void dt_report_dram(FILE *out, const struct dt_summary *s, enum dt_format f,
		    bool color, long top);
void dt_json_dram(struct dt_json *j, const struct dt_summary *s);

/* The "steps" object (print/json-steps.c); null when s is NULL. */
struct dt_step_stats;
void dt_json_steps(struct dt_json *j, const struct dt_step_stats *s);
void dt_report_phases(FILE *out, const struct dt_summary *s, enum dt_format f,
		      bool color);

/* The traces of a job in the order the report lists them (report-ranks.c):
 * traces without a rank first, then by rank number, then by path with
 * numbers compared as numbers; n_files indexes the caller frees, NULL when
 * out of memory. */
size_t *dt_rank_order(const struct dt_summary *s);
/* The report's Traces section: a row per trace, or above a screenful of
 * them (unless all) each column's spread and the ranks that stand out. */
void dt_report_traces(FILE *out, const struct dt_summary *s, enum dt_format f,
		      bool color, bool all);

/* The report's pictures in HTML (report-html.c; the roofline
 * report-roofline.c), each with a title, a description and a table or
 * text saying the same. */
/* GPU time by op kind, and by library or kernel family. */
void dt_html_time_bars(FILE *out, const struct dt_summary *s);
/* The GPU busy and idle over the run, a strip per trace. */
void dt_html_timeline(FILE *out, const struct dt_summary *s);
/* DRAM bytes per second over the run against the peak (--gpu-metrics). */
void dt_html_dram(FILE *out, const struct dt_summary *s);
/* GPU time, busy share and calls per rank (several traces). */
void dt_html_ranks(FILE *out, const struct dt_summary *s);
/* The problems (ix: n of them, in the report's order) against the
 * roofline, and those without FLOPs or bytes, which are not plotted. */
void dt_html_roofline(FILE *out, const struct dt_summary *s,
		      const uint32_t *ix, size_t n, long top);
/* The fusion chains (the first top, 0 all) as boxes and arrows. */
void dt_html_chains(FILE *out, const struct dt_summary *s, long top);
void dt_fusion_json(struct dt_json *j, const struct dt_summary *s);

/* --top N: *n gets N (0 or more), or a usage error of cmd is printed and
 * EXIT_USAGE returned. */
int dt_parse_top(const char *cmd, const char *arg, long *n);

/* The rates a GPU's peak can have: an option outside them is a typo (a
 * bandwidth of "1" is one byte per second), refused rather than made into
 * a percent of peak in the trillions. */
struct dt_rate_range {
	const char *what; /* "bytes per second" */
	double min, max;
	const char *min_text, *max_text, *example;
};
extern const struct dt_rate_range dt_bandwidth_range; /* 1 GB/s..1 PB/s */
extern const struct dt_rate_range dt_flops_range; /* 1 GFLOP/s..1 EFLOP/s */

/* The rate option opt of cmd (dt_parse_rate) within r: 0 and *v set, or
 * a usage error printed and EXIT_USAGE returned. */
int dt_parse_rate_in(const char *cmd, const char *opt, const char *arg,
		     const struct dt_rate_range *r, double *v);

/* Where a command writes (output.c). */
struct dt_output {
	FILE *f;
	const char *path; /* NULL: standard output */
	char *tmp;        /* written under this name until closed */
	bool force;       /* replace an existing file */
};

/* Open path (-o) for writing, or stdout when path is NULL or "-": a new
 * file under a temporary name beside it, or a device or pipe as it is.
 * An existing file is refused unless force, a symbolic link always.
 * Returns o->f, or NULL with one sentence on stderr. */
FILE *dt_open_output(struct dt_output *o, const char *path, bool force);

/* A new file beside path to write it under until it is complete:
 * "DIR/.NAME.XXXXXX", made with the mode a new file gets (0666 less the
 * umask). Its descriptor and, in *tmp, its name (the caller frees it); or
 * -1 with errno. */
int dt_output_temp(const char *path, char **tmp);

/* Finish writing: with keep, the file is put in place under its name;
 * without (the command failed), what was written is removed. Returns 0,
 * or EXIT_USAGE with one sentence on stderr when it could not be written
 * out. */
int dt_close_output(struct dt_output *o, bool keep);

/* Flush stdout: 0, or EXIT_USAGE with one sentence on stderr (said once)
 * when what was printed could not be written. */
int dt_flush_stdout(void);

/* A command's exit code rc, or EXIT_USAGE when what it printed on stdout
 * could not be written (dt_flush_stdout()): for main(). */
int dt_finish(int rc);

/* "startup": what the start-ups held, left out of what follows (report's
 * gpu, ops, apis and findings; ops' and kernels' listings): report-json.c */
void dt_json_startup(struct dt_json *j, const struct dt_summary *s);

/* The steady state of a listing (commands/steady.c): a summary read in
 * the same pass says where each trace is cut, as report cuts it; entries
 * are kept with the time it places them by until then. */
struct dt_steady;
/* whole: nothing cut (--with-warmup). NULL, said, when it cannot be. */
struct dt_steady *dt_steady_new(bool whole);
void dt_steady_free(struct dt_steady *st);
/* Run the session (its own consumers added first) and the summary on
 * it: 0, or -1 said. */
int dt_steady_read(struct dt_steady *st, struct dt_session *ss);
/* An entry of len bytes placed at t (dt_sum_op_t, dt_activity.placed). */
void dt_steady_keep(struct dt_steady *st, uint64_t t, const void *p,
		    size_t len);
/* Once the session ran: fn on each entry of the trace's steady state, in
 * the order kept (p ends with a NUL past len), and the entries are gone:
 * 0, or -1 said when they could not be read back. */
int dt_steady_each(struct dt_steady *st,
		   void (*fn)(void *arg, const void *p, size_t len), void *arg);
/* The summary of the traces read: their start-up (dt_sum_startup_text). */
const struct dt_summary *dt_steady_summary(const struct dt_steady *st);

#endif /* TOOLS_H */
