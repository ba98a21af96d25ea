#!/usr/bin/env python3
"""Read a `dnntrace export --format perfetto` file back as Perfetto's trace
processor would, and check it: the protobuf wire format (field numbers from
Perfetto's protos/perfetto/trace/), interned data resolved per sequence and
cleared where the writer says, slices built from their begin and end events
in time order (an end with no slice open, or a slice left open, is an
error), flows from the event that starts them to the one that ends them.
Then compares with `dnntrace report --format json` of the same traces:
calls per function, GPU time, cuDNN's share, copies, op GPU time by kind,
graph launches, and that every arrow goes from a call (or a graph launch)
to GPU work that call launched.

usage: check-perfetto.py EXPORT REPORT_JSON [FROM_NS TO_NS]
Prints one line per check; exits 1 on a difference.
       check-perfetto.py --text EXPORT
Prints the tracks and the events in time order, names and arguments
resolved, one per line (for goldens); exits 1 on a format error.
"""

import json
import struct
import sys


def varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        if c < 0x80:
            return v, i
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def fields(b):
    """(field, wire type, value) of a message; value is an int or bytes."""
    i, n = 0, len(b)
    while i < n:
        key, i = varint(b, i)
        f, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 1:
            v = struct.unpack_from("<Q", b, i)[0]
            i += 8
        elif wt == 2:
            ln, i = varint(b, i)
            v = bytes(b[i:i + ln])
            if len(v) != ln:
                raise ValueError("length past the end")
            i += ln
        elif wt == 5:
            v = struct.unpack_from("<I", b, i)[0]
            i += 4
        else:
            raise ValueError(f"wire type {wt}")
        yield f, wt, v


def first(b, field, default=None):
    for f, _, v in fields(b):
        if f == field:
            return v
    return default


def text(tracks, events, errors):
    for uuid in sorted(tracks):
        t = tracks[uuid]
        print(f"track {uuid}: {t.get('name', '')!r} parent {t.get('parent')}"
              f"{' thread %s/%s' % (t['pid'], t['tid']) if 'tid' in t else ''}"
              f"{' counter' if t.get('counter') else ''}")
    types = {1: "B", 2: "E", 3: "I", 4: "C"}
    for ts, _, ev in events:
        args = " ".join(f"{k}={v!r}" for k, v in ev["args"].items())
        flows = "".join(f" flow>{f}" for f in ev["flows"]) + \
            "".join(f" >flow{f}" for f in ev["ends"])
        value = f" {ev['value']:.6g}" if "value" in ev else ""
        print(f"{ts} {types.get(ev['type'], '?')} {ev.get('track')} "
              f"{ev.get('name', '')!r}{value}{flows} {args}".rstrip())
    for e in errors:
        print(f"error: {e}")
    sys.exit(1 if errors else 0)


