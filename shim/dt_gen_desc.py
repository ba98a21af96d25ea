"""The descriptions of the libraries dt-gen-wrappers.py wraps (shim/libs/README.md says what
one holds): read from TOML, checked, and handed to the generator as Library objects. Nothing
here reads a header or writes code."""

from __future__ import annotations

import dataclasses
import fnmatch
import os
import re
import tomllib
from typing import Dict, List, Optional


class GenError(Exception):
    """A fact about the headers or the annotations that the generator cannot turn into code."""


@dataclasses.dataclass
class PointerMode:
    """How to ask where a call's scalars lie: of the call's argument of type `of`, by `getter`
    (`status getter(of, mode *)`, or with `attribute`, `status getter(of, attribute, buf, size,
    size *written)`); the scalars are in host memory under the modes of `host` ("MODE", or
    "param-glob:MODE" for some parameters only)."""

    of: str
    getter: str
    attribute: str
    host: List[str]
    # How the mode is followed without asking (shim/shim-modes.c): the calls that create an
    # object (the first parameter of type `of *` receives it), or initialize one in place (the
    # parameter of type `of` points to it), in mode `default`; the setter
    # (`status setter(of, mode)`, or with `attribute`, `status setter(of, attribute, buf,
    # size)`); the calls after which the object is no longer the one created (destroyed,
    # initialized again). All empty: the mode is asked on every call.
    created_by: List[str]
    default: str
    setter: str
    forgotten_by: List[str]

    @property
    def followed(self) -> bool:
        return bool(self.setter)

    def host_modes(self, param: str) -> List[str]:
        """The modes under which the scalar `param` is in host memory."""
        modes = []
        for h in self.host:
            glob, _, mode = h.rpartition(":")
            if not glob or fnmatch.fnmatchcase(param, glob):
                modes.append(mode)
        return modes


@dataclasses.dataclass
class ScaleType:
    """The type of a call's `const void *` scalars, where an object the call is given holds it
    (cuBLASLt's matmul descriptor): a value of type `type` (a [scalar_sizes] table says its
    bytes), followed as a pointer mode is (shim/shim-modes.c): from the calls that create the
    object (their parameter `created_from` gives it) and its setter (`status setter(of,
    attribute, buf, size)`) until a call of `forgotten_by`; of an object not seen created, asked
    by `getter` (`status getter(of, attribute, buf, size, size *written)`). It is recorded after
    the call's arguments, as the pseudo-parameter `record_as`."""

    of: str
    getter: str
    attribute: str
    type: str
    record_as: str
    created_by: List[str]
    created_from: str
    setter: str
    forgotten_by: List[str]


@dataclasses.dataclass
class HandleStream:
    """How the shim follows a handle's stream instead of asking it (`[handle]` `stream_getter`)
    on every call that launches work (shim/shim-streams.c): the calls that create a handle of
    type `of` (their parameter of type `of *` receives it) on the default stream; the setter,
    whose parameter `setter_arg` is the stream; the calls after which the handle is no longer
    the one created (destroyed)."""

    of: str
    created_by: List[str]
    setter: str
    setter_arg: str
    forgotten_by: List[str]


@dataclasses.dataclass
class Library:
    """One wrapped library, as its description (shim/libs/README.md) gives it."""

    path: str  # of the description; its relative paths are relative to its folder
    name: str
    display: str
    prefix: str
    header: str
    annotations: str
    listing: str
    enum_table: str
    deprecated_macro: str
    version_header: str
    version_macros: List[str]
    version_scale: List[int]
    version_call: str
    sonames: List[str]
    file_prefix: str
    version_node: str
    status_type: str
    success: str
    not_loaded: str
    handle_type: str
    stream_getter: str
    stream_handle_arg: int
    stream_out_arg: int
    launch_takes_handle: bool
    launch_except_matching: List[str]
    launch_except: List[str]
    graph_update: str
    void_pointers: str  # "device": void * is the pointer value unless annotated
    number_pointers: str  # "annotated", or "device" (typed pointers to numbers are values)
    host_numbers: List[str]  # with numbers = "device": "function-glob param-glob" that are not
    scalars: str  # "host", or "pointer-mode" (where the library's pointer modes say)
    pointer_arrays: str  # "device": arrays of pointers to numbers are device memory; or ""
    handle_types: List[str]  # typedefs of pointers to complete structs recorded as handles
    pointer_modes: List[PointerMode]
    scale_types: List[ScaleType]
    stream: Optional[HandleStream]
    after_call: Dict[str, str]  # function glob -> the shim's hook run after its call is recorded
    undeclared: Dict[str, List[str]]  # declared function -> those the header lacks that take
    # its parameters
    # type -> {value: bytes}: the size of a `const void *` scalar, from a call's arguments
    scalar_sizes: Dict[str, Dict[str, int]]
    cplusplus_unguard: List[str]  # headers whose C++-only declarations are read as C
    stand_ins: List[str]  # C declarations of the C++ types those take (by pointer)

    @property
    def export_node(self) -> str:
        """The version node the wrappers are exported under: the real library's, or (when its
        symbols carry none) one named like its first soname."""
        return self.version_node or self.sonames[0]


