#!/usr/bin/env python3
"""Every reading command on damaged traces: bits flipped, files cut short,
bytes set to the ends of their range, in the file as it is or in the
records of a data frame (decompressed, damaged, compressed again with
zstd, so that its checksum holds and the reader decodes the records). Each must end with a
status of its own (0, 1 or 2), never a signal, and without a report from
AddressSanitizer or UndefinedBehaviorSanitizer when dnntrace is built with
them (meson -Db_sanitize=address,undefined).

usage: mutate-readers.py DNNTRACE SEED_TRACE... [--count N] [--seconds S]
                         [--seed N] [--keep DIR]
The traces made are the same for the same seed; --keep saves each one
that failed into DIR.
"""
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

COMMANDS = [
    ["info"], ["dump"], ["ops"], ["ops", "--format", "json"],
    ["report"], ["report", "--format", "markdown"],
    ["report", "--format", "json"], ["report", "--format", "html"],
    ["fusion"], ["fusion", "--format", "json"],
    ["diff", "{t}"], ["diff", "--format", "json", "{t}"],
    ["export", "--format", "chrome", "-o", "-"],
    ["export", "--format", "perfetto", "-o", "-"],
    ["export", "--format", "sqlite", "--force", "-o", "{out}.sqlite"],
    ["export", "--format", "csv", "--force", "-o", "{out}.csv"],
]

SANITIZER_EXIT = 99
ENV = dict(os.environ,
           ASAN_OPTIONS="detect_leaks=0:exitcode=%d" % SANITIZER_EXIT,
           UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:exitcode=%d"
           % SANITIZER_EXIT,
           NO_COLOR="1")


ZSTD_MAGIC = 0xFD2FB528


def zstd_frame_end(b, at):
    """Where the zstd frame at b[at:] ends, or None when it is none."""
    if int.from_bytes(b[at:at + 4], "little") != ZSTD_MAGIC or at + 5 > len(b):
        return None
    fhd = b[at + 4]
    did = [0, 1, 2, 4][fhd & 3]
    single = (fhd >> 5) & 1
    fcs = [1 if single else 0, 2, 4, 8][fhd >> 6]
    p = at + 5 + (0 if single else 1) + did + fcs
    while p + 3 <= len(b):
        h = int.from_bytes(b[p:p + 3], "little")
        last, kind, size = h & 1, (h >> 1) & 3, h >> 3
        p += 3 + (1 if kind == 1 else size)
        if last:
            return p + (4 if fhd & 4 else 0)
    return None


def data_frames(b):
    """(start, end) of each zstd data frame of a trace; skippable frames
    (the header, the end, the index) are stepped over."""
    frames, at = [], 0
    while at + 8 <= len(b):
        magic = int.from_bytes(b[at:at + 4], "little")
        if magic & 0xFFFFFFF0 == 0x184D2A50:
            at += 8 + int.from_bytes(b[at + 4:at + 8], "little")
            continue
        end = zstd_frame_end(b, at)
        if end is None:
            break
        frames.append((at, end))
        at = end
    return frames


def damage(rng, b):
    """Bits flipped in b, or a few bytes set to an end of their range."""
    if rng.randrange(2):
        for _ in range(rng.randint(1, 8)):
            i = rng.randrange(len(b))
            b[i] ^= 1 << rng.randrange(8)
    else:
        i = rng.randrange(len(b)) & ~7  # records are 8-byte aligned
        n = rng.choice([1, 2, 4, 8])
        b[i:i + n] = rng.choice([b"\xff", b"\x00", b"\x7f", b"\x80"]) * n


def mutate_records(rng, data):
    """A data frame's records damaged, the frame compressed again."""
    frames = data_frames(data)
    if not frames:
        return None
    start, end = rng.choice(frames)
    raw = subprocess.run(["zstd", "-d", "-q", "-c"], input=data[start:end],
                         stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL).stdout
    if not raw:
        return None
    raw = bytearray(raw)
    for _ in range(rng.randint(1, 3)):
        damage(rng, raw)
    frame = subprocess.run(["zstd", "-q", "-c", "-1", "--check",
                            "--stream-size=%d" % len(raw)],
                           input=bytes(raw), stdout=subprocess.PIPE).stdout
    return data[:start] + frame + data[end:]


