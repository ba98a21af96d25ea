/*
 * table.c - tables and headings for the reports: cells collected row by
 * row, then printed aligned (numbers right, words left, the last column
 * unpadded), as a Markdown table or as an HTML table.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tools.h"

struct dt_table *dt_table_new(const char *const *headers, const char *align)
{
	struct dt_table *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	while (headers[t->cols])
		t->cols++;
	t->headers = headers;
	t->align = align;
	return t;
}

void dt_table_cell(struct dt_table *t, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	if (t->n_cells == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		char **c = realloc(t->cells, cap * sizeof(*c));
		if (!c)
			return;
		t->cells = c;
		t->cap = cap;
	}
	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	/* cells hold a trace's names: escaped once here for every format */
	if (s && dt_text(s) != s) {
		char *e = dt_text_dup(s);
		free(s);
		s = e;
	}
	t->cells[t->n_cells++] = s ? s : strdup("");
}

void dt_table_row_class(struct dt_table *t, const char *cls)
{
	size_t row = t->n_cells / t->cols;

	if (row >= t->cap_rows) {
		size_t cap = t->cap_rows ? t->cap_rows * 2 : 16;
		while (cap <= row)
			cap *= 2;
		const char **c = realloc(t->row_class, cap * sizeof(*c));
		if (!c)
			return;
		memset(c + t->cap_rows, 0, (cap - t->cap_rows) * sizeof(*c));
		t->row_class = c;
		t->cap_rows = cap;
	}
	t->row_class[row] = cls;
}

static size_t width(const char *s)
{
	size_t w = 0;

	/* UTF-8: count the characters, not the bytes */
	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

static void pad(FILE *out, size_t n)
{
	while (n--)
		fputc(' ', out);
}

static bool is_alnum(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
	       (c >= 'A' && c <= 'Z');
}

/* Whether GitHub's Markdown (cmark-gfm) would read s[i] as markup in a
 * cell: '|' ends the cell, a backslash escapes, '*', '`', '~' and a '_'
 * beside a non-word character open emphasis, code or strikethrough, '<'
 * an HTML tag or autolink, "](" a link. '&' is left alone: the reports'
 * indents are "&nbsp;" entities. */
static bool md_special(const char *s, size_t i)
{
	switch (s[i]) {
	case '|':
	case '\\':
	case '*':
	case '`':
	case '~':
	case '<':
		return true;
	case '_':
		return !i || !is_alnum(s[i - 1]) || !is_alnum(s[i + 1]);
	case ']':
		return s[i + 1] == '(' || s[i + 1] == '[';
	default:
		return false;
	}
}

/* A Markdown cell, its markup characters escaped so that it renders as
 * the text table shows it. */
static void put_md_cell(FILE *out, const char *s)
{
	fputc(' ', out);
	for (size_t i = 0; s[i]; i++) {
		if (md_special(s, i))
			fputc('\\', out);
		fputc(s[i], out);
	}
	fputs(" |", out);
}

/* The column HTML shows first: a table whose one text column is its last
 * names its rows there (the operation, the function), where a long name
 * runs freely in a terminal; on a page it goes first, where a wide
 * table's scrolling does not hide it. */
static size_t html_first(const struct dt_table *t)
{
	size_t last = t->cols - 1;

	for (size_t c = 0; c < last; c++)
		if (t->align[c] != 'r')
			return 0;
	return t->align[last] == 'l' ? last : 0;
}

/* The c-th column as HTML shows them. */
static size_t html_col(size_t first, size_t c)
{
	return !first ? c : c == 0 ? first : c - 1;
}

static void print_html(const struct dt_table *t, FILE *out)
{
	size_t rows = t->n_cells / t->cols, first = html_first(t);

	/* the wrapper scrolls a wide table on a narrow screen */
	fputs("<div class=\"tw\"><table>\n<thead><tr>", out);
	for (size_t k = 0; k < t->cols; k++) {
		size_t c = html_col(first, k);
		fprintf(out, "<th scope=\"col\" class=\"%c\">", t->align[c]);
		dt_html_escape(out, t->headers[c]);
		fputs("</th>", out);
	}
	fputs("</tr></thead>\n<tbody>\n", out);
	for (size_t r = 0; r < rows; r++) {
		const char *cls = r < t->cap_rows ? t->row_class[r] : NULL;
		if (cls)
			fprintf(out, "<tr class=\"%s\">", cls);
		else
			fputs("<tr>", out);
		for (size_t k = 0; k < t->cols; k++) {
			size_t c = html_col(first, k);
			fprintf(out, "<td class=\"%c\">", t->align[c]);
			dt_html_escape(out, t->cells[r * t->cols + c]);
			fputs("</td>", out);
		}
		fputs("</tr>\n", out);
	}
	fputs("</tbody></table></div>\n", out);
}

void dt_table_print(const struct dt_table *t, FILE *out, enum dt_format f,
		    bool bold)
{
	size_t rows = t->n_cells / t->cols;
	bool markdown = f == DT_MARKDOWN;
	size_t *w;

	if (f == DT_HTML) {
		print_html(t, out);
		return;
	}
	if (!(w = calloc(t->cols, sizeof(*w))))
		return;
	for (size_t c = 0; c < t->cols; c++) {
		w[c] = width(dt_text(t->headers[c]));
		for (size_t r = 0; r < rows; r++) {
			size_t k = width(t->cells[r * t->cols + c]);
			if (k > w[c])
				w[c] = k;
		}
	}
	if (markdown) {
		fputc('|', out);
		for (size_t c = 0; c < t->cols; c++)
			put_md_cell(out, dt_text(t->headers[c]));
		fputs("\n|", out);
		for (size_t c = 0; c < t->cols; c++)
			fputs(t->align[c] == 'r' ? "---:|" : "---|", out);
		fputc('\n', out);
		for (size_t r = 0; r < rows; r++) {
			fputc('|', out);
			for (size_t c = 0; c < t->cols; c++)
				put_md_cell(out, t->cells[r * t->cols + c]);
			fputc('\n', out);
		}
		/* a line right after a table would be read as its next row */
		fputc('\n', out);
		free(w);
		return;
	}
	/* each line is built whole, so that it ends without blanks */
	char *line = NULL;
	size_t size = 0;
	FILE *l = open_memstream(&line, &size);
	if (!l) {
		free(w);
		return;
	}
	for (size_t r = 0; r <= rows; r++) {
		rewind(l);
		for (size_t c = 0; c < t->cols; c++) {
			const char *s = r ? t->cells[(r - 1) * t->cols + c]
					  : dt_text(t->headers[c]);
			size_t k = width(s), room = w[c] - k;
			bool last = c + 1 == t->cols;
			if (c)
				fputs("  ", l);
			if (t->align[c] == 'r')
				pad(l, room);
			fputs(s, l);
			if (t->align[c] != 'r' && !last)
				pad(l, room);
		}
		fputc(0, l);
		fflush(l);
		size_t n = strlen(line);
		while (n && line[n - 1] == ' ')
			n--;
		fprintf(out, "%s%.*s%s\n", r == 0 && bold ? "\033[1m" : "",
			(int)n, line, r == 0 && bold ? "\033[0m" : "");
	}
	fclose(l);
	free(line);
	free(w);
}

void dt_table_free(struct dt_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n_cells; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t->row_class);
	free(t);
}

