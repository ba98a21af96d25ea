#!/usr/bin/env python3
"""Every Markdown output, rendered as GitHub renders it (cmark-gfm with its
table extension): each table has exactly the rows written as its rows (no
line after it taken for one more), each cell renders as the plain text it
holds (no emphasis, code, tag or link made of a trace's names), and no '|'
is left as text outside the tables.

usage: check-markdown.py DNNTRACE SYNTH_TRACE API_LISTING SOURCE_ROOT
Skips (77) without cmark-gfm (tools/setup-checkers.sh installs it).
"""
import html
import html.parser
import os
import re
import shutil
import subprocess
import sys

from synth_jobs import synth_jobs

SKIP = 77


class Tables(html.parser.HTMLParser):
    """The tables' rows and cells as text, the tags inside cells, and the
    text outside tables."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tables, self.outside, self.tags_in_cells = [], [], []
        self.cell = None
        self.depth = 0

    def handle_starttag(self, tag, attrs):
        if tag == "table":
            self.tables.append([])
            self.depth += 1
        elif tag == "tr" and self.depth:
            self.tables[-1].append([])
        elif tag in ("td", "th") and self.depth:
            self.cell = []
        elif self.cell is not None:
            self.tags_in_cells.append(tag)

    def handle_endtag(self, tag):
        if tag == "table":
            self.depth -= 1
        elif tag in ("td", "th") and self.cell is not None:
            self.tables[-1][-1].append("".join(self.cell))
            self.cell = None

    def handle_data(self, data):
        if self.cell is not None:
            self.cell.append(data)
        elif not self.depth:
            self.outside.append(data)


def unescape(s):
    """CommonMark's backslash escapes: before ASCII punctuation only."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", s)


def source_tables(md):
    """The tables as written: runs of lines starting with '|', each cell
    as it should render (backslash escapes and entities undone)."""
    tables, cur = [], None
    for line in md.split("\n"):
        if line.startswith("|"):
            if cur is None:
                cur = []
                tables.append(cur)
            if re.fullmatch(r"\|(-+:?\|)+", line):
                continue
            cells = re.split(r"(?<!\\)\|", line)[1:-1]
            cur.append([html.unescape(unescape(c.strip())) for c in cells])
        else:
            cur = None
    return tables


def check(name, md, failures):
    out = subprocess.run(["cmark-gfm", "-e", "table"], input=md.encode(),
                         capture_output=True, check=True).stdout.decode()
    p = Tables()
    p.feed(out)
    want = source_tables(md)
    if len(p.tables) != len(want):
        failures.append(f"{name}: {len(want)} tables written, "
                        f"{len(p.tables)} rendered")
        return
    for i, (got, exp) in enumerate(zip(p.tables, want)):
        if len(got) != len(exp):
            extra = [r[0] for r in got[len(exp):]]
            failures.append(f"{name}: table {i + 1} has {len(exp)} rows "
                            f"written, {len(got)} rendered; extra: {extra}")
            continue
        for r, (g, e) in enumerate(zip(got, exp)):
            if [c.strip(" \n") for c in g] != e:
                failures.append(f"{name}: table {i + 1} row {r}: rendered "
                                f"{g}, written {e}")
                break
    if p.tags_in_cells:
        failures.append(f"{name}: markup in cells: {sorted(set(p.tags_in_cells))}")
    # a table that did not render shows as lines of text starting with '|'
    stray = [line for t in p.outside for line in t.split("\n")
             if line.lstrip().startswith("|")]
    if stray:
        failures.append(f"{name}: '|' outside tables: {stray[:3]}")


def main():
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    dnntrace, synth, api, root = sys.argv[1:]
    if not shutil.which("cmark-gfm"):
        print("SKIP: no cmark-gfm (tools/setup-checkers.sh installs it)")
        return SKIP
    with synth_jobs(synth, api) as (tmp, gen):
        job = gen("job", "--ranks", "3", "--steps", "4")
        big = gen("big", "--ranks", "20", "--steps", "2")
        changed = gen("changed", "--ranks", "3", "--steps", "4",
                      "--variant", "changed")
        ranges = gen("ranges", "--scenario", "ranges", "--steps", "3")
        # names holding Markdown's markup, '|' and control characters
        hostile = gen("hostile", "--scenario", "hostile")
        data = os.path.join(root, "tests", "data")
        traces = sorted(os.path.join(data, f) for f in os.listdir(data)
                        if f.endswith(".dnnt"))
        runs = [["report", t] for t in traces + [job, big, ranges, hostile]]
        runs += [["diff", job, changed], ["diff", traces[0], traces[1]],
                 ["diff", "--fail-on", "any", job, ranges]]
        failures = []
        for r in runs:
            cmd = [dnntrace, r[0], "--format", "markdown", *r[1:]]
            res = subprocess.run(cmd, capture_output=True)
            if res.returncode not in (0, 1) or not res.stdout:
                failures.append(f"{' '.join(cmd)}: exit {res.returncode}")
                continue
            name = " ".join([r[0]] + [os.path.basename(a) for a in r[1:]])
            check(name, res.stdout.decode(), failures)
        for f in failures:
            print("FAIL:", f)
        print(f"{len(runs)} Markdown outputs, {len(failures)} failures")
        return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