def mutate(rng, data):
    """data, damaged one of several ways."""
    if rng.randrange(2) and shutil.which("zstd"):
        m = mutate_records(rng, data)
        if m:
            return m
    b = bytearray(data)
    how = rng.randrange(4)
    if how == 0 or len(b) < 64:  # bits flipped anywhere
        for _ in range(rng.randint(1, 8)):
            i = rng.randrange(len(b))
            b[i] ^= 1 << rng.randrange(8)
    elif how == 1:  # cut short
        del b[rng.randrange(len(b)):]
    elif how == 2:  # a run of bytes set to extremes: times, lengths, ids
        i = rng.randrange(len(b))
        fill = rng.choice([b"\xff", b"\x00", b"\x7f", b"\x80"])
        n = rng.choice([1, 2, 4, 8])
        b[i:i + n] = fill * n
    else:  # both: flipped, then cut
        i = rng.randrange(len(b))
        b[i] ^= 1 << rng.randrange(8)
        del b[rng.randrange(len(b)):]
    return bytes(b)


def run(dnntrace, cmd, path, out):
    args = [a.replace("{t}", path).replace("{out}", out) for a in cmd]
    try:
        p = subprocess.run([dnntrace] + args + [path], env=ENV,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           timeout=60)
    except subprocess.TimeoutExpired:
        return "did not end in 60 s"
    err = p.stderr.decode("utf-8", "replace")
    if p.returncode < 0:
        return "killed by signal %d" % -p.returncode
    if p.returncode == SANITIZER_EXIT or "runtime error:" in err or \
            "AddressSanitizer" in err:
        lines = [l for l in err.splitlines()
                 if "runtime error" in l or "ERROR:" in l or "#0 " in l or
                 "#1 " in l or "#2 " in l]
        return "sanitizer: " + " | ".join(lines[:4])
    if p.returncode not in (0, 1, 2):
        return "exit status %d" % p.returncode
    return None


def main():
    argv = sys.argv[1:]
    opts = {"--count": "40", "--seconds": "0", "--seed": "1", "--keep": ""}
    rest = []
    while argv:
        a = argv.pop(0)
        if a in opts:
            opts[a] = argv.pop(0)
        else:
            rest.append(a)
    dnntrace, seeds = rest[0], rest[1:]
    rng = random.Random(int(opts["--seed"]))
    count, seconds = int(opts["--count"]), float(opts["--seconds"])
    datas = [(s, open(s, "rb").read()) for s in seeds]
    tmp = tempfile.mkdtemp()
    failures = 0
    start = time.time()
    n = 0
    try:
        while n < count or (seconds and time.time() - start < seconds):
            if seconds and time.time() - start >= seconds:
                break
            name, data = rng.choice(datas)
            path = os.path.join(tmp, "m%d.dnnt" % n)
            with open(path, "wb") as f:
                f.write(mutate(rng, data))
            for cmd in COMMANDS:
                why = run(dnntrace, cmd, path, os.path.join(tmp, "out"))
                if why:
                    failures += 1
                    print("FAIL: dnntrace %s on %s (from %s): %s" %
                          (" ".join(cmd), path, os.path.basename(name), why))
                    if opts["--keep"]:
                        os.makedirs(opts["--keep"], exist_ok=True)
                        shutil.copy(path, os.path.join(
                            opts["--keep"], "fail-%d-%d.dnnt" % (n,
                                                                  failures)))
            os.remove(path)
            n += 1
    finally:
        shutil.rmtree(tmp)
    print("%d damaged traces, %d commands each, %d failures" %
          (n, len(COMMANDS), failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
