/*
 * html.c - the frame of the HTML reports: one self-contained page (inline
 * CSS, inline SVG, no script and nothing fetched from elsewhere; well-formed
 * XML too, so that any XML parser can check it), escaping, and the SVG
 * pieces the pictures are drawn with. What goes on the page is
 * the commands' own: their tables and headings come through table.c.
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tools.h"

/* Colours are variables: a light and a dark palette, and a monochrome one
 * under NO_COLOR. Nothing is said by colour alone: bars carry their
 * values, rows their verdict in words, points their number. */
static const char css[] =
	":root{--fg:#1a1a1a;--bg:#fff;--mute:#5c5c5c;--line:#c9c9c9;"
	"--head:#f0f0f0;--bar:#2f6db5;--bar2:#b35c00;--roof:#333;"
	"--bad:#b42318;--badbg:#fde8e6;--good:#1a7f37;--goodbg:#e3f4e8;"
	"--warn:#6b4800;--warnbg:#fff3cd}\n"
	"@media (prefers-color-scheme:dark){:root{--fg:#e6e6e6;--bg:#161616;"
	"--mute:#a3a3a3;--line:#484848;--head:#262626;--bar:#6ea8ec;"
	"--bar2:#f0a050;--roof:#cfcfcf;--bad:#ff8a80;--badbg:#3d1c1a;"
	"--good:#7ddc8f;--goodbg:#17321f;--warn:#f5d67a;--warnbg:#3a300f}}\n"
	"html.mono{--bar:#595959;--bar2:#1a1a1a;--bad:var(--fg);"
	"--badbg:var(--head);--good:var(--fg);--goodbg:transparent;"
	"--warn:var(--fg);--warnbg:var(--head)}\n"
	"@media (prefers-color-scheme:dark){html.mono{--bar:#b0b0b0;"
	"--bar2:#e6e6e6}}\n"
	"body{margin:0;background:var(--bg);color:var(--fg);"
	"font:14px/1.45 system-ui,sans-serif}\n"
	"main{max-width:1400px;margin:0 auto;padding:.5em 1em 2em}\n"
	"h1{font-size:1.6em;margin:.5em 0}\n"
	"h2{font-size:1.25em;margin:1.8em 0 .5em;"
	"border-bottom:1px solid var(--line)}\n"
	"p{margin:.4em 0;overflow-wrap:anywhere}\n"
	"dl.facts{display:grid;grid-template-columns:max-content 1fr;"
	"gap:.1em 1em;margin:0}\n"
	"dl.facts dt{grid-column:1;font-weight:600}\n"
	"dl.facts dd{grid-column:2;margin:0;overflow-wrap:anywhere}\n"
	".tw{overflow-x:auto;margin:.6em 0}\n"
	"table{border-collapse:collapse;font-size:.92em}\n"
	"th,td{padding:.15em .6em;border-bottom:1px solid var(--line);"
	"vertical-align:top}\n"
	"th{background:var(--head)}\n"
	"th.l,td.l{text-align:left}\n"
	/* a long last column scrolls rather than squeezing into a tower */
	"@media screen{td.l:last-child{white-space:nowrap}}\n"
	/* a row's name first (table.c) wraps, but not into a tower */
	"td.l:first-child{min-width:22em;overflow-wrap:anywhere}\n"
	".sub{margin-left:2em}\n"
	"th.r,td.r{text-align:right;white-space:nowrap;"
	"font-variant-numeric:tabular-nums}\n"
	"tr.slower{background:var(--badbg)}\n"
	"tr.faster{background:var(--goodbg)}\n"
	"tr.slower td:first-child,tr.removed td:first-child{color:var(--bad);"
	"font-weight:700}\n"
	"tr.faster td:first-child{color:var(--good);font-weight:700}\n"
	".warn{background:var(--warnbg);color:var(--warn);"
	"border-left:4px solid currentColor;padding:.3em .8em}\n"
	".failed{color:var(--bad);font-weight:700}\n"
	".passed{color:var(--good);font-weight:700}\n"
	"ol.findings li{margin:.3em 0}\n"
	"ol.findings ul{color:var(--mute);overflow-wrap:anywhere}\n"
	"figure{margin:1em 0}\n"
	"figcaption{color:var(--mute);font-size:.92em}\n"
	".pics{display:flex;flex-wrap:wrap;gap:0 2em}\n"
	/* pictures side by side only where each has its drawn width: shrunk
	 * to share a line, their 12px labels would read as 7 */
	".pics figure{flex:0 1 640px;min-width:0}\n"
	"svg{display:block;width:100%;height:auto;"
	"font:12px system-ui,sans-serif}\n"
	"svg text{fill:var(--fg)}\n"
	"svg .mute{fill:var(--mute)}\n"
	"svg .bar{fill:var(--bar)}\n"
	"svg .bar2{fill:var(--bg);stroke:var(--bar2);stroke-width:1.5;"
	"stroke-dasharray:4 2}\n"
	"svg .grid{stroke:var(--line);stroke-width:1}\n"
	"svg .axis{stroke:var(--fg);stroke-width:1;fill:none}\n"
	"svg .roof{stroke:var(--roof);stroke-width:1.5;fill:none}\n"
	"svg .pt{fill:var(--bar);fill-opacity:.55;stroke:var(--bar);"
	"stroke-width:1.2}\n"
	"svg .box{fill:var(--head);stroke:var(--fg);stroke-width:1}\n"
	"svg .gone{stroke-dasharray:5 3}\n"
	"svg .arrow{stroke:var(--fg);stroke-width:1.3;fill:none}\n"
	"svg .tip{fill:var(--fg)}\n"
	"@media (max-width:600px){dl.facts{grid-template-columns:1fr}"
	"dl.facts dd{grid-column:1;margin-left:1em}main{padding:.3em .5em}}\n"
	"@media print{body{font-size:10pt}main{max-width:none}"
	".tw{overflow:visible}figure,tr{break-inside:avoid}}\n";

