#!/usr/bin/env python3
"""`dnntrace diff --junit FILE`: the JUnit XML CI systems read, checked with
Python's xml.etree against the common schema (testsuites > testsuite >
testcase, each with at most one failure, error or skipped), its counts against
its test cases, its failures against the gate's verdict in the JSON
output, and the exit status (0 pass, 1 gate tripped, 2 incomplete input
with --incomplete error) against the failures.

usage: check-junit.py DNNTRACE SYNTH_TRACE API_LISTING
"""
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

from synth_jobs import synth_jobs

failures = []


def fail(msg):
    failures.append(msg)
    print("FAIL:", msg)


def trips(op, gate):
    """Whether the gate trips on this operation (analyzer/DIFF.md)."""
    v = op["verdict"]
    if gate == "regression":
        return v == "slower"
    if gate == "engine-change":
        return op["engine_changed"]
    if gate == "any":
        return (v in ("slower", "faster", "added", "removed")
                or op["engine_changed"] or op["workspace_changed"])
    return False


QUANTITIES = ("step", "gpu", "library", "family", "kernel")


def qty_trips(q, gate):
    """Whether the gate trips on a quantity per step (analyzer/DIFF.md)."""
    v = q["verdict"]
    if gate == "regression":
        return v == "slower"
    if gate == "any":
        return v in ("slower", "faster", "added", "removed")
    return False


def check(dnntrace, tmp, gate, base, new, extra=(), want_rc=None):
    xml = os.path.join(tmp, "junit.xml")
    args = ["--fail-on", gate] if gate != "none" else []
    name = f"--fail-on {gate} {' '.join(extra)} {os.path.basename(base)} " \
           f"{os.path.basename(new)}"
    res = subprocess.run([dnntrace, "diff", *args, *extra, "--force",
                          "--junit", xml, base, new], capture_output=True)
    js = json.loads(subprocess.run(
        [dnntrace, "diff", "--format", "json", *args, *extra, base, new],
        capture_output=True).stdout)
    if not res.stdout.startswith(b"base"):
        fail(f"{name}: the text report is not on standard output")
    root = ET.parse(xml).getroot()
    if root.tag != "testsuites" or [s.tag for s in root] != ["testsuite"]:
        fail(f"{name}: not testsuites > testsuite: {root.tag}")
        return
    suite = root[0]
    cases = list(suite)
    n_fail = n_skip = n_err = 0
    for c in cases:
        if c.tag != "testcase" or not c.get("name") or not c.get("classname"):
            fail(f"{name}: bad test case {c.tag} {c.attrib}")
        kids = [k.tag for k in c]
        if kids not in ([], ["failure"], ["error"], ["skipped"]):
            fail(f"{name}: {c.get('name')}: children {kids}")
        n_fail += kids == ["failure"]
        n_skip += kids == ["skipped"]
        n_err += kids == ["error"]
        for k in c:
            if k.tag in ("failure", "error") and not (k.get("message")
                                                      and k.text):
                fail(f"{name}: {c.get('name')}: failure without numbers")
            if k.tag == "failure" and c.get("classname").startswith(
                    "dnntrace.diff.op."):
                for word in ("base median", "new median", "change",
                             "threshold", "base range"):
                    if word not in k.text:
                        fail(f"{name}: failure lacks {word}: {k.text}")
    for el in (root, suite):
        got = (int(el.get("tests")), int(el.get("failures")),
               int(el.get("skipped")), int(el.get("errors")))
        if got != (len(cases), n_fail, n_skip, n_err):
            fail(f"{name}: {el.tag} says {got}, holds "
                 f"{(len(cases), n_fail, n_skip, n_err)}")
    ops = [c for c in cases
           if c.get("classname").startswith("dnntrace.diff.op.")]
    if len(ops) != len(js["ops"]):
        fail(f"{name}: {len(ops)} operation cases, {len(js['ops'])} compared")
    want_fail = sum(trips(o, gate) for o in js["ops"])
    got_fail = sum(1 for c in ops if c.find("failure") is not None)
    if got_fail != want_fail:
        fail(f"{name}: {got_fail} operations failed, the gate trips on "
             f"{want_fail}")
    qty = [c for c in cases
           if c.get("classname").split(".")[-1] in QUANTITIES]
    if len(qty) != len(js["quantities"]):
        fail(f"{name}: {len(qty)} cases per step, "
             f"{len(js['quantities'])} quantities compared")
    want_fail = sum(qty_trips(q, gate) for q in js["quantities"])
    got = [c.find("failure") for c in qty if c.find("failure") is not None]
    if len(got) != want_fail:
        fail(f"{name}: {len(got)} quantities failed, the gate trips on "
             f"{want_fail}")
    for k in got:
        for word in ("base", "new", "per step", "threshold", "noise"):
            if word not in k.text:
                fail(f"{name}: failure lacks {word}: {k.text}")
    complete = [c for c in cases
                if c.get("classname") == "dnntrace.diff.complete"]
    if len(complete) != 2:
        fail(f"{name}: {len(complete)} completeness cases")
    totals = [c for c in cases if c.get("classname") == "dnntrace.diff.total"]
    if not totals or any(c.find("skipped") is None for c in totals):
        fail(f"{name}: totals not there as skipped")
    if gate == "none" and n_skip != len(cases):
        fail(f"{name}: without a gate, {len(cases) - n_skip} not skipped")
    if want_rc is None:
        want_rc = 1 if n_fail else 0
    if (res.returncode != want_rc or (want_rc == 1) != bool(n_fail)
            or (want_rc == 2) != bool(n_err)):
        fail(f"{name}: exit {res.returncode} with {n_fail} failures and "
             f"{n_err} errors, want {want_rc}")
    print(f"{name}: {len(cases)} cases, {n_fail} failed, {n_err} errors, "
          f"{n_skip} skipped, exit {res.returncode}")


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    dnntrace, synth, api = sys.argv[1:4]
    with synth_jobs(synth, api) as (tmp, gen):
        base = gen("base", "--ranks", "2", "--steps", "12")
        changed = gen("changed", "--ranks", "2", "--steps", "12",
                      "--variant", "changed")
        noise = gen("noise", "--ranks", "2", "--steps", "12",
                    "--variant", "noise")
        lost = gen("lost", "--ranks", "2", "--steps", "12", "--lose", "5")
        for gate in ("none", "regression", "engine-change", "any"):
            check(dnntrace, tmp, gate, base, changed)
        check(dnntrace, tmp, "regression", base, noise)
        check(dnntrace, tmp, "any", base, base, want_rc=0)
        # an incomplete input: the gate trips on it, or exit 2
        check(dnntrace, tmp, "regression", base, lost, want_rc=1)
        check(dnntrace, tmp, "regression", base, lost,
              ("--incomplete", "error"), want_rc=2)
        check(dnntrace, tmp, "regression", base, lost,
              ("--incomplete", "allow"))
        print(f"{len(failures)} failures")
        return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
