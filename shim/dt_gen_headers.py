"""The headers of a library dt-gen-wrappers.py wraps, read: preprocessed by the C compiler,
parsed with pycparser into its functions (name, parameters, types) and enums, and the types
those name resolved into what a recorder needs to know of a value (Elem: a number, a pointer, a
struct, an opaque handle). Nothing here decides how an argument is recorded, nor writes code."""

from __future__ import annotations

import copy
import dataclasses
import os
import re
import subprocess
import tempfile
from typing import Dict, List, Optional, Set, Tuple

from pycparser import c_ast, c_generator, c_parser

from dt_gen_desc import GenError, Library

# GNU extensions pycparser cannot parse; they carry nothing the wrappers need.
NEUTRALIZE = [
    "-D__attribute__(...)=",
    "-D__extension__=",
    "-D__asm__(...)=",
    "-D__asm(...)=",
    "-D__restrict=",
    "-D__restrict__=",
    "-D__inline=inline",
    "-D__inline__=inline",
    # the C library's _FloatN types (<math.h>, which cuBLAS's headers include)
    "-D_Float128=long double",
    "-D_Float64x=long double",
    "-D_Float64=double",
    "-D_Float32x=double",
    "-D_Float32=float",
    "-D__builtin_va_list=void *",
]


# --------------------------------------------------------------------------- element types


@dataclasses.dataclass(frozen=True)
class Elem:
    """What a value (a by-value argument, or what a pointer points to) is, for recording."""

    kind: str  # "scalar", "pointer", "struct", "void", "char" or "opaque"
    code: str = ""  # signature code: "i4", "e=cudnnDataType_t", "p", "x=cudnnFooPerf_t"
    ctype: str = ""  # C type name, for sizeof()


POINTER = Elem("pointer", "p", "void *")
VOID = Elem("void")
CHAR = Elem("char")

# Base code -> (bytes, store function, cast applied to the value).
ENCODINGS = {
    "i4": (4, "dt_put_i32", ""),
    "u4": (4, "dt_put_u32", ""),
    "i8": (8, "dt_put_i64", ""),
    "u8": (8, "dt_put_u64", ""),
    "f4": (4, "dt_put_f32", ""),
    "f8": (8, "dt_put_f64", ""),
    "e": (4, "dt_put_i32", "(int32_t)"),
    "p": (8, "dt_put_ptr", ""),
}

# Builtin arithmetic types on LP64 hosts, keyed by their sorted type specifiers
# ("signed" and a redundant "int" dropped).
BUILTIN_CODES = {
    ("int",): "i4",
    ("short",): "i2",  # the members of numbers' structs (__half's stand-in) only: no encoding
    ("short", "unsigned"): "u2",
    ("unsigned",): "u4",
    ("long",): "i8",
    ("long", "long"): "i8",
    ("long", "unsigned"): "u8",
    ("long", "long", "unsigned"): "u8",
    ("char", "unsigned"): "u1",  # the element of a device array only: no encoding
    ("float",): "f4",
    ("double",): "f8",
}

INTEGER_CODES = {"i4", "u4", "i8", "u8"}


def base_code(code: str) -> str:
    return code.split("=", 1)[0]


def builtin_key(names: List[str]) -> Tuple[str, ...]:
    words = [w for w in names if w != "signed"]
    if len(words) > 1:
        words = [w for w in words if w != "int"]
    return tuple(sorted(words or ["int"]))


