#!/usr/bin/env python3
"""Generate dnntrace's wrappers of the libraries it records, from their installed headers.

Each wrapped library is a description (shim/libs/<name>.toml, shim/libs/README.md says what it
holds): its name prefix, the header to parse, its status and handle types, its sonames, which of
its calls launch GPU work, how its pointers are read. For each description the generator reads
every function whose name starts with the prefix that the header declares (preprocessed by the C
compiler, parsed with pycparser), decides how each argument is recorded from its type and from
the first matching line of the library's annotation file, and writes into --out-dir:

  dt-wrappers-<name>.c  one exported wrapper per function of the library;
  <listing>             the listing committed beside the description, so an update reads as a diff;

and, for all the libraries together (their API ids are one space, in the order the descriptions
are given, each library's functions in name order):

  dt-api.c        the API name/signature/flag tables and the table of libraries the shim reads;
  dt-api.h        the API ids and the tables' declarations (includes no CUDA header);
  dt-exports.map  the linker's version script: each library's functions, by name, under its
                  version node, then the hand-written rest (--map-base);

and, with --out-enums, the table of a library's enum names that analyzer/ carries (committed, so
traces are decoded without any CUDA header).

The argument encoding is the one trace/FORMAT.md specifies under "Call arguments"; one Field per
argument produces its signature entry, its byte count and its store, so the three cannot disagree.

This is not a general C binding generator: it handles the parameter shapes these libraries use and fails,
naming the function and parameter, on anything else, on a pointer parameter that no annotation
describes, and on an annotation line that describes nothing.
"""

from __future__ import annotations

import argparse
import dataclasses
import fnmatch
import os
import re
import shlex
import sys
from typing import Dict, List, Optional, Tuple

from pycparser import c_ast

sys.dont_write_bytecode = True  # no __pycache__ beside the sources
# imported after the line above, so that they leave none either
from dt_gen_desc import GenError, Library, PointerMode, ScaleType, read_library  # noqa: E402
from dt_gen_follow import (  # noqa: E402
    c_mode_setter, followed, is_followed, mode_getter, mode_hooks, mode_kind, what)
from dt_gen_headers import (  # noqa: E402
    ENCODINGS, INTEGER_CODES, Elem, Function, Param, Types, base_code, deprecated_names,
    enums_file, find_header, header_version, own_headers, parse, preprocess, read_enums,
    read_functions, type_text)

GENERATOR = "shim/dt-gen-wrappers.py"

# What is read of a variable-length input of a call that failed: cuDNN's arrays of dims hold at
# most CUDNN_DIM_MAX (8) elements.
FAILED_CAP_ELEMENTS = 8
FAILED_CAP_BYTES = 64

# Local names a wrapper declares; a parameter must not be called like one of them (nor start
# with "dt_", the prefix of its other locals).
WRAPPER_LOCALS = {"real_t", "real", "t", "t0", "t1", "ret", "ok", "len", "p"}

DEPRECATED = 1  # bit 0 of dt_api_flags


# --------------------------------------------------------------------------- annotations


@dataclasses.dataclass
class Rule:
    """One line of the annotation file."""

    where: str  # "file:line", for messages
    func_glob: str
    param_glob: str
    role: str  # value, in, out, scalar, outscalar, string, outstring, payload, outpayload
    length: Optional[List[str]] = None  # LEN atoms (one, or two for min): "4", "n", "*n"
    args: Optional[List[str]] = None  # payload/outpayload parameter names
    used: bool = False

    def matches(self, func: str, param: str) -> bool:
        return (fnmatch.fnmatchcase(func, self.func_glob)
                and fnmatch.fnmatchcase(param, self.param_glob))


ATOM = r"\d+|\*?[A-Za-z_]\w*"
ROLE_RE = re.compile(
    r"(?P<plain>value|in|out|outscalar|scalar|string)"
    r"|(?P<array>in|out|outstring)\[(?:(?P<atom>%s)|min\((?P<a>%s),(?P<b>%s)\))\]"
    r"|(?P<payload>payload|outpayload)\((?P<args>\w+(?:,\w+)*)\)" % (ATOM, ATOM, ATOM))