void dt_html_escape(FILE *out, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '&':
			fputs("&amp;", out);
			break;
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		case '\'':
			fputs("&#39;", out);
			break;
		default: {
			/* control characters and bytes that are not UTF-8 are
			 * no XML text: U+FFFD stands for them */
			unsigned char c = (unsigned char)*s;
			bool space = c == '\t' || c == '\n' || c == '\r';
			int len = space ? 1 : dt_char_shown(s, strlen(s));
			if (!len) {
				fputs("\xef\xbf\xbd", out);
			} else {
				fwrite(s, 1, (size_t)len, out);
				s += len - 1;
			}
		}
		}
	}
}

void dt_html_begin(FILE *out, const char *title)
{
	/* as dt_colors(): set at all, NO_COLOR asks for no colour */
	bool mono = getenv("NO_COLOR") != NULL;

	fprintf(out,
		"<!DOCTYPE html>\n<html lang=\"en\"%s>\n<head>\n"
		"<meta charset=\"utf-8\"/>\n"
		"<meta name=\"viewport\" content=\"width=device-width, "
		"initial-scale=1\"/>\n"
		"<meta name=\"color-scheme\" content=\"light dark\"/>\n"
		"<title>",
		mono ? " class=\"mono\"" : "");
	dt_html_escape(out, title);
	fprintf(out, "</title>\n<style>\n%s</style>\n</head>\n<body>\n<main>\n"
		     "<h1>", css);
	dt_html_escape(out, title);
	fputs("</h1>\n", out);
}

void dt_html_end(FILE *out)
{
	fputs("</main>\n</body>\n</html>\n", out);
}

/* ---------------------------------------------------------------- SVG */

/* Ids tie each picture to its title and description; they only need to
 * be unique within the page, which one command writes. */
static unsigned svg_count;