class Types:
    """Resolves the typedefs and structs of the parsed headers into Elems."""

    def __init__(self, ast: c_ast.FileAST, handles: List[str]):
        self.handles = set(handles)  # typedefs of pointers to complete structs kept as handles
        self.typedefs: Dict[str, c_ast.Typedef] = {}
        self.complete: Set[str] = set()
        self.members: Dict[str, List[c_ast.Node]] = {}  # complete struct tag -> member types
        for node in ast.ext:
            if isinstance(node, c_ast.Typedef):
                self.typedefs[node.name] = node
            spec = node
            while isinstance(spec, (c_ast.Decl, c_ast.Typedef, c_ast.TypeDecl, c_ast.PtrDecl)):
                spec = spec.type
            if isinstance(spec, c_ast.Struct) and spec.decls is not None:
                self.complete.add(spec.name)
                self.members[spec.name] = [d.type for d in spec.decls]

    def elem(self, node) -> Elem:
        """The Elem of a value of type `node` (a TypeDecl, PtrDecl or FuncDecl)."""
        if isinstance(node, (c_ast.PtrDecl, c_ast.FuncDecl)):
            return POINTER
        if not isinstance(node, c_ast.TypeDecl):
            raise GenError("unsupported type %s" % type_text(node))
        spec = node.type
        if isinstance(spec, c_ast.Enum):
            return Elem("scalar", "e=enum " + spec.name, "enum " + spec.name)
        if isinstance(spec, c_ast.Struct):
            return self._struct(spec.name, "struct " + spec.name)
        names = spec.names
        if names == ["void"]:
            return VOID
        if names == ["char"]:
            return CHAR
        key = builtin_key(names)
        if key in BUILTIN_CODES:
            return Elem("scalar", BUILTIN_CODES[key], " ".join(names))
        if len(names) == 1 and names[0] in self.typedefs:
            return self._typedef(names[0])
        raise GenError("unsupported type %s" % " ".join(names))

    def _typedef(self, name: str) -> Elem:
        target = self.typedefs[name].type
        if isinstance(target, c_ast.PtrDecl):
            if name not in self.handles and not self._opaque(target.type):
                raise GenError("typedef %s points to a complete type" % name)
            return POINTER
        if isinstance(target, c_ast.FuncDecl):
            return POINTER
        spec = target.type
        if isinstance(spec, c_ast.Enum):
            return Elem("scalar", "e=" + name, name)
        if isinstance(spec, c_ast.Struct):
            return self._struct(spec.name, name)
        inner = self.elem(target)
        return dataclasses.replace(inner, ctype=name) if inner.kind == "scalar" else inner

    def _struct(self, tag: Optional[str], ctype: str) -> Elem:
        if tag is None or tag in self.complete:
            return Elem("struct", "x=" + ctype, ctype)
        return Elem("opaque", "", ctype)

    def is_number(self, elem: Elem) -> bool:
        """Whether a value is a number: a scalar, or a struct of scalars (a complex number,
        cuComplex)."""
        if elem.kind == "scalar":
            return True
        if elem.kind != "struct":
            return False
        name = elem.ctype
        for _ in range(8):  # typedef chains: cuComplex -> cuFloatComplex -> float2
            if name.startswith("struct "):
                members = self.members.get(name[len("struct "):])
                break
            target = self.typedefs[name].type.type if name in self.typedefs else None
            if isinstance(target, c_ast.Struct):
                members = (self.members.get(target.name) if target.name
                           else [d.type for d in target.decls or []])
                break
            if not (isinstance(target, c_ast.IdentifierType) and len(target.names) == 1):
                return False
            name = target.names[0]
        else:
            return False
        try:
            return bool(members) and all(self.elem(m).kind == "scalar" for m in members)
        except GenError:
            return False

    def _opaque(self, node) -> bool:
        """Whether a pointer to `node` is a handle: to void, a function or an incomplete struct."""
        if isinstance(node, c_ast.FuncDecl):
            return True
        return isinstance(node, c_ast.TypeDecl) and self.elem(node).kind in ("void", "opaque")


def type_text(node) -> str:
    """The C type of a declarator with its name left out, e.g. `const int[]`."""
    node = copy.deepcopy(node)
    inner = node
    while not isinstance(inner, c_ast.TypeDecl):
        inner = inner.type
    inner.declname = None
    return c_generator.CGenerator().visit(node).replace(" [", "[")


# --------------------------------------------------------------------------- headers


@dataclasses.dataclass
class Param:
    """One parameter of a wrapped function, as declared."""

    name: str
    decl: str  # `const int dimA[]`
    abstract: str  # `const int[]`
    node: c_ast.Node  # the declarator's type node
    is_pointer: bool  # declared as a pointer or array (annotations apply to these only)


@dataclasses.dataclass
class Function:
    """One wrapped function, as declared."""

    name: str
    ret: c_ast.Node
    params: List[Param]
    deprecated: bool = False
    like: str = ""  # not declared by the header: the declared function whose parameters it takes


def find_header(include_dirs: List[str], header: str) -> str:
    """The directory of include_dirs that holds header (the first)."""
    for d in include_dirs:
        if os.path.isfile(os.path.join(d, header)):
            return d
    raise GenError("%s is in none of %s" % (header, ", ".join(include_dirs)))