def _get(table: dict, key: str, kind, where: str, default=None):
    value = table.get(key, default)
    if value is None:
        raise GenError("%s: missing `%s`" % (where, key))
    if not isinstance(value, kind):
        raise GenError("%s: `%s` must be a %s" % (where, key, kind.__name__))
    return value


def _pointer_mode(table: dict, path: str) -> PointerMode:
    where = path + " [[pointer_mode]]"
    mode = PointerMode(of=_get(table, "of", str, where), getter=_get(table, "getter", str, where),
                       attribute=_get(table, "attribute", str, where, ""),
                       host=_get(table, "host", list, where),
                       created_by=_get(table, "created_by", list, where, []),
                       default=_get(table, "default", str, where, ""),
                       setter=_get(table, "setter", str, where, ""),
                       forgotten_by=_get(table, "forgotten_by", list, where, []))
    if not mode.host:
        raise GenError("%s: `host` is empty" % where)
    if len({bool(mode.created_by), bool(mode.default), bool(mode.setter),
            bool(mode.forgotten_by)}) != 1:
        raise GenError("%s: `created_by`, `default`, `setter` and `forgotten_by` go together"
                       % where)
    return mode


def _followed(cls, table: dict, where: str):
    """A ScaleType or a HandleStream (cls) from its table: every field given, and calls that
    create and forget the object."""
    fields = {f.name: _get(table, f.name, list if f.type == "List[str]" else str, where)
              for f in dataclasses.fields(cls)}
    if not fields["created_by"] or not fields["forgotten_by"]:
        raise GenError("%s: `created_by` and `forgotten_by` must name calls" % where)
    return cls(**fields)


def _scale_type(table: dict, path: str) -> ScaleType:
    return _followed(ScaleType, table, path + " [[scale_type]]")


def _stream(table: dict, path: str) -> HandleStream:
    return _followed(HandleStream, table, path + " [stream]")


