#!/usr/bin/env python3
"""`dnntrace export` against `dnntrace report`: the totals queried from the
exported tables must be the numbers `report --format json` prints.

usage: check-export.py sqlite|duckdb DNNTRACE SYNTH_TRACE SOURCE_ROOT BUILD_ROOT

The traces: the two committed ones (tests/data: legacy and backend calls on
an H200; a PyTorch CUDA graph replayed on an H100), a synthetic job of two
ranks with a third rank whose recorder lost records, and all of them in one
export. For each, the same queries (GPU time, cuDNN's by kind of op and
other libraries' by family, copies, calls and host time per function, op
executions and their problems, each trace's counts and how it ended, CUDA
graphs, GPUs) run

  sqlite: on the SQLite export, with the sqlite3 client; and the CSV export
          of the same traces must hold the same rows as the database;
  duckdb: on the CSV export, with DuckDB: @duckdb/node-api from npm, in
          $DNNTRACE_NODE_MODULES, by default BUILD_ROOT/checkers/node_modules
          (mkdir -p build/checkers; cp tests/checkers/package.json
          build/checkers; npm install --prefix build/checkers). DuckDB reads
          SQLite only through an extension it downloads, so it is given the
          CSV files.

Exits 77 (skipped) when the sqlite3 client, or node with DuckDB, is missing.
"""
import csv
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77

# Kernels, copies and sets in one relation (the report's "GPU work").
ACTIVITY = """(
  SELECT globalPid, 1 AS kernel, start, "end", callSeq, library, 0 AS bytes
    FROM {CUPTI_ACTIVITY_KIND_KERNEL}
  UNION ALL
  SELECT globalPid, 0, start, "end", callSeq, NULL, bytes
    FROM {CUPTI_ACTIVITY_KIND_MEMCPY}
  UNION ALL
  SELECT globalPid, 0, start, "end", callSeq, NULL, bytes
    FROM {CUPTI_ACTIVITY_KIND_MEMSET})"""
DURATION = 'CASE WHEN "end" > start THEN "end" - start ELSE 0 END'
NOT_CAPTURED = "origin <> 'captured'"