CPLUSPLUS_IF = re.compile(r"\s*#\s*if\s+defined\s*\(?\s*__cplusplus\s*\)?\s*")
PREPROCESSOR_IF = re.compile(r"\s*#\s*if")
PREPROCESSOR_ENDIF = re.compile(r"\s*#\s*endif")
NOT_DECLARATIONS = re.compile(r"[{}]|#\s*el|\bextern\b|\binline\b|\btemplate\b|\bclass\b")


def unguarded(path: str) -> str:
    """The header's text with its blocks of function declarations for C++ only (between
    `#if defined(__cplusplus)` and its `#endif`: no braces, no extern "C", no inline code) open
    to C as well."""
    with open(path, encoding="utf-8", errors="replace") as f:
        lines = f.read().split("\n")
    for i, line in enumerate(lines):
        if not CPLUSPLUS_IF.fullmatch(line):
            continue
        depth, end = 1, None
        for j in range(i + 1, len(lines)):
            depth += bool(PREPROCESSOR_IF.match(lines[j])) - bool(PREPROCESSOR_ENDIF.match(lines[j]))
            if depth == 0:
                end = j
                break
        body = "\n".join(lines[i + 1:end or i])
        if end is not None and "(" in body and not NOT_DECLARATIONS.search(body):
            lines[i] = "#if 1 /* dt-gen-wrappers.py: for C++ only, read as C */"
    return "\n".join(lines)


def preprocess(cc: List[str], include_dirs: List[str], lib: Library) -> Tuple[str, List[str]]:
    """Preprocess the library's header; return the text and the headers it read."""
    include_dir = os.path.abspath(find_header(include_dirs, lib.header))
    with tempfile.TemporaryDirectory() as tmp:
        # Included by path, so that the header and those it includes with quotes come from
        # include_dir even when the compiler's own flags name another copy; the headers whose
        # C++-only declarations are read go through copies, beside a copy of the header.
        top = os.path.join(include_dir, lib.header)
        copies = {}
        if lib.cplusplus_unguard:
            for name in [lib.header] + lib.cplusplus_unguard:
                copies[os.path.join(tmp, name)] = os.path.join(include_dir, name)
                with open(os.path.join(tmp, name), "w", encoding="utf-8") as f:
                    f.write(unguarded(os.path.join(include_dir, name)))
            top = os.path.join(tmp, lib.header)
        source = "".join(s + "\n" for s in lib.stand_ins) + '#include "%s"\n' % top
        deps = os.path.join(tmp, "deps")
        cmd = cc + ["-E", "-P", "-MD", "-MF", deps]
        dirs = [include_dir] + [d for d in include_dirs if d != include_dir]
        cmd += [a for d in dirs for a in ("-I", d)] + NEUTRALIZE
        cmd += ["-x", "c", "-"]
        try:
            proc = subprocess.run(cmd, input=source, capture_output=True, text=True, check=False)
        except OSError as e:
            raise GenError("cannot run %s: %s" % (cc[0], e)) from e
        if proc.returncode != 0:
            raise GenError("%s failed:\n%s" % (" ".join(cmd), proc.stderr))
        with open(deps, encoding="utf-8") as f:
            files = f.read().replace("\\\n", " ").split(":", 1)[1].split()
    return proc.stdout, [copies.get(f, f) for f in files]


def own_headers(headers: List[str], lib: Library) -> List[str]:
    """The library's headers: those whose file name starts with its prefix."""
    stem = lib.prefix.lower()
    return [f for f in headers if os.path.basename(f).lower().startswith(stem)]


def parse(text: str, header: str) -> c_ast.FileAST:
    try:
        return c_parser.CParser().parse(text, "<%s preprocessed>" % header)
    except c_parser.ParseError as e:
        raise GenError("pycparser cannot parse the preprocessed headers: %s" % e) from e


def read_functions(ast: c_ast.FileAST, prefix: str, others: List[str],
                   handles: List[str]) -> Tuple[List[Function], Types]:
    """Every function declared with a name starting with prefix, but not with one of others (the
    longer prefixes of other libraries: cublasLt's functions are not cuBLAS's), sorted by
    name."""
    functions = {}
    for node in ast.ext:
        if (isinstance(node, c_ast.Decl) and isinstance(node.type, c_ast.FuncDecl)
                and node.name.startswith(prefix)
                and not any(node.name.startswith(o) for o in others)):
            params = read_params(node.name, node.type)
            functions[node.name] = Function(node.name, node.type.type, params)
    return [functions[name] for name in sorted(functions)], Types(ast, handles)