def read_rules(path: str) -> List[Rule]:
    rules = []
    with open(path, encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            words = line.split("#", 1)[0].split(None, 2)
            if not words:
                continue
            where = "%s:%d" % (path, lineno)
            if len(words) != 3:
                raise GenError("%s: expected `function-glob param-glob role`" % where)
            rules.append(parse_role(where, words[0], words[1], "".join(words[2].split())))
    return rules


def parse_role(where: str, func_glob: str, param_glob: str, role: str) -> Rule:
    m = ROLE_RE.fullmatch(role)
    if not m:
        raise GenError("%s: unknown role %r" % (where, role))
    name = m.group("plain") or m.group("array") or m.group("payload")
    rule = Rule(where, func_glob, param_glob, name)
    if m.group("array"):
        rule.length = [m.group("atom")] if m.group("atom") else [m.group("a"), m.group("b")]
    if m.group("payload"):
        rule.args = m.group("args").split(",")
        if len(rule.args) != (2 if rule.role == "payload" else 3):
            raise GenError("%s: wrong number of parameters for %s" % (where, rule.role))
    return rule


# --------------------------------------------------------------------------- fields


@dataclasses.dataclass
class Field:
    """How one argument is recorded: its signature entry, its size and its store."""

    name: str  # in the signature
    code: str  # signature code, ">" first for outputs
    size: str  # C expression: bytes it takes in the record
    put: str  # C expression storing it at p and returning the advanced p
    count: Optional[str] = None  # C expression for count_var(name), the variable part of size
    elem_size: Optional[Tuple[str, int]] = None  # (C type, bytes) of an array's elements


def count_var(name: str) -> str:
    """The wrapper's local holding a variable-length field's element or byte count."""
    return "dt_n_" + name


def fixed_field(name: str, code: str, value: str, out: bool = False) -> Field:
    size, put, cast = ENCODINGS[base_code(code)]
    return Field(name, (">" if out else "") + code, str(size), "%s(p, %s%s)" % (put, cast, value))


def array_field(name: str, elem: Elem, count: str, out: bool) -> Field:
    size = ENCODINGS[base_code(elem.code)][0]
    n = count_var(name)
    return Field(name, (">" if out else "") + "a" + elem.code, "4 + %s * %d" % (n, size),
                 "dt_put_array(p, %s, %s, %d)" % (name, n, size), count, (elem.ctype, size))


def blob_field(name: str, code: str, nbytes: str, out: bool, src: Optional[str] = None) -> Field:
    """A byte-counted field: nbytes (a C expression) bytes from src, by default the parameter."""
    n = count_var(name)
    return Field(name, (">" if out else "") + code, "4 + " + n,
                 "dt_put_array(p, %s, %s, 1)" % (src or name, n), nbytes)


class FieldMaker:
    """Builds the Fields of one function's parameters from their types and rules."""

    def __init__(self, lib: Library, func: Function, types: Types, status: bool):
        self.lib = lib
        self.func = func.like or func.name  # what the description's globs are matched with
        self.types = types
        self.params = {p.name: p for p in func.params}
        # Outputs are read only when the call succeeded; without a status, always.
        self.status = status
        self.uses_ok = False  # whether a Field tests the wrapper's `ok`
        self.mode: Optional[Tuple[PointerMode, str]] = None  # asked of which argument
        self.scale: Optional[Tuple[ScaleType, str]] = None  # the same, for the scalars' type
        self.scalar_most: Optional[str] = None  # bytes of a void scalar, by type arguments

    def by_value(self, param: Param) -> Field:
        elem = self.types.elem(param.node)
        if elem.kind not in ("scalar", "pointer") or base_code(elem.code) not in ENCODINGS:
            raise GenError("cannot record a %s passed by value" % elem.kind)
        return fixed_field(param.name, elem.code, param.name)

    def pointer(self, param: Param, rule: Optional[Rule]) -> Field:
        target = self.types.elem(param.node.type)
        if rule is None:
            if not self.device_memory(param, target):
                raise GenError("pointer parameter matches no annotation")
            return fixed_field(param.name, "p", param.name)
        if rule.role.startswith("out") and "const" in getattr(param.node.type, "quals", []):
            raise GenError("%s: role %s on a pointer to const" % (rule.where, rule.role))
        try:
            return getattr(self, "role_" + rule.role)(param, target, rule)
        except GenError as e:
            raise GenError("%s: %s" % (rule.where, e)) from e

    def device_memory(self, param: Param, target: Elem) -> bool:
        """Whether an unannotated pointer is device memory (recorded as its value), as the
        library's description says of its pointers."""
        if target.kind == "void":
            return self.lib.void_pointers == "device"
        if target.kind == "pointer" and self.lib.pointer_arrays == "device":
            # `const float *const A[]`: the batched calls' arrays of device pointers, which
            # lie in device memory themselves
            return self.points_to_data(param.node.type)
        if self.lib.number_pointers != "device" or not self.types.is_number(target):
            return False
        return not any(fnmatch.fnmatchcase(self.func, f) and fnmatch.fnmatchcase(param.name, p)
                       for f, p in (h.split() for h in self.lib.host_numbers))

    def points_to_data(self, node) -> bool:
        """Whether `node` (an element's declarator) is a pointer to numbers or to void."""
        if not isinstance(node, c_ast.PtrDecl):
            return False
        try:
            elem = self.types.elem(node.type)
        except GenError:
            return False
        return elem.kind == "void" or self.types.is_number(elem)

    def if_ok(self, expr: str, out: bool) -> str:
        """A variable-length output's byte or element count: 0 unless the call succeeded."""
        if not (out and self.status):
            return expr
        self.uses_ok = True
        return "ok ? %s : 0" % expr

    def if_failed_cap(self, expr: str, out: bool, cap: int) -> str:
        """A variable-length input's count when the call failed: at most cap. Inputs are read
        after the call; a call cuDNN rejected may carry a bogus length, and the shim must not
        read far past what the caller really passed."""
        if out or not self.status:
            return expr
        self.uses_ok = True
        return "dt_cap_failed(%s, ok, %d)" % (expr, cap)

    def read(self, name: str, zero: str, out: bool) -> str:
        """The element a pointer points to, or `zero`."""
        cond = name
        if out and self.status:
            self.uses_ok = True
            cond = "ok && " + name
        return "((%s) ? *%s : %s)" % (cond, name, zero)

    def role_value(self, param: Param, target: Elem, rule: Rule) -> Field:
        return fixed_field(param.name, "p", param.name)

    def role_in(self, param: Param, target: Elem, rule: Rule) -> Field:
        return self.element(param, target, rule, False)

    def role_out(self, param: Param, target: Elem, rule: Rule) -> Field:
        return self.element(param, target, rule, True)

    def element(self, param: Param, target: Elem, rule: Rule, out: bool) -> Field:
        """One element, or an array of rule.length elements, read through the pointer; for a
        void pointer, rule.length bytes (attribute values of a given size)."""
        name = param.name
        if target.kind == "void" and rule.length is not None:
            nbytes = self.if_failed_cap("dt_count(%s, %s, 1)" % (name, self.length(rule, out)),
                                        out, FAILED_CAP_BYTES)
            return blob_field(name, "x", self.if_ok(nbytes, out), out)
        if target.kind not in ("scalar", "pointer", "struct"):
            raise GenError("role %s needs a pointer to a complete type" % rule.role)
        length = "1" if rule.length is None else self.length(rule, out)
        if target.kind == "struct":
            nbytes = "dt_bytes(%s, %s, sizeof(%s))" % (name, length, target.ctype)
            nbytes = self.if_failed_cap(nbytes, out, FAILED_CAP_BYTES)
            return blob_field(name, target.code, self.if_ok(nbytes, out), out)
        if rule.length is None:
            zero = "NULL" if target.kind == "pointer" else "0"
            return fixed_field(name, target.code, self.read(name, zero, out), out)
        size = ENCODINGS[base_code(target.code)][0]
        count = "dt_count(%s, %s, %d)" % (name, length, size)
        count = self.if_failed_cap(count, out, FAILED_CAP_ELEMENTS)
        return array_field(name, target, self.if_ok(count, out), out)

    def role_scalar(self, param: Param, target: Elem, rule: Rule) -> Field:
        if self.lib.scalars == "pointer-mode":
            return self.modal_scalar(param, target, False)
        self.need(target, "void", rule)
        return blob_field(param.name, "k", "dt_hostscalar_len(%s)" % param.name, False)

    def role_outscalar(self, param: Param, target: Elem, rule: Rule) -> Field:
        if self.lib.scalars != "pointer-mode":
            raise GenError("role outscalar needs scalars = \"pointer-mode\"")
        return self.modal_scalar(param, target, True)

    def modal_scalar(self, param: Param, target: Elem, out: bool) -> Field:
        """A scalar in host or device memory as the call's pointer mode says (code m): read on
        the host only in a host mode; its size is its type's, or for void the largest any of
        the call's type arguments gives ([scalar_sizes]), else at most 16 bytes (a double
        complex), the decoder taking what the call's scale type says."""
        if target.kind == "void":
            sizes = ["dt_size_%s(%s)" % (p.decl.split()[0], p.name) for p in self.params.values()
                     if not p.is_pointer and p.decl.split()[0] in self.lib.scalar_sizes]
            if not sizes and self.scale_type():
                sizes = ["dt_size_%s(dt_scale)" % self.scale[0].type]
            most = sizes[-1] if sizes else "16"
            for size in reversed(sizes[:-1]):
                most = "dt_umax(%s, %s)" % (size, most)
            if sizes:
                # the same for each of the call's scalars: worked out once where
                # there are several (alpha and beta; describe())
                self.scalar_most, most = most, "dt_scalar_most"
        elif self.types.is_number(target):
            most = "sizeof(%s)" % target.ctype
        else:
            raise GenError("a scalar must point to a number or to void")
        pm, arg = self.pointer_mode()
        host = " || ".join("dt_mode == %s" % m for m in pm.host_modes(param.name)) or "0"
        if out and "const" in getattr(param.node.type, "quals", []):
            raise GenError("role outscalar on a pointer to const")
        cond = "(%s)" % host
        if out and self.status:
            self.uses_ok = True
            cond = "ok && " + cond
        n = count_var(param.name)
        return Field(param.name, (">" if out else "") + "m", "16 + " + n,
                     "dt_put_modal(p, %s, dt_mode, %s)" % (param.name, n),
                     "%s ? dt_scalar_len(%s, %s) : 0" % (cond, param.name, most))

    def arg_of(self, tables):
        """The first table of those whose `of` is the type of an argument of this call, and that
        argument; None when there is none."""
        for table in tables:
            arg = next((p.name for p in self.params.values()
                        if not p.is_pointer and p.decl.split()[0] == table.of), None)
            if arg:
                return (table, arg)
        return None

    def scale_type(self) -> Optional[Tuple[ScaleType, str]]:
        """The [[scale_type]] of an argument of this call, and that argument, if any."""
        if self.scale is None:
            self.scale = self.arg_of(self.lib.scale_types)
        return self.scale

    def pointer_mode(self) -> Tuple[PointerMode, str]:
        """The pointer mode that rules this call's scalars, and the argument it is asked of."""
        if self.mode is None:
            self.mode = self.arg_of(self.lib.pointer_modes)
            if self.mode is None:
                raise GenError("no argument of a type [[pointer_mode]] names (%s)"
                               % ", ".join(pm.of for pm in self.lib.pointer_modes))
        return self.mode

    def role_string(self, param: Param, target: Elem, rule: Rule) -> Field:
        self.need(target, "char", rule)
        return blob_field(param.name, "s", "dt_strlen(%s, DT_MAX_STRING)" % param.name, False)

    def role_outstring(self, param: Param, target: Elem, rule: Rule) -> Field:
        self.need(target, "char", rule)
        nbytes = "dt_strlen(%s, %s)" % (param.name, self.length(rule, True))
        return blob_field(param.name, "s", self.if_ok(nbytes, True), True)

    def role_payload(self, param: Param, target: Elem, rule: Rule) -> Field:
        self.need(target, "void", rule)
        type_arg, count = (self.integer(a) for a in rule.args)
        nbytes = "dt_backend_payload_bytes(%s, %s, %s)" % (param.name, count, type_arg)
        nbytes = self.if_failed_cap(nbytes, False, FAILED_CAP_BYTES)
        return blob_field(param.name, "x", nbytes, False)

    def role_outpayload(self, param: Param, target: Elem, rule: Rule) -> Field:
        self.need(target, "void", rule)
        type_arg, requested = (self.integer(a) for a in rule.args[:2])
        got = self.deref(rule.args[2])
        count = "dt_min64(%s, %s ? *%s : %s)" % (requested, got, got, requested)
        nbytes = "dt_backend_payload_bytes(%s, %s, %s)" % (param.name, count, type_arg)
        return blob_field(param.name, "x", self.if_ok(nbytes, True), True)

    @staticmethod
    def need(target: Elem, kind: str, rule: Rule) -> None:
        if target.kind != kind:
            raise GenError("role %s needs a pointer to %s" % (rule.role, kind))

    def length(self, rule: Rule, out: bool) -> str:
        """The C expression of an array role's LEN."""
        atoms = []
        for atom in rule.length:
            if atom.isdigit():
                atoms.append(atom)
            elif atom.startswith("*"):
                if not out:
                    raise GenError("%s: only outputs take a length stored by the call" % atom)
                name = self.deref(atom[1:])
                atoms.append("(%s ? *%s : 0)" % (name, name))
            else:
                atoms.append(self.integer(atom))
        return atoms[0] if len(atoms) == 1 else "dt_min64(%s, %s)" % tuple(atoms)

    def integer(self, name: str) -> str:
        """`name`, checked to be an integer or enum parameter passed by value."""
        param = self.params.get(name)
        if param is None or param.is_pointer or \
                base_code(self.types.elem(param.node).code) not in INTEGER_CODES | {"e"}:
            raise GenError("%s is not an integer parameter" % name)
        return name

    def deref(self, name: str) -> str:
        """`name`, checked to be a pointer to an integer."""
        param = self.params.get(name)
        if param is None or not param.is_pointer or \
                base_code(self.types.elem(param.node.type).code) not in INTEGER_CODES:
            raise GenError("%s is not a pointer to an integer" % name)
        return name


def return_kind(lib: Library, func: Function, types: Types) -> str:
    """"status", "void", "s" (a string) or the scalar code of what the function returns."""
    if type_text(func.ret) == lib.status_type:
        return "status"
    elem = types.elem(func.ret)
    if elem.kind == "void":
        return "void"
    if isinstance(func.ret, c_ast.PtrDecl) and types.elem(func.ret.type).kind == "char":
        return "s"
    if elem.kind == "scalar":
        return elem.code
    raise GenError("%s: unsupported return type %s" % (func.name, type_text(func.ret)))


def return_field(kind: str) -> Optional[Field]:
    """The `return` pseudo-parameter of functions that return no status."""
    if kind in ("status", "void"):
        return None
    if kind == "s":
        return blob_field("return", "s", "dt_strlen(ret, DT_MAX_STRING)", False, src="ret")
    return fixed_field("return", kind, "ret")


# --------------------------------------------------------------------------- one API


@dataclasses.dataclass
class Api:
    """A wrapped function with the Fields that record its calls."""

    func: Function
    ret_kind: str
    fields: List[Field]
    uses_ok: bool
    mode: Optional[Tuple[PointerMode, str]] = None  # asked of which argument, for scalars
    scalar_most: Optional[str] = None  # the bytes a void scalar may take, by type arguments
    scale: Optional[Tuple[ScaleType, str]] = None  # the scalars' type, asked of which argument

    @property
    def signature(self) -> str:
        return ",".join("%s:%s" % (f.name, f.code) for f in self.fields)


def describe(lib: Library, func: Function, types: Types, rules: List[Rule]) -> Api:
    """Match each parameter with its rule and build the Fields of the call."""
    ret_kind = return_kind(lib, func, types)
    maker = FieldMaker(lib, func, types, ret_kind == "status")
    fields, errors = [], []
    for param in func.params:
        rule = None
        if param.is_pointer:
            rule = next((r for r in rules if r.matches(maker.func, param.name)), None)
        if rule is not None:
            rule.used = True
        try:
            if param.name in WRAPPER_LOCALS or param.name.startswith("dt_"):
                raise GenError("name clashes with the wrapper's locals")
            fields.append(maker.pointer(param, rule) if param.is_pointer
                          else maker.by_value(param))
        except GenError as e:
            errors.append("%s: parameter %s (%s): %s" % (func.name, param.name, param.decl, e))
    if errors:
        raise GenError("\n".join(errors))
    most = maker.scalar_most
    if most and sum("dt_scalar_most" in (f.count or "") for f in fields) < 2:
        # one scalar: its bound stays under its condition (a host mode)
        fields = [dataclasses.replace(f, count=f.count.replace("dt_scalar_most", most))
                  if f.count else f for f in fields]
        most = None
    extra = [return_field(ret_kind)] if return_field(ret_kind) else []
    if maker.scale:
        # the type its scalars were read at, after the arguments: a reader
        # cannot tell it from the call's own (trace/FORMAT.md)
        st = maker.scale[0]
        extra.append(fixed_field(st.record_as, "e=" + st.type, "dt_scale"))
    return Api(func, ret_kind, fields + extra, maker.uses_ok, maker.mode, most, maker.scale)


# --------------------------------------------------------------------------- C output


def fallback(lib: Library, ret_kind: str) -> str:
    """What a wrapper returns when the library is not loaded in the process."""
    return {"status": lib.not_loaded, "s": c_string("%s is not loaded" % lib.display),
            "void": ""}.get(ret_kind, "0")


C_HELPERS = """\
static inline int64_t dt_min64(int64_t a, int64_t b)
{
\treturn a < b ? a : b;
}

/* A failed call's input count, at most cap (see the generator). */
static inline uint32_t dt_cap_failed(uint32_t n, int ok, uint32_t cap)
{
	return ok || n <= cap ? n : cap;
}

static inline uint32_t dt_umax(uint32_t a, uint32_t b)
{
	return a > b ? a : b;
}

/* Bytes of `count` elements of `elem` bytes at ptr, within DT_MAX_BLOB. */
static inline uint32_t dt_bytes(const void *ptr, int64_t count, uint32_t elem)
{
\treturn elem ? dt_count(ptr, count, elem) * elem : 0;
}

"""


def c_declarator(ctype: str, name: str) -> str:
    return ctype + name if ctype.endswith("*") else ctype + " " + name


def c_wrapper(lib: Library, api: Api) -> str:
    """The exported wrapper: resolve, enter, call and time, record, leave."""
    func = api.func
    ret = type_text(func.ret)
    args = ", ".join(p.name for p in func.params)
    void = api.ret_kind == "void"
    not_loaded = fallback(lib, api.ret_kind)
    decl = "%s(%s)" % (c_declarator(ret, func.name),
                       ", ".join(p.decl for p in func.params) or "void")
    lines = []
    if func.like:
        lines += ["/* Not in %s: takes %s's parameters. */" % (lib.header, func.like),
                  "DT_EXPORT %s;" % decl]
    lines += [
        "DT_EXPORT " + decl,
        "{",
        "\ttypedef %s(%s);" % (c_declarator(ret, "(*real_t)"),
                               ", ".join(p.abstract for p in func.params) or "void"),
        "\treal_t real = (real_t)dt_real(DT_API_%s);" % func.name,
        "\tif (DT_UNLIKELY(!real))",
        "\t\treturn%s;" % (" " + not_loaded if not_loaded else ""),
    ]
    before, after = mode_hooks(lib, func, api.ret_kind)
    lines += before + ["\tstruct dt_thread *t = dt_enter();"]
    if void:
        lines += ["\tif (!t) {", "\t\treal(%s);" % args, "\t\treturn;", "\t}"]
    elif after:
        lines += ["\tif (!t) {", "\t\t%s = real(%s);" % (c_declarator(ret, "ret"), args)]
        lines += ["\t" + a for a in after] + ["\t\treturn ret;", "\t}"]
    else:
        lines += ["\tif (!t)", "\t\treturn real(%s);" % args]
    call = "\t%sreal(%s);" % ("" if void else c_declarator(ret, "ret") + " = ", args)
    if launches_work(lib, func):
        call = "\tdt_gpu_begin(t);\n%s\n\tdt_gpu_end(t);" % call
        lines += [graph_scope(lib, func)]
    lines += ["\tuint64_t t0 = dt_now();", call, "\tuint64_t t1 = dt_now();"] + after
    lines += c_record(lib, api)
    lines += ["\tdt_leave(t);"] + ([] if void else ["\treturn ret;"]) + ["}"]
    return "\n".join(lines) + "\n"


def graph_scope(lib: Library, func: Function) -> str:
    """The line that opens a CUDA-graph scope before a call that can launch
    work (shim-runtime.h): on a graph the call is given (cuDNN's populate and
    update functions, say), else on the stream it is given (cublasLtMatmul),
    else on its handle's stream, when that is being captured."""
    graph = next((p.name for p in func.params if p.decl.split()[0] == "cudaGraph_t"
                  and "*" not in p.decl), None)
    if graph:
        update = lib.graph_update and fnmatch.fnmatchcase(func.name, lib.graph_update)
        how = "DT_GRAPH_UPDATED" if update else "DT_GRAPH_POPULATED"
        return "\tdt_graph_begin_graph(t, %s, %s);" % (graph, how)
    stream = next((p.name for p in func.params if p.decl.split()[0] == "cudaStream_t"
                   and "*" not in p.decl), None)
    if stream:
        return "\tdt_graph_begin_stream(t, %s);" % stream
    handle = next((p.name for p in func.params if p.decl.split()[0] == lib.handle_type
                   and "*" not in p.decl), None)
    return "\tdt_graph_begin(t, %s);" % handle if handle else ""


def takes_handle(lib: Library, func: Function) -> bool:
    return bool(lib.handle_type) and any(p.decl.split()[0] == lib.handle_type
                                         for p in func.params)


def launches_work(lib: Library, func: Function) -> bool:
    """Whether a call can put work on the GPU, so that its kernels are tagged
    with it (dt_gpu_begin/end, about 0.2 us a call while CUPTI records).

    The description's [launch] says which: for cuDNN, work is done on a
    handle's stream, so such a call takes a handle (or creates one:
    cudnnCreate launches too); by cuDNN's naming, queries (Get, Query) and
    the handle's own management (cudnnDestroy, cudnnSetStream) launch
    nothing."""
    if lib.launch_takes_handle and not takes_handle(lib, func):
        return False
    if any(fnmatch.fnmatchcase(func.name, g) for g in lib.launch_except_matching):
        return False
    return func.name not in lib.launch_except


def c_record(lib: Library, api: Api) -> List[str]:
    """The lines that size the API_CALL record and store the arguments into it."""
    lines = ["\tconst int ok = ret == %s;" % lib.success] if api.uses_ok else []
    if api.mode:
        lines.append("\tconst int32_t dt_mode = %s(%s, t);"
                     % (mode_getter(api.mode[0]), api.mode[1]))
    if api.scale:
        lines.append("\tconst int32_t dt_scale = %s(%s, t);"
                     % (mode_getter(api.scale[0]), api.scale[1]))
    if api.scalar_most:
        lines.append("\tconst uint32_t dt_scalar_most = %s;" % api.scalar_most)
    lines += ["\tuint32_t %s = %s;" % (count_var(f.name), f.count) for f in api.fields if f.count]
    status = "(int32_t)ret" if api.ret_kind == "status" else "0"
    lines += [
        "\tuint32_t len = %s;" % (" + ".join(f.size for f in api.fields) or "0"),
        "\tuint8_t *p = dt_call_begin(t, DT_API_%s, t0, t1, %s, len);" % (api.func.name, status),
        "\tif (p) {",
    ]
    lines += ["\t\tp = %s;" % f.put for f in api.fields]
    return lines + ["\t\tdt_call_end(t);", "\t}"]


def c_string(text: str) -> str:
    return '"%s"' % text.replace("\\", "\\\\").replace('"', '\\"')


def c_table(decl: str, apis: List[Api], value) -> str:
    rows = ["\t[DT_API_%s] = %s," % (a.func.name, value(a)) for a in apis]
    return "%s = {\n%s\n};\n" % (decl, "\n".join(rows))


def array_static_asserts(apis: List[Api]) -> List[str]:
    """Arrays are copied as they lie in memory: their elements must have the recorded size."""
    sizes = {f.elem_size for a in apis for f in a.fields if f.elem_size}
    return ['_Static_assert(sizeof(%s) == %d, "array element size");' % s for s in sorted(sizes)]


def c_trampolines(lib: Library, apis: List[Api]) -> str:
    """What the shim asks of the library through its table row (shim-runtime.h, struct
    dt_library), as plain C functions: a handle's stream, the loaded library's version."""
    by_name = {a.func.name: a for a in apis}
    out = []
    st = lib.stream
    for name in (st.created_by + [st.setter] + st.forgotten_by) if st else []:
        if name not in by_name:
            raise GenError("%s: [stream] %s is not a wrapped function" % (lib.path, name))
    if lib.stream_getter:
        api = by_name.get(lib.stream_getter)
        if api is None or api.ret_kind != "status" or len(api.func.params) != 2:
            raise GenError("%s: stream_getter %s is not a function of two parameters returning "
                           "%s" % (lib.path, lib.stream_getter, lib.status_type))
        params = api.func.params
        args = [None, None]
        args[lib.stream_handle_arg] = "(%s)handle" % params[lib.stream_handle_arg].abstract
        args[lib.stream_out_arg] = "(%s)stream" % params[lib.stream_out_arg].abstract
        if None in args:
            raise GenError("%s: stream_handle_arg and stream_out_arg must be 0 and 1" % lib.path)
        out.append(f"""/* The stream of a {lib.display} handle, by {lib.stream_getter} (not recorded). */
bool dt_stream_{lib.name}(void *handle, void **stream)
{{
\ttypedef {c_declarator(lib.status_type, "(*real_t)")}({", ".join(p.abstract for p in params)});
\treal_t real = (real_t)dt_real(DT_API_{lib.stream_getter});
\treturn real && real({", ".join(args)}) == {lib.success};
}}
""")
    return "\n".join(out)


def c_version_getters(libs: List[Tuple[Library, List[Api], int]], apis: List[Api]) -> str:
    """Each library's version, by the function its description names: any wrapped library's
    (cuBLAS's own getters answer with cuBLASLt's). Asked under the shim's lock when a library
    is found, it is looked up without noting its library, and never through a wrapper."""
    by_name = {a.func.name: a for a in apis}
    out = []
    for lib, _, _ in libs:
        if not lib.version_call:
            continue
        api = by_name.get(lib.version_call)
        if api is None and len(libs) == 1:
            continue  # another library's, not described in this run (a listing's check)
        if api is None or api.func.params or api.ret_kind not in INTEGER_CODES:
            raise GenError("%s: version call %s is not an integer function of no parameter"
                           % (lib.path, lib.version_call))
        ret = type_text(api.func.ret)
        out.append(f"""/* The loaded {lib.display}'s version, by {lib.version_call} (not recorded); 0 when none. */
uint64_t dt_version_{lib.name}(void)
{{
\ttypedef {c_declarator(ret, "(*real_t)")}(void);
\treal_t real = (real_t)dt_real_peek(DT_API_{lib.version_call});
\treturn real ? (uint64_t)real() : 0;
}}
""")
    return "\n".join(out)


def c_mode_getters(lib: Library, apis: List[Api]) -> str:
    """For each [[pointer_mode]] and [[scale_type]] some call uses: the function that asks it
    (not recorded) of the call's argument; -1 when it cannot be asked (a NULL or bad handle:
    nothing is read)."""
    by_name = {a.func.name: a for a in apis}
    out = []
    if len(lib.pointer_modes) > 8 or len(lib.scale_types) > 8:
        raise GenError("%s: more than 8 [[pointer_mode]] or [[scale_type]] tables" % lib.path)
    if any(is_followed(f) for f in followed(lib)):
        out.append('_Static_assert(DT_LIBRARY < 16, "pointer mode kinds are 8 bits");\n')
    for f in followed(lib):
        if is_followed(f):
            for name in f.created_by + f.forgotten_by:
                if name not in by_name:
                    raise GenError("%s: %s %s is not a wrapped function"
                                   % (lib.path, what(f), name))
            out.append(c_mode_setter(lib, f, [a.func for a in apis]))
        if not any(f in (a.mode and a.mode[0], a.scale and a.scale[0]) for a in apis):
            continue
        api = by_name.get(f.getter)
        nparams = 5 if f.attribute else 2
        if api is None or api.ret_kind != "status" or len(api.func.params) != nparams:
            raise GenError("%s: %s getter %s is not a function of %d parameters "
                           "returning %s" % (lib.path, what(f), f.getter, nparams,
                                             lib.status_type))
        params = api.func.params
        if f.attribute:
            args = "of, %s, &value, sizeof(value), &written" % f.attribute
            local = "\tsize_t written = 0;\n"
        else:
            args = "of, (%s)&value" % params[1].abstract
            local = ""
        known, how = "\t(void)t;\n", ""
        if is_followed(f):
            known = f"""\t/* a call made from inside another library's call is given that
\t * library's objects, made and set where no wrapper sees them */
\tint32_t known = t->depth == 1 ? dt_mode_cached({mode_kind(lib, f)}, of) : -1;
\tif (known >= 0)
\t\treturn known;
"""
            how = "for a call of the program's, as followed (shim-modes.c), else "
        out.append(f"""/* The {what(f)} of a {f.of}: {how}by
 * {f.getter} (not recorded); -1 when it cannot be asked. */
static int32_t {mode_getter(f)}({f.of} of, const struct dt_thread *t)
{{
{known}\ttypedef {c_declarator(lib.status_type, "(*real_t)")}({", ".join(p.abstract for p in params)});
\treal_t real = (real_t)dt_real(DT_API_{f.getter});
\tint32_t value = -1;
{local}\tif (!of || !real || real({args}) != {lib.success})
\t\treturn -1;
\treturn value;
}}
""")
    return "\n".join(out)


def c_scalar_sizes(lib: Library) -> str:
    """For each type of the description's [scalar_sizes]: the bytes of a scalar of the type an
    argument of it names; 16 (the most a scalar takes) for a value not listed."""
    out = []
    for ctype, sizes in sorted(lib.scalar_sizes.items()):
        cases = "".join("\tcase %s:\n\t\treturn %d;\n" % kv for kv in sorted(sizes.items()))
        out.append(f"""/* Bytes of a scalar of the type a {ctype} says ({os.path.basename(lib.path)}). */
static inline uint32_t dt_size_{ctype}(int v)
{{
\tswitch (v) {{
{cases}\tdefault:
\t\treturn 16;
\t}}
}}
""")
    return "\n".join(out)


def c_stand_ins(lib: Library) -> str:
    """The C declarations of the C++ types the header's C++-only functions take (by pointer),
    so that their wrappers compile as C."""
    if not lib.stand_ins:
        return ""
    return ("/* Stand-ins of the C++ types of the functions %s declares for C++ only. */\n%s\n"
            % (", ".join(lib.cplusplus_unguard), "\n".join(lib.stand_ins)))


def c_file(lib: Library, index: int, apis: List[Api], banner: str) -> str:
    """One library's wrappers."""
    parts = [
        "/* %s */\n" % banner,
        "#include <%s>\n\n/* These are the wrappers of %s, dt_libraries[%d]. */\n"
        "#define DT_LIBRARY %d\n" % (lib.header, lib.display, index, index),
        c_stand_ins(lib),
        '#include "shim-runtime.h"\n#include "dt-api.h"\n',
        "\n".join(array_static_asserts(apis)) + "\n",
        C_HELPERS,
        c_scalar_sizes(lib),
        c_mode_getters(lib, apis),
    ]
    return "\n".join(parts + [c_wrapper(lib, a) for a in apis] + [c_trampolines(lib, apis)])


def c_strings(strings: List[str]) -> str:
    """A NULL-terminated array of strings, as a compound literal."""
    return "(const char *const[]){ %s }" % ", ".join([c_string(x) for x in strings] + ["NULL"])


def api_c_file(libs: List[Tuple[Library, List[Api], int]], apis: List[Api], banner: str) -> str:
    """The tables of every wrapped function and of the libraries, for the shim and the writer."""
    rows = []
    first = 0
    for lib, lib_apis, built in libs:
        rows.append(f"""\t{{
\t\t.name = {c_string(lib.name)},
\t\t.display = {c_string(lib.display)},
\t\t.prefix = {c_string(lib.prefix)},
\t\t.sonames = {c_strings(lib.sonames)},
\t\t.file_prefix = {c_string(lib.file_prefix)},
\t\t.version_node = {c_string(lib.version_node) if lib.version_node else "NULL"},
\t\t.first_api = {first},
\t\t.last_api = {first + len(lib_apis) - 1},
\t\t.built = "{built}",
\t\t.not_loaded = {c_string(lib.not_loaded)},
\t\t.get_stream = {"dt_stream_" + lib.name if lib.stream_getter else "NULL"},
\t\t.version = {"dt_version_" + lib.name if lib.version_call else "NULL"},
\t}},""")
        first += len(lib_apis)
    parts = [
        "/* %s */\n" % banner,
        '#include "shim-runtime.h"\n#include "dt-api.h"\n',
        c_table("const char *const dt_api_names[DT_API_COUNT]", apis,
                lambda a: c_string(a.func.name)),
        c_table("const char *const dt_api_sigs[DT_API_COUNT]", apis,
                lambda a: c_string(a.signature)),
        c_table("const uint16_t dt_api_flags[DT_API_COUNT]", apis,
                lambda a: str(DEPRECATED if a.func.deprecated else 0)),
        "const struct dt_library dt_libraries[DT_LIBRARY_COUNT] = {\n%s\n};\n" % "\n".join(rows),
        after_call_table(libs),
        c_version_getters(libs, apis),
    ]
    return "\n".join(parts)


def after_call_table(libs: List[Tuple[Library, List[Api], int]]) -> str:
    """The shim's hooks run after a call is recorded (a description's [after_call])."""
    rows = []
    for lib, apis, _ in libs:
        for glob, hook in sorted(lib.after_call.items()):
            funcs = [a.func.name for a in apis if fnmatch.fnmatchcase(a.func.name, glob)]
            if not funcs:
                raise GenError("%s: [after_call] %s names no wrapped function" % (lib.path, glob))
            rows += ["\t[DT_API_%s] = %s," % (func, hook) for func in funcs]
    return ("void (*const dt_after_call[DT_API_COUNT])(struct dt_thread *) = {\n%s\n};\n"
            % "\n".join(rows))


def h_file(libs: List[Library], apis: List[Api], banner: str) -> str:
    ids = "\n".join("\tDT_API_%s = %d," % (a.func.name, i) for i, a in enumerate(apis))
    hidden = '__attribute__((visibility("hidden")))'
    hooks = []
    for lib in libs:
        if lib.stream_getter:
            hooks.append("%s bool dt_stream_%s(void *handle, void **stream);" % (hidden, lib.name))
        if lib.version_call:
            hooks.append("%s uint64_t dt_version_%s(void);" % (hidden, lib.name))
    for fn in sorted({h for lib in libs for h in lib.after_call.values()}):
        hooks.append("%s void %s(struct dt_thread *t);" % (hidden, fn))
    names = ", ".join(lib.display for lib in libs)
    hooks = "\n".join(hooks)
    return f"""/* {banner} */
#ifndef DT_API_H
#define DT_API_H

#include <stdbool.h>
#include <stdint.h>

#define DT_API_COUNT {len(apis)}

/* Ids of the wrapped functions ({names}): each library's in name
 * (strcmp) order, the libraries in the order of dt_libraries. */
enum dt_api {{
{ids}
}};

/* dt_api_flags bits */
#define DT_API_DEPRECATED {DEPRECATED}u

/* Function names, argument signatures (trace/FORMAT.md, "Call arguments") and flags, by id. */
{hidden} extern const char *const dt_api_names[DT_API_COUNT];
{hidden} extern const char *const dt_api_sigs[DT_API_COUNT];
{hidden} extern const uint16_t dt_api_flags[DT_API_COUNT];

/* The wrapped libraries (dt_libraries, shim-runtime.h), what their rows
 * call, and the hooks the shim runs after some calls are recorded, by id
 * (NULL: none; the descriptions' [after_call]). */
#define DT_LIBRARY_COUNT {len(libs)}
struct dt_thread;
{hooks}
{hidden} extern void (*const dt_after_call[DT_API_COUNT])(struct dt_thread *t);

#endif /* DT_API_H */
"""


def map_file(libs: List[Tuple[Library, List[Api], int]], base: str, banner: str) -> str:
    """The version script: every wrapper by name under its library's node, then the rest."""
    nodes = []
    for i, (lib, apis, _) in enumerate(libs):
        names = "\n".join("    %s;" % a.func.name for a in apis)
        local = "\n  local:\n    *;" if i == 0 else ""
        nodes.append("%s {\n  global:\n%s%s\n};\n" % (lib.export_node, names, local))
    return "/* %s */\n\n%s\n%s" % (banner, "\n".join(nodes), base)


def listing(lib: Library, apis: List[Api], version: str) -> str:
    lines = ["# %s %s API as wrapped by dnntrace (generated by %s; do not edit)"
             % (lib.display, version, GENERATOR)]
    for api in apis:
        lines.append("%s(%s) -> %s%s" % (api.func.name, api.signature, api.ret_kind,
                                          " deprecated" if api.func.deprecated else ""))
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------- main


def generate_library(args, lib: Library, outputs: Dict[str, str]) -> Tuple[List[Api], int]:
    """One library's wrappers, listing and (when asked) enum table, into outputs; returns its
    APIs and its headers' version number."""
    include_dir = find_header(args.include_dir, lib.header)
    text, headers = preprocess(shlex.split(args.cc), args.include_dir, lib)
    ast = parse(text, lib.header)
    others = [o for o in args.prefixes if len(o) > len(lib.prefix) and o.startswith(lib.prefix)]
    functions, types = read_functions(ast, lib.prefix, others, lib.handle_types)
    if not functions:
        raise GenError("no %s* function found in %s" % (lib.prefix, lib.header))
    functions = sorted(functions + undeclared(lib, functions), key=lambda f: f.name)
    deprecated = deprecated_names(own_headers(headers, lib), lib)
    for func in functions:
        func.deprecated = func.name in deprecated
    version, version_number = header_version(headers, lib)
    rules = read_rules(lib.annotations)
    apis, errors = [], []
    for func in functions:
        try:
            apis.append(describe(lib, func, types, rules))
        except GenError as e:
            errors.append(str(e))
    errors += ["%s: stale line: no pointer parameter has it as its first match" % r.where
               for r in rules if not r.used]
    if errors and not args.keep_going:
        raise GenError("\n".join(errors))
    if errors:
        print("\n".join(errors), file=sys.stderr)
    banner = ("Generated by %s from %s/%s (%s %s) and %s; do not edit."
              % (GENERATOR, include_dir, lib.header, lib.display, version, lib.annotations))
    outputs[os.path.join(args.out_dir, "dt-wrappers-%s.c" % lib.name)] = c_file(
        lib, len(args.libs_done), apis, banner)
    outputs[os.path.join(args.out_dir, lib.listing)] = listing(lib, apis, version)
    if lib.name in args.enums:
        outputs[args.enums[lib.name]] = enums_file(
            read_enums(ast, lib.prefix), lib.enum_table,
            "Generated by %s from %s %s's headers; do not edit." % (GENERATOR, lib.display,
                                                                  version))
    return apis, version_number


def undeclared(lib: Library, declared: List[Function]) -> List[Function]:
    """The functions the library exports but its header lacks, each taking the parameters of a
    declared one (the description's [undeclared])."""
    by_name = {f.name: f for f in declared}
    out = []
    for like, names in sorted(lib.undeclared.items()):
        model = by_name.get(like)
        if model is None:
            raise GenError("%s: [undeclared] %s is not declared by %s" % (lib.path, like,
                                                                          lib.header))
        for name in names:
            if name in by_name:
                raise GenError("%s: [undeclared] %s is declared by %s" % (lib.path, name,
                                                                          lib.header))
            out.append(Function(name, model.ret, model.params, like=like))
    return out


def generate(args) -> Dict[str, str]:
    """The output files' contents, by path."""
    outputs: Dict[str, str] = {}
    libs = [read_library(path) for path in args.desc]
    if len({lib.name for lib in libs}) != len(libs):
        raise GenError("two descriptions name the same library")
    args.enums = dict(e.split("=", 1) for e in args.out_enums)
    args.prefixes = [lib.prefix for lib in libs]
    args.libs_done = []
    for lib in libs:
        apis, built = generate_library(args, lib, outputs)
        args.libs_done.append((lib, apis, built))
    all_apis = [a for _, apis, _ in args.libs_done for a in apis]
    twice = sorted({a.func.name for a in all_apis
                    if sum(b.func.name == a.func.name for b in all_apis) > 1})
    if twice:
        raise GenError("wrapped by two libraries: %s" % ", ".join(twice))
    if len(all_apis) > 65535:
        raise GenError("%d functions: API ids are 16 bits" % len(all_apis))
    banner = "Generated by %s from %s; do not edit." % (GENERATOR, ", ".join(args.desc))
    outputs[os.path.join(args.out_dir, "dt-api.c")] = api_c_file(args.libs_done, all_apis, banner)
    outputs[os.path.join(args.out_dir, "dt-api.h")] = h_file(libs, all_apis, banner)
    if args.map_base:
        with open(args.map_base, encoding="utf-8") as f:
            base = f.read()
        outputs[os.path.join(args.out_dir, "dt-exports.map")] = map_file(
            args.libs_done, base, "Generated by %s from %s and %s; do not edit."
            % (GENERATOR, ", ".join(args.desc), args.map_base))
    return outputs


def main() -> int:
    parser = argparse.ArgumentParser(description="Generate dnntrace's wrappers of the libraries "
                                     "it records, from their descriptions and headers.")
    parser.add_argument("--desc", action="append", required=True,
                        help="a library's description (shim/libs/NAME.toml); repeat for more "
                        "libraries, in API id order")
    parser.add_argument("--include-dir", action="append", required=True,
                        help="a directory to look for the libraries' headers in (repeatable)")
    parser.add_argument("--out-dir", required=True,
                        help="where to write dt-wrappers-NAME.c, dt-api.c, dt-api.h, the "
                        "listings and dt-exports.map")
    parser.add_argument("--map-base", help="the hand-written end of the version script")
    parser.add_argument("--out-enums", action="append", default=[], metavar="NAME=PATH",
                        help="write library NAME's enum name table for the analyzer to PATH")
    parser.add_argument("--keep-going", action="store_true",
                        help="report the functions that cannot be wrapped, wrap the others")
    parser.add_argument("--cc", default="cc",
                        help="C compiler command that preprocesses, with any flags it needs")
    args = parser.parse_args()
    try:
        outputs = generate(args)
    except GenError as e:
        print("%s: error: %s" % (os.path.basename(sys.argv[0]), e), file=sys.stderr)
        return 1
    for path, content in outputs.items():
        with open(path, "w", encoding="utf-8") as f:
            f.write(content)
    return 0


if __name__ == "__main__":
    sys.exit(main())