QUERIES = {
    "processes": "SELECT * FROM {PROCESSES}",
    # the program's calls, and dnntrace's own (its plan queries) apart
    "calls": """SELECT globalPid, SUM(1 - byDnntrace) AS n,
                       SUM(byDnntrace) AS own, MIN(start) AS first,
                       MAX("end") AS last
                  FROM {CUDNN_EVENTS} GROUP BY globalPid""",
    "gpu": f"""SELECT globalPid, SUM(kernel) AS kernels,
                      SUM(1 - kernel) AS copies, SUM({DURATION}) AS ns,
                      SUM(CASE WHEN callSeq IS NOT NULL THEN {DURATION}
                               ELSE 0 END) AS cudnn_ns
                 FROM {ACTIVITY} AS a WHERE start IS NOT NULL
                GROUP BY globalPid""",
    "copies": f"""SELECT COUNT(*) AS n, SUM({DURATION}) AS ns,
                         SUM(bytes) AS bytes
                    FROM {ACTIVITY} AS a
                   WHERE kernel = 0 AND callSeq IS NULL
                     AND start IS NOT NULL""",
    # facts first, as the report: what a cuDNN call launched is cuDNN's,
    # copies and sets outside them the runtime's, kernels by their name
    "libraries": f"""SELECT CASE WHEN callSeq IS NOT NULL THEN 'cudnn'
                               WHEN kernel = 0 THEN 'runtime'
                               ELSE library END AS lib,
                          COUNT(*) AS n, SUM({DURATION}) AS ns
                     FROM {ACTIVITY} AS a WHERE start IS NOT NULL
                    GROUP BY lib""",
    "kinds": f"""SELECT kind, COUNT(*) AS n, SUM(gpuNs) AS ns
                   FROM {{CUDNN_OPS}} WHERE {NOT_CAPTURED} GROUP BY kind""",
    "ops": f"""SELECT globalPid, COUNT(*) AS n FROM {{CUDNN_OPS}}
                WHERE {NOT_CAPTURED} GROUP BY globalPid""",
    "apis": """SELECT s.value AS name, COUNT(*) AS calls,
                      SUM(CASE WHEN status <> 0 THEN 1 ELSE 0 END) AS failed,
                      SUM(e."end" - e.start) AS ns,
                      MIN(e."end" - e.start) AS min_ns,
                      MAX(e."end" - e.start) AS max_ns
                 FROM {CUDNN_EVENTS} AS e
                 JOIN {StringIds} AS s ON s.id = e.nameId
                WHERE e.byDnntrace = 0 GROUP BY s.value""",
    "problems": f"""SELECT a.value AS api, p.value AS problem,
          SUM(CASE WHEN {NOT_CAPTURED} THEN 1 ELSE 0 END) AS count,
          SUM(CASE WHEN origin = 'replay' THEN 1 ELSE 0 END) AS replays,
          SUM(CASE WHEN origin = 'captured' THEN 1 ELSE 0 END) AS captured,
          SUM(CASE WHEN {NOT_CAPTURED} AND status <> 0 THEN 1 ELSE 0 END)
            AS failed,
          SUM(CASE WHEN {NOT_CAPTURED} THEN gpuNs ELSE 0 END) AS gpu_ns,
          SUM(CASE WHEN origin = 'call' THEN o."end" - o.start ELSE 0 END)
            AS host_ns,
          SUM(CASE WHEN {NOT_CAPTURED} THEN kernels ELSE 0 END) AS kernels,
          MAX(CASE WHEN {NOT_CAPTURED} THEN workspace ELSE -1 END)
            AS workspace,
          MAX(flops) AS flops, MAX(bytes) AS bytes
     FROM {{CUDNN_OPS}} AS o
     JOIN {{StringIds}} AS a ON a.id = o.nameId
     JOIN {{StringIds}} AS p ON p.id = o.problemId
    GROUP BY a.value, p.value""",
    "devices": "SELECT DISTINCT name FROM {TARGET_INFO_GPU}",
    # every op's tensors are there (but a setup's, which has none), once
    # per problem
    "tensorless": """SELECT COUNT(*) AS n FROM (
          SELECT DISTINCT problemId FROM {CUDNN_OPS}
           WHERE kind <> 'setup') AS o
          WHERE NOT EXISTS (SELECT 1 FROM {CUDNN_OP_TENSORS} AS t
                             WHERE t.problemId = o.problemId)""",
    "tensor_repeats": """SELECT COUNT(*) AS n FROM (
          SELECT problemId, ord FROM {CUDNN_OP_TENSORS}
           GROUP BY problemId, ord HAVING COUNT(*) > 1) AS t""",
    # every call an op or GPU work names is in CUDNN_EVENTS
    "orphans": f"""SELECT COUNT(*) AS n FROM {ACTIVITY} AS a
          WHERE callSeq IS NOT NULL AND NOT EXISTS (
            SELECT 1 FROM {{CUDNN_EVENTS}} AS e
             WHERE e.globalPid = a.globalPid AND e.seq = a.callSeq)""",
}

# report's graphs -> PROCESSES' columns
GRAPHS = {
    "launches": "graphLaunches", "launch_ns": "graphLaunchNs",
    "launched": "graphLaunched", "captured": "graphCaptured",
    "replays": "graphReplays", "partial": "graphPartial",
    "kernels": "graphKernels", "attributed": "graphAttributed",
    "unknown": "graphUnknown", "mismatch": "graphMismatch",
    "unresolved": "graphUnresolved",
}

failures = checks = 0