def enum_value(node, known: Dict[str, int]) -> int:
    """The value of an enumerator's constant expression (integers, names of
    earlier enumerators, unary minus and the usual binary operators)."""
    if isinstance(node, c_ast.Constant):
        return int(node.value.rstrip("uUlL"), 0)
    if isinstance(node, c_ast.ID) and node.name in known:
        return known[node.name]
    if isinstance(node, c_ast.UnaryOp) and node.op in ("-", "+", "~"):
        v = enum_value(node.expr, known)
        return {"-": -v, "+": v, "~": ~v}[node.op]
    if isinstance(node, c_ast.BinaryOp):
        a, b = enum_value(node.left, known), enum_value(node.right, known)
        ops = {"+": a + b, "-": a - b, "*": a * b, "<<": a << b, ">>": a >> b,
               "|": a | b, "&": a & b}
        if node.op in ops:
            return ops[node.op]
    if isinstance(node, c_ast.Cast):
        return enum_value(node.expr, known)
    raise GenError("cannot evaluate enumerator value %s" % c_generator.CGenerator().visit(node))


def read_enums(ast: c_ast.FileAST, prefix: str) -> List[Tuple[str, str, int]]:
    """(type, enumerator, value) of every enum typedef'd with a name starting with prefix
    (whose values may name other enums' enumerators: cuBLASLt's pointer modes, cuBLAS's)."""
    out, known = [], {}
    for node in ast.ext:
        if not (isinstance(node, c_ast.Typedef) and isinstance(node.type, c_ast.TypeDecl)
                and isinstance(node.type.type, c_ast.Enum)):
            continue
        value = -1
        for e in node.type.type.values.enumerators if node.type.type.values else []:
            value = enum_value(e.value, known) if e.value is not None else value + 1
            known[e.name] = value
            if node.name.startswith(prefix):
                out.append((node.name, e.name, value))
    return sorted(out, key=lambda t: (t[0], t[2], t[1]))


def enums_file(enums: List[Tuple[str, str, int]], table: str, banner: str) -> str:
    """The analyzer's table of a library's enum names (C, no CUDA header needed)."""
    rows = ['\t{ "%s", "%s", %d },' % e for e in enums]
    return ("/* clang-format off */\n/* %s */\n#include \"dt-analyzer.h\"\n\n"
            "const struct dt_enum_name %s[] = {\n%s\n};\n"
            "const size_t %s_count = %d;\n"
            % (banner, table, "\n".join(rows), table, len(enums)))


def read_params(name: str, func: c_ast.FuncDecl) -> List[Param]:
    params = func.args.params if func.args else []
    if len(params) == 1 and params[0].name is None and type_text(params[0].type) == "void":
        return []
    if any(p.name is None for p in params):
        raise GenError("%s: unnamed parameter" % name)
    gen = c_generator.CGenerator()
    return [Param(p.name, gen.visit(p).replace(" [", "["), type_text(p.type), p.type,
                  isinstance(p.type, (c_ast.PtrDecl, c_ast.ArrayDecl)))
            for p in params]


def deprecated_names(headers: List[str], lib: Library) -> Set[str]:
    """Functions declared after the library's deprecation macro, which preprocessing removes."""
    names = set()
    if not lib.deprecated_macro:
        return names
    for path in headers:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        text = re.sub(r"/\*.*?\*/|//[^\n]*", " ", text, flags=re.S)
        text = re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", " ", text, flags=re.M)
        for statement in re.split(r"[;{}]", text):
            if re.search(r"\b%s\b" % re.escape(lib.deprecated_macro), statement):
                m = re.search(r"\b(%s\w+)\s*\(" % re.escape(lib.prefix), statement)
                if m:
                    names.add(m.group(1))
    return names


def header_version(headers: List[str], lib: Library) -> Tuple[str, int]:
    """The library's version from its version header: ("9.19.0", 91900), the parts joined by
    dots and weighed by the description's scale."""
    path = next((h for h in headers if os.path.basename(h) == lib.version_header), None)
    if path is None:
        raise GenError("%s did not include %s" % (lib.header, lib.version_header))
    with open(path, encoding="utf-8", errors="replace") as f:
        defines = dict(re.findall(r"^\s*#\s*define\s+(\w+)\s+(\d+)\s*$", f.read(), re.M))
    try:
        parts = [int(defines[k]) for k in lib.version_macros]
    except KeyError as e:
        raise GenError("%s defines no %s" % (path, e.args[0])) from e
    return (".".join(str(v) for v in parts),
            sum(v * w for v, w in zip(parts, lib.version_scale)))
