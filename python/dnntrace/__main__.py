"""python -m dnntrace ARGS: the dnntrace command installed with this
package, run with ARGS; it replaces this process, so its exit status is
the command's. The `dnntrace` script pip puts on PATH is this too.

The command lies in prefix/, as meson installs it: it finds its shim and
sample program relative to itself, as an installed tree does."""
import errno
import os
import sys


def executable():
    """The path of the dnntrace command installed with this package."""
    return os.path.join(os.path.dirname(__file__), "prefix", "bin", "dnntrace")


def main():
    exe = executable()
    try:
        os.execv(exe, ["dnntrace"] + sys.argv[1:])
    except OSError as e:
        print(f"dnntrace: cannot run {exe}: {e.strerror}", file=sys.stderr)
        # as shells do: 127 not found, 126 found but not runnable
        sys.exit(127 if e.errno == errno.ENOENT else 126)


if __name__ == "__main__":
    main()