def check(what, got, want):
    global failures, checks
    checks += 1
    if got != want:
        print(f"FAIL: {what}: export says {got!r}, report {want!r}")
        failures += 1


def number(v):
    """A value as the back ends print it, as a number where it is one."""
    if isinstance(v, str) and re.fullmatch(r"-?\d+", v):
        return int(v)
    if isinstance(v, float) and v.is_integer():
        return int(v)
    return v


def schema(root):
    """{table: [(column, type)]} from analyzer/EXPORT.md, which a test keeps
    equal to the code."""
    tables, table = {}, None
    with open(os.path.join(root, "analyzer", "EXPORT.md")) as f:
        for line in f:
            if line.startswith("#### "):
                table = line[5:].strip()
                tables[table] = []
            elif table and (m := re.match(r"\| `(\w+)` \| (\w+) \|", line)):
                tables[table].append((m[1], m[2]))
    return tables


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode:
        sys.exit(f"{' '.join(cmd)} exited {r.returncode}: {r.stderr}")
    return r.stdout


class SQLite:
    def __init__(self, path, tables):
        self.path = path
        self.names = {t: t for t in tables}

    def query(self, queries):
        out = {}
        for name, sql in queries.items():
            text = run(["sqlite3", "-json", self.path,
                        sql.format(**self.names)])
            out[name] = json.loads(text) if text.strip() else []
        return out


class DuckDB:
    """The CSV export, each file read with the column types the tables
    declare (a file of no rows would otherwise read as text)."""
    TYPES = {"INTEGER": "BIGINT", "REAL": "DOUBLE", "TEXT": "VARCHAR"}

    def __init__(self, folder, tables, node_modules):
        self.node_modules = node_modules
        self.names = {}
        for t, cols in tables.items():
            columns = ", ".join(f"'{c}': '{self.TYPES[ty]}'"
                                for c, ty in cols)
            path = os.path.join(folder, t + ".csv")
            self.names[t] = (
                f"read_csv('{path}', header = true, auto_detect = false, "
                f"delim = ',', quote = '\"', escape = '\"', "
                f"allow_quoted_nulls = false, columns = {{{columns}}})")

    def query(self, queries):
        sql = {n: q.format(**self.names) for n, q in queries.items()}
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                              "..", "checkers", "duckdb-query.js")
        return json.loads(run(["node", script, self.node_modules],
                              input=json.dumps(sql)))


def by(rows, *keys):
    return {tuple(r[k] for k in keys) if len(keys) > 1 else r[keys[0]]: r
            for r in rows}