void dt_heading(FILE *out, enum dt_format f, const char *md_level, bool bold,
		const char *fmt, ...)
{
	va_list ap;

	if (f == DT_HTML) {
		char *s = NULL;
		va_start(ap, fmt);
		if (vasprintf(&s, fmt, ap) < 0)
			s = NULL;
		va_end(ap);
		fputs("<h2>", out);
		dt_html_escape(out, s);
		fputs("</h2>\n", out);
		free(s);
		return;
	}
	if (f != DT_MARKDOWN)
		md_level = NULL;
	if (md_level)
		fprintf(out, "\n%s ", md_level);
	else
		fputc('\n', out);
	if (bold)
		fputs("\033[1m", out);
	va_start(ap, fmt);
	dt_vprint_text(out, false, fmt, ap);
	va_end(ap);
	if (bold)
		fputs("\033[0m", out);
	fputs(md_level ? "\n\n" : "\n", out);
}

void dt_para(FILE *out, enum dt_format f, const char *cls, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	va_start(ap, fmt);
	if (f != DT_HTML) {
		dt_vprint_text(out, true, fmt, ap);
		va_end(ap);
		return;
	}
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	if (!s)
		return;
	/* the line ends that text needs are no part of a paragraph */
	char *p = s + strspn(s, "\n");
	size_t n = strlen(p);
	while (n && p[n - 1] == '\n')
		p[--n] = 0;
	if (n) {
		if (cls)
			fprintf(out, "<p class=\"%s\">", cls);
		else
			fputs("<p>", out);
		dt_html_escape(out, p);
		fputs("</p>\n", out);
	}
	free(s);
}

bool dt_colors(bool to_stdout)
{
	const char *term = getenv("TERM");

	return to_stdout && isatty(STDOUT_FILENO) && !getenv("NO_COLOR") &&
	       !(term && !strcmp(term, "dumb"));
}

/* 1234e9 -> "1.23 T": three significant digits and an SI prefix. */
const char *dt_fmt_si(double v, char *buf, size_t size)
{
	static const char *const prefix[] = {
		"", "k", "M", "G", "T", "P", "E"
	};
	int p = 0;

	if (!(v > 0)) {
		snprintf(buf, size, "-");
		return buf;
	}
	while (v >= 1000 && p < 6) {
		v /= 1000;
		p++;
	}
	snprintf(buf, size,
		 v < 10    ? "%.2f %s"
		 : v < 100 ? "%.1f %s"
			   : "%.0f %s",
		 v, prefix[p]);
	return buf;
}

double dt_pct_of(double part, double whole)
{
	return whole ? 100.0 * part / whole : -1;
}

const char *dt_fmt_pct(double v, char *buf, size_t size)
{
	if (v < 0)
		snprintf(buf, size, "-");
	else
		snprintf(buf, size, v < 10 ? "%.1f%%" : "%.0f%%", v);
	return buf;
}