def read_library(path: str) -> Library:
    try:
        with open(path, "rb") as f:
            d = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise GenError("%s: %s" % (path, e)) from e
    here = os.path.dirname(path)
    ver, lib = d.get("version", {}), d.get("library", {})
    status, handle = d.get("status", {}), d.get("handle", {})
    launch, pointers = d.get("launch", {}), d.get("pointers", {})
    lib_ = Library(
        path=path,
        name=_get(d, "name", str, path),
        display=_get(d, "display", str, path),
        prefix=_get(d, "prefix", str, path),
        header=_get(d, "header", str, path),
        annotations=os.path.join(here, _get(d, "annotations", str, path)),
        listing=_get(d, "listing", str, path),
        enum_table=_get(d, "enum_table", str, path, ""),
        deprecated_macro=_get(d, "deprecated_macro", str, path, ""),
        version_header=_get(ver, "header", str, path + " [version]"),
        version_macros=_get(ver, "macros", list, path + " [version]"),
        version_scale=_get(ver, "scale", list, path + " [version]"),
        version_call=_get(ver, "call", str, path + " [version]", ""),
        sonames=_get(lib, "sonames", list, path + " [library]"),
        file_prefix=_get(lib, "file_prefix", str, path + " [library]"),
        version_node=_get(lib, "version_node", str, path + " [library]", ""),
        status_type=_get(status, "type", str, path + " [status]"),
        success=_get(status, "success", str, path + " [status]"),
        not_loaded=_get(status, "not_loaded", str, path + " [status]"),
        handle_type=_get(handle, "type", str, path + " [handle]", ""),
        stream_getter=_get(handle, "stream_getter", str, path + " [handle]", ""),
        stream_handle_arg=_get(handle, "stream_handle_arg", int, path + " [handle]", 0),
        stream_out_arg=_get(handle, "stream_out_arg", int, path + " [handle]", 1),
        launch_takes_handle=_get(launch, "takes_handle", bool, path + " [launch]", True),
        launch_except_matching=_get(launch, "except_matching", list, path + " [launch]", []),
        launch_except=_get(launch, "except", list, path + " [launch]", []),
        graph_update=_get(launch, "graph_update", str, path + " [launch]", ""),
        void_pointers=_get(pointers, "void", str, path + " [pointers]", "device"),
        number_pointers=_get(pointers, "numbers", str, path + " [pointers]", "annotated"),
        host_numbers=_get(pointers, "host_numbers", list, path + " [pointers]", []),
        scalars=_get(pointers, "scalars", str, path + " [pointers]", "host"),
        pointer_arrays=_get(pointers, "pointer_arrays", str, path + " [pointers]", ""),
        handle_types=_get(pointers, "handles", list, path + " [pointers]", []),
        pointer_modes=[_pointer_mode(m, path) for m in _get(d, "pointer_mode", list, path, [])],
        scale_types=[_scale_type(t, path) for t in _get(d, "scale_type", list, path, [])],
        stream=_stream(_get(d, "stream", dict, path), path) if "stream" in d else None,
        after_call=_get(d, "after_call", dict, path, {}),
        undeclared=_get(d, "undeclared", dict, path, {}),
        scalar_sizes=_get(d, "scalar_sizes", dict, path, {}),
        cplusplus_unguard=_get(d.get("cplusplus", {}), "unguard", list, path + " [cplusplus]", []),
        stand_ins=_get(d.get("cplusplus", {}), "stand_ins", list, path + " [cplusplus]", []),
    )
    if len(lib_.version_macros) != len(lib_.version_scale) or not lib_.version_macros:
        raise GenError("%s: [version] macros and scale must be lists of the same length" % path)
    if not lib_.sonames:
        raise GenError("%s: [library] sonames is empty" % path)
    if lib_.void_pointers != "device" or lib_.number_pointers not in ("annotated", "device") \
            or lib_.scalars not in ("host", "pointer-mode") \
            or lib_.pointer_arrays not in ("", "device"):
        raise GenError("%s: [pointers]: void = \"device\"; numbers = \"annotated\" or "
                       "\"device\"; scalars = \"host\" or \"pointer-mode\"; "
                       "pointer_arrays = \"device\"" % path)
    if (lib_.scalars == "pointer-mode") != bool(lib_.pointer_modes):
        raise GenError("%s: scalars = \"pointer-mode\" goes with [[pointer_mode]] tables" % path)
    if lib_.stream and (not lib_.stream_getter or lib_.stream.of != lib_.handle_type):
        raise GenError("%s: [stream] is of the [handle] type, which has a stream_getter" % path)
    for st in lib_.scale_types:
        if st.type not in lib_.scalar_sizes:
            raise GenError("%s: [[scale_type]] of %s: no [scalar_sizes.%s]" % (path, st.of, st.type))
    for like, names in lib_.undeclared.items():
        if not isinstance(names, list) or not all(isinstance(n, str) and
                                                  n.startswith(lib_.prefix) for n in names):
            raise GenError("%s: [undeclared] %s: a list of names starting with %s"
                           % (path, like, lib_.prefix))
    for ctype, sizes in lib_.scalar_sizes.items():
        if not isinstance(sizes, dict) or not all(v in (1, 2, 4, 8, 16) for v in sizes.values()):
            raise GenError("%s: [scalar_sizes.%s]: values are sizes of 1, 2, 4, 8 or 16 bytes"
                           % (path, ctype))
    if not re.fullmatch(r"[a-z][a-z0-9_]*", lib_.name):
        raise GenError("%s: name must be lower case letters, digits and _" % path)
    return lib_