def compare(name, report, res):
    """Every number of report that the tables hold, checked."""
    procs = by(res["processes"], "path")
    calls, gpu, ops = (by(res[q], "globalPid") for q in ("calls", "gpu",
                                                         "ops"))
    check(f"{name}: traces", sorted(procs), sorted(f["path"]
                                                   for f in report["files"]))
    for f in report["files"]:
        p = procs.get(f["path"])
        if not p:
            continue
        g, w = p["globalPid"], f"{name}: {f['path']}"
        c = calls.get(g, {"n": 0, "own": 0, "first": 0, "last": 0})
        check(f"{w}: pid", p["pid"], f["pid"])
        check(f"{w}: rank", p["rank"],
              int(f["rank"].split("=")[1]) if f["rank"] else None)
        check(f"{w}: host", p["host"], f["host"])
        check(f"{w}: program", p["name"], f["program"])
        check(f"{w}: complete", p["complete"], int(f["complete"]))
        check(f"{w}: ended", p["ended"], f["ended"])
        check(f"{w}: lost", p["lost"], f["lost"])
        check(f"{w}: lost exactly", p["lostExact"], int(f["lost_exact"]))
        check(f"{w}: GPU records dropped", p["gpuDropped"], f["gpu_dropped"])
        check(f"{w}: records", p["records"], f["records"])
        check(f"{w}: calls", c["n"], f["calls"])
        check(f"{w}: dnntrace's own calls", c["own"], f["own_calls"])
        check(f"{w}: duration", c["last"] - c["first"], f["duration_ns"])
        check(f"{w}: ops", ops.get(g, {"n": 0})["n"], f["ops"])
        gw = gpu.get(g, {"kernels": 0, "copies": 0, "ns": 0,
                         "cudnn_ns": 0})
        check(f"{w}: kernels", gw["kernels"], f["kernels"])
        check(f"{w}: copies and sets", gw["copies"], f["copies"])
        check(f"{w}: GPU time", gw["ns"], f["gpu_ns"])
        check(f"{w}: cuDNN's GPU time", gw["cudnn_ns"], f["cudnn_gpu_ns"])
    check(f"{name}: complete", all(p["complete"] for p in procs.values()),
          report["complete"])

    rg = report["gpu"]
    check(f"{name}: GPU time", sum(r["ns"] for r in res["gpu"]),
          rg["total_ns"])
    check(f"{name}: cuDNN's GPU time", sum(r["cudnn_ns"] for r in res["gpu"]),
          rg["cudnn_ns"])
    cp = res["copies"][0]
    check(f"{name}: copies and sets outside cuDNN",
          (cp["n"], cp["ns"] or 0, cp["bytes"] or 0),
          (rg["copies"], rg["copies_ns"], rg["copy_bytes"]))
    check(f"{name}: GPU time by kind of op",
          {r["kind"]: (r["ns"], r["n"]) for r in res["kinds"]},
          {k["kind"]: (k["ns"], k["count"]) for k in rg["cudnn_by_kind"]})
    # (cuDNN's count is of its ops' kernel groups, the rest of kernels)
    check(f"{name}: GPU work by library",
          {r["lib"]: (r["ns"], r["n"] if r["lib"] != "cudnn" else None)
           for r in res["libraries"]},
          {k["library"]: (k["ns"], k["count"] if k["library"] != "cudnn"
                          else None)
           for k in rg["libraries"]})

    apis = by(res["apis"], "name")
    check(f"{name}: functions", sorted(apis),
          sorted(a["name"] for a in report["apis"]))
    for a in report["apis"]:
        r = apis.get(a["name"])
        if r:
            check(f"{name}: {a['name']}",
                  (r["calls"], r["failed"], r["ns"], r["min_ns"],
                   r["max_ns"]),
                  (a["calls"], a["failed"], a["total_ns"], a["min_ns"],
                   a["max_ns"]))
    check(f"{name}: host time in cuDNN", sum(r["ns"] for r in res["apis"]),
          report["host_cudnn_ns"])

    problems = by(res["problems"], "api", "problem")
    check(f"{name}: problems", len(problems), len(report["ops"]))
    fields = ("count", "replays", "captured", "failed", "gpu_ns", "host_ns",
              "kernels", "flops", "bytes")
    for o in report["ops"]:
        r = problems.get((o["api"], o["problem"]))
        what = f"{name}: {o['api']} {o['problem'][:60]}"
        if not r:
            check(what, None, "a problem")
            continue
        check(what, tuple(r[k] for k in fields), tuple(o[k] for k in fields))
        if o["count"]:
            check(f"{what}: workspace", r["workspace"], o["workspace"])

    graphs = {k: sum(p[c] for p in procs.values())
              for k, c in GRAPHS.items()}
    check(f"{name}: CUDA graphs", graphs,
          {k: report["graphs"][k] for k in GRAPHS})
    check(f"{name}: GPUs", sorted(r["name"] for r in res["devices"]),
          sorted({d["name"] for d in report["devices"]}))
    for q in ("tensorless", "tensor_repeats", "orphans"):
        check(f"{name}: {q}", res[q][0]["n"], 0)