def main():
    as_text = sys.argv[1] == "--text"
    if as_text:
        path, report_path = sys.argv[2], None
    else:
        path, report_path = sys.argv[1], sys.argv[2]
    lo, hi = (int(sys.argv[3]), int(sys.argv[4])) if len(sys.argv) > 4 else (0, 2**64)
    data = open(path, "rb").read()
    report = json.load(open(report_path)) if report_path else None
    errors = []

    # sequence id -> {kind: {iid: str}}; kinds 2 event names, 3 annotation
    # names, 29 string values
    state, valid = {}, set()
    tracks = {}  # uuid -> {"name", "pid", "tid", "parent", "counter"}
    processes = {}  # uuid -> pid
    events = []  # (ts, order, event dict)
    order = 0
    for f, wt, pkt in fields(data):
        if f != 1 or wt != 2:
            errors.append(f"a field {f} at the top level")
            continue
        seq = first(pkt, 10, 0)
        flags = first(pkt, 13, 0)
        if flags & 1:
            state[seq] = {2: {}, 3: {}, 29: {}}
            valid.add(seq)
        if flags & 2 and seq not in valid:
            errors.append("a packet needing state on a sequence never cleared")
            continue
        ts = first(pkt, 8)
        for pf, _, v in fields(pkt):
            if pf == 12:  # InternedData
                for kind, _, entry in fields(v):
                    iid, name = first(entry, 1), first(entry, 2, b"")
                    state.setdefault(seq, {2: {}, 3: {}, 29: {}}).setdefault(kind, {})[iid] = name.decode()
            elif pf == 60:  # TrackDescriptor
                uuid = first(v, 1)
                t = tracks.setdefault(uuid, {})
                t["parent"] = first(v, 5)
                if first(v, 2) is not None:
                    t["name"] = first(v, 2).decode()
                proc = first(v, 3)
                if proc is not None:
                    processes[uuid] = first(proc, 1)
                    t["name"] = first(proc, 6, b"").decode()
                th = first(v, 4)
                if th is not None:
                    t["pid"], t["tid"] = first(th, 1), first(th, 2)
                    t["name"] = first(th, 5, b"").decode()
                t["counter"] = first(v, 8) is not None
        te = first(pkt, 11)
        if te is None:
            continue
        if ts is None:
            errors.append("a track event without a time")
            continue
        st = state.get(seq, {2: {}, 3: {}, 29: {}})
        ev = {"type": 0, "args": {}, "flows": [], "ends": []}
        for ef, _, v in fields(te):
            if ef == 9:
                ev["type"] = v
            elif ef == 11:
                ev["track"] = v
            elif ef == 10:
                if v not in st[2]:
                    errors.append(f"event name iid {v} not interned")
                ev["name"] = st[2].get(v, "?")
            elif ef == 23:
                ev["name"] = v.decode()
            elif ef == 44:
                ev["value"] = struct.unpack("<d", struct.pack("<Q", v))[0]
            elif ef == 47:
                ev["flows"].append(v)
            elif ef == 48:
                ev["ends"].append(v)
            elif ef == 4:
                name = value = None
                for af, awt, av in fields(v):
                    if af == 1:
                        if av not in st[3]:
                            errors.append(f"annotation name iid {av} not interned")
                        name = st[3].get(av)
                    elif af == 17:
                        if av not in st[29]:
                            errors.append(f"string iid {av} not interned")
                        value = st[29].get(av)
                    elif af == 6:
                        value = av.decode()
                    elif af in (3, 7):
                        value = av
                    elif af == 4:
                        value = av - (1 << 64) if av >> 63 else av
                    elif af == 2:
                        value = bool(av)
                    elif af == 5:
                        value = struct.unpack("<d", struct.pack("<Q", av))[0]
                ev["args"][name] = value
        if ev.get("track") not in tracks:
            errors.append(f"an event on undescribed track {ev.get('track')}")
        events.append((ts, order, ev))
        order += 1

    # slices, in time order (ties: file order), as the trace processor
    # sorts them
    events.sort(key=lambda e: (e[0], e[1]))
    if as_text:
        text(tracks, events, errors)
    open_slices = {}
    slices, instants, counters = [], [], 0
    active, arrows = {}, []
    dangling_ends = 0
    for ts, _, ev in events:
        tr = ev["track"]
        if ev["type"] == 1:
            s = {"ts": ts, "name": ev.get("name"), "args": ev["args"], "track": tr}
            open_slices.setdefault(tr, []).append(s)
            slices.append(s)
            for fid in ev["flows"]:
                if fid in active:
                    errors.append(f"flow {fid} started twice")
                active[fid] = s
            for fid in ev["ends"]:
                if fid in active:
                    arrows.append((active.pop(fid), s))
                else:
                    dangling_ends += 1
        elif ev["type"] == 2:
            stack = open_slices.get(tr)
            if not stack:
                errors.append(f"an end with no slice open on track {tr}")
                continue
            s = stack.pop()
            s["dur"] = ts - s["ts"]
        elif ev["type"] == 3:
            instants.append(ev)
        elif ev["type"] == 4:
            counters += 1
    left = sum(len(v) for v in open_slices.values())
    if left:
        errors.append(f"{left} slices never ended")
    if active:
        errors.append(f"{len(active)} flows started and never ended")

    for s in slices:
        if s["ts"] + s.get("dur", 0) < lo or s["ts"] > hi:
            errors.append("a slice outside the window")
            break

    failures = []

    def expect(what, got, want):
        ok = got == want
        print(f"{'ok  ' if ok else 'FAIL'} {what}: {got}{'' if ok else f' (report: {want})'}")
        if not ok:
            failures.append(what)

    for e in errors[:10]:
        print(f"FAIL {e}")
    expect("format errors", len(errors), 0)

    def kind(s):
        t = tracks.get(s["track"], {})
        name = t.get("name", "")
        if "tid" in t:
            return "call"
        if ": cuDNN ops" in name:
            return "op"
        if name.startswith("GPU ") and " stream " in name:
            return "gpu"
        if name.startswith("CUDA graph launches"):
            return "launch"
        return "other"

    calls, gpu, ops, launches = {}, [], [], []
    for s in slices:
        k = kind(s)
        if k == "call" and not s["args"].get("by dnntrace"):
            calls[s["name"]] = calls.get(s["name"], 0) + 1
        elif k == "gpu":
            gpu.append(s)
        elif k == "op":
            ops.append(s)
        elif k == "launch":
            launches.append(s)
    pids = [p for p in processes.values()]
    expect("processes", len(pids), len(report["files"]))
    expect("distinct pids", len(set(pids)), len(pids))
    for api in report["apis"]:
        expect(f"calls to {api['name']}", calls.get(api["name"], 0), api["calls"])
    expect("functions called", len(calls), len(report["apis"]))
    by_cudnn = [s for s in gpu if "cuDNN call" in s["args"]]
    copies = [s for s in gpu if "cuDNN call" not in s["args"] and
              (s["name"].startswith("Memcpy") or s["name"] == "Memset")]
    expect("GPU work (kernels, copies, sets), ns", sum(s["dur"] for s in gpu), report["gpu"]["total_ns"])
    expect("GPU work launched by cuDNN, ns", sum(s["dur"] for s in by_cudnn), report["gpu"]["cudnn_ns"])
    expect("copies and sets outside cuDNN", len(copies), report["gpu"]["copies"])
    expect("copies and sets outside cuDNN, ns", sum(s["dur"] for s in copies), report["gpu"]["copies_ns"])
    for k in report["gpu"]["cudnn_by_kind"]:
        of = [s for s in ops if s["args"].get("kind") == k["kind"]]
        expect(f"{k['kind']} GPU ns", sum(s["args"]["GPU ns"] for s in of), k["ns"])
    expect("graph launches", len(launches), report["graphs"]["launches"])
    bad = 0
    for a, b in arrows:
        from_call = kind(a) == "call"
        ok = (from_call or a["name"] == "graph launch") and kind(b) == "gpu" and \
            b["ts"] >= a["ts"] and (not from_call or b["args"].get("cuDNN call") == a["args"].get("seq"))
        if not ok:
            bad += 1
    expect("arrows from a launch to what it launched", bad, 0)
    launched = sum(1 for s in gpu if "cuDNN call" in s["args"] or "graph" in s["args"])
    print(f"     {len(slices)} slices, {len(arrows)} arrows ({launched} GPU slices "
          f"launched by a call or graph, {dangling_ends} arrows without a start), "
          f"{len(instants)} marks, {counters} counter values")
    print(f"summary {len(pids)} {len(slices)} {len(arrows)} "
          f"{sum(1 for i in instants if i.get('name') == 'trace incomplete')} {launched}")
    if failures:
        print(f"{len(failures)} differences")
        sys.exit(1)


main()