void dt_svg_open(FILE *out, int w, int h, const char *title,
		 const char *desc)
{
	unsigned k = ++svg_count;

	fprintf(out,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 %d "
		"%d\" role=\"img\" aria-labelledby=\"svg%u-t svg%u-d\" "
		"style=\"max-width:%dpx\">\n<title id=\"svg%u-t\">",
		w, h, k, k, w, k);
	dt_html_escape(out, title);
	fprintf(out, "</title>\n<desc id=\"svg%u-d\">", k);
	dt_html_escape(out, desc);
	fputs("</desc>\n", out);
}

void dt_svg_close(FILE *out)
{
	fputs("</svg>\n", out);
}

void dt_svg_text(FILE *out, double x, double y, const char *anchor,
		 const char *cls, const char *fmt, ...)
{
	va_list ap;
	char *s = NULL;

	va_start(ap, fmt);
	if (vasprintf(&s, fmt, ap) < 0)
		s = NULL;
	va_end(ap);
	fprintf(out, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\"", x, y,
		anchor);
	if (cls)
		fprintf(out, " class=\"%s\"", cls);
	fputc('>', out);
	dt_html_escape(out, s);
	fputs("</text>\n", out);
	free(s);
}

#define BAR_W     640 /* the picture's width, user units */
#define BAR_ROW   20
#define BAR_TAG   40  /* room for a tag */
#define BAR_VALUE 118 /* room for the value after the longest bar, at least */
#define LABEL_MAX 38  /* characters of a label shown */
#define CHAR_W    7.2 /* at most, mostly, at 12px */

void dt_svg_bars(FILE *out, const char *title, const char *desc,
		 const struct dt_svg_bar *b, size_t n)
{
	bool tags = false;
	double max = 0;
	size_t longest = 1, longest_text = 1;

	for (size_t i = 0; i < n; i++) {
		size_t len = b[i].label ? strlen(b[i].label) : 0;
		size_t text = b[i].text ? strlen(b[i].text) : 0;
		tags |= b[i].tag != NULL;
		if (b[i].value > max)
			max = b[i].value;
		if (len > longest)
			longest = len;
		if (text > longest_text)
			longest_text = text;
	}
	/* labels end here: short ones leave the bars more room */
	double label_end = 4 + CHAR_W * (double)(longest < LABEL_MAX ? longest
								    : LABEL_MAX);
	double x0 = label_end + 8 + (tags ? BAR_TAG : 0);
	/* the longest value fits after the longest bar, however long it is
	 * ("1051.4 us (+79.8%)") */
	double value = 5 + CHAR_W * (double)longest_text;
	double room = BAR_W - x0 - (value > BAR_VALUE ? value : BAR_VALUE);
	dt_svg_open(out, BAR_W, (int)n * BAR_ROW + 8, title, desc);
	for (size_t i = 0; i < n; i++) {
		double y = 4 + (double)i * BAR_ROW;
		double len = max > 0 && b[i].value > 0 ? room * b[i].value / max
						       : 0;
		const char *l = b[i].label ? b[i].label : "";
		if (len > 0 && len < 1)
			len = 1; /* there, though small */
		if (strlen(l) > LABEL_MAX)
			dt_svg_text(out, label_end, y + 14, "end", NULL,
				    "%.*s...", LABEL_MAX - 3, l);
		else
			dt_svg_text(out, label_end, y + 14, "end", NULL, "%s",
				    l);
		if (b[i].tag)
			dt_svg_text(out, x0 - 6, y + 14, "end", "mute", "%s",
				    b[i].tag);
		fprintf(out,
			"<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
			"height=\"14\"/>\n",
			b[i].series ? "bar2" : "bar", x0, y + 3, len);
		dt_svg_text(out, x0 + len + 5, y + 14, "start", NULL, "%s",
			    b[i].text ? b[i].text : "");
	}
	dt_svg_close(out);
}