def same_rows(name, db, folder, tables):
    """The CSV export holds the rows of the database, in its order."""
    for t, cols in tables.items():
        text = run(["sqlite3", "-csv", "-header", db,
                    f"SELECT * FROM {t} ORDER BY rowid"])
        want = list(csv.reader(text.splitlines(keepends=True)))
        with open(os.path.join(folder, t + ".csv"), newline="") as f:
            got = list(csv.reader(f))
        names = run(["sqlite3", db,
                     f"SELECT name FROM pragma_table_info('{t}')"])
        check(f"{name}: {t} columns", names.split(), [c for c, _ in cols])
        check(f"{name}: {t}.csv header", got[:1], [[c for c, _ in cols]])
        check(f"{name}: {t}.csv rows", len(got), max(len(want), 1))
        real = [i for i, (_, ty) in enumerate(cols) if ty == "REAL"]
        for n, (a, b) in enumerate(zip(got[1:], want[1:])):
            for i in real:  # sqlite3 prints 1e15 and 0.0, the export 0
                if a[i] and b[i] and float(a[i]) == float(b[i]):
                    a[i] = b[i]
            if a != b:
                check(f"{name}: {t}.csv row {n + 1}", a, b)
                break


def main():
    if len(sys.argv) != 6 or sys.argv[1] not in ("sqlite", "duckdb"):
        sys.exit(__doc__)
    mode, dnntrace, synth, root, build = sys.argv[1:]
    if not shutil.which("sqlite3") and mode == "sqlite":
        print("the sqlite3 client is not installed")
        return SKIP
    node_modules = os.environ.get("DNNTRACE_NODE_MODULES",
                                  os.path.join(build, "checkers",
                                               "node_modules"))
    if mode == "duckdb" and (not shutil.which("node") or not os.path.isdir(
            os.path.join(node_modules, "@duckdb", "node-api"))):
        print(f"node or @duckdb/node-api in {node_modules} is missing "
              "(see tests/tools/check-export.py)")
        return SKIP
    tables = schema(root)
    tmp = tempfile.mkdtemp()
    try:
        jobs = os.path.join(tmp, "job")
        os.mkdir(jobs)
        listing = os.path.join(root, "shim", "libs", "cudnn-api.txt")
        run([synth, listing, jobs, "--ranks", "2", "--steps", "4"])
        lossy = os.path.join(tmp, "lossy")
        os.mkdir(lossy)
        run([synth, listing, lossy, "--ranks", "1", "--steps", "600",
             "--lose", "5"])
        lossy = os.path.join(tmp, "lossy.dnnt")
        os.rename(os.path.join(tmp, "lossy", "rank0.dnnt"), lossy)
        sample = os.path.join(root, "tests", "data", "h200-sample.dnnt")
        graph = os.path.join(root, "tests", "data", "cuda-graph.dnnt")
        sets = {"sample": [sample], "graph": [graph],
                "job": [jobs, lossy], "all": [sample, graph, jobs, lossy]}
        for name, paths in sets.items():
            report = json.loads(run([dnntrace, "report", "--format", "json",
                                     "--with-warmup", *paths]))
            out = os.path.join(tmp, name)
            run([dnntrace, "export", "--format", "csv", "-o", out, *paths])
            if mode == "sqlite":
                db = out + ".sqlite"
                run([dnntrace, "export", "--format", "sqlite", "-o", db,
                     *paths])
                res = SQLite(db, tables).query(QUERIES)
                same_rows(name, db, out, tables)
            else:
                res = DuckDB(out, tables, node_modules).query(QUERIES)
            res = {q: [{k: number(v) for k, v in r.items()} for r in rows]
                   for q, rows in res.items()}
            compare(name, report, res)
            if name == "job":
                check("job: a trace that lost records",
                      [p["lost"] > 0 and not p["complete"]
                       for p in res["processes"]], [False, False, True])
    finally:
        shutil.rmtree(tmp)
    print(f"{mode}: {checks - failures} of {checks} checks agree with the "
          "report")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
