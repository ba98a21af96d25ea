"""What the shim follows per object instead of asking the library on every call
(shim/shim-modes.c, shim/shim-streams.c): a [[pointer_mode]]'s mode, a [[scale_type]]'s type, a
handle's [stream]. Here are the lines the wrappers of the calls that create, set and destroy
those objects run, and the names dt-gen-wrappers.py gives the functions that ask them. Nothing
here reads a header or writes a whole wrapper."""

from __future__ import annotations

from typing import List, Tuple, Union

from dt_gen_desc import GenError, HandleStream, Library, PointerMode, ScaleType
from dt_gen_headers import Function


# A value the shim follows per object (shim-modes.c): a [[pointer_mode]]'s mode, a
# [[scale_type]]'s type. Both are kept, set and asked alike.
Followed = Union[PointerMode, ScaleType]


def followed(lib: Library) -> List[Followed]:
    return list(lib.pointer_modes) + list(lib.scale_types)


def what(f: Union[Followed, HandleStream]) -> str:
    if isinstance(f, HandleStream):
        return "stream"
    return "pointer mode" if isinstance(f, PointerMode) else "scale type"


def is_followed(f: Followed) -> bool:
    return bool(f.setter)


def mode_getter(f: Followed) -> str:
    return ("dt_mode_" if isinstance(f, PointerMode) else "dt_scale_") + f.of


def mode_setter(f: Followed) -> str:
    return ("dt_mode_set_" if isinstance(f, PointerMode) else "dt_scale_set_") + f.of


def mode_kind(lib: Library, f: Followed) -> str:
    """The number that tells the objects of this [[pointer_mode]] or [[scale_type]] from any
    other's in the shim's table (shim-runtime.h): the library's row and the table's place in
    it, pointer modes first, scale types from 8."""
    if isinstance(f, PointerMode):
        return "(DT_LIBRARY * 16 + %d)" % lib.pointer_modes.index(f)
    return "(DT_LIBRARY * 16 + 8 + %d)" % lib.scale_types.index(f)


def mode_arg(func: Function, f: Union[Followed, HandleStream], out: bool) -> str:
    """The parameter of func that is the object (`of`), or with out, that receives it."""
    for p in func.params:
        words = p.decl.replace("*", " * ").split()
        if words[0] == f.of and words.count("*") == (1 if out else 0):
            return p.name
    raise GenError("%s: no parameter of type %s%s for its %s"
                   % (func.name, f.of, " *" if out else "", what(f)))


def initial(func: Function, f: Followed) -> str:
    """What an object a call of func created holds: the [[pointer_mode]]'s default, or the
    [[scale_type]]'s argument of the call."""
    if isinstance(f, PointerMode):
        return f.default
    if not any(p.name == f.created_from and not p.is_pointer for p in func.params):
        raise GenError("%s: no parameter %s for its scale type" % (func.name, f.created_from))
    return "(int32_t)" + f.created_from


def created(func: Function, f: Followed) -> Tuple[str, str]:
    """The object a call of func made, and the condition, beside the call's success, that it
    was made: received through its parameter of type `of *`, else initialized in place, in the
    memory its parameter of type `of` points to (cuBLASLt's *Init_internal)."""
    try:
        out = mode_arg(func, f, True)
        return "*" + out, out
    except GenError:
        return mode_arg(func, f, False), ""


def mode_hooks(lib: Library, func: Function, ret_kind: str) -> Tuple[List[str], List[str]]:
    """The lines a wrapper runs, recording or not, before and after the real call, so that the
    shim follows the pointer modes and scale types of their objects (created_by, setter,
    forgotten_by; shim-modes.c), and its handles' streams (shim-streams.c)."""
    before, after = stream_hooks(lib, func, ret_kind)
    for f in followed(lib):
        roles = [func.name in f.created_by, func.name == f.setter,
                 func.name in f.forgotten_by]
        if not any(roles):
            continue
        if ret_kind != "status":
            raise GenError("%s: follows a %s, but returns no status" % (func.name, what(f)))
        kind, ok = mode_kind(lib, f), "ret == %s" % lib.success
        if roles[0]:
            obj, made = created(func, f)
            after.append("\tif (%s)" % " && ".join([ok] + ([made] if made else [])))
            after.append("\t\tdt_mode_learn(%s, %s, %s);" % (kind, obj, initial(func, f)))
        if roles[1]:
            nparams = 4 if f.attribute else 2
            if len(func.params) != nparams:
                raise GenError("%s: %s setter of %d parameters, not %d"
                               % (func.name, what(f), len(func.params), nparams))
            after.append("\t%s(%s, %s);" % (mode_setter(f), ok,
                                            ", ".join(p.name for p in func.params)))
        if roles[2]:
            before.append("\tdt_mode_forget(%s, %s);" % (kind, mode_arg(func, f, False)))
    return before, after


def stream_hooks(lib: Library, func: Function, ret_kind: str) -> Tuple[List[str], List[str]]:
    """The lines a wrapper runs, recording or not, before and after the real call, so that the
    shim follows its handles' streams ([stream]; shim-streams.c)."""
    st = lib.stream
    if not st:
        return [], []
    roles = [func.name in st.created_by, func.name == st.setter, func.name in st.forgotten_by]
    if not any(roles):
        return [], []
    if ret_kind != "status":
        raise GenError("%s: follows a handle's stream, but returns no status" % func.name)
    before, after, ok = [], [], "ret == %s" % lib.success
    if roles[0]:
        out = mode_arg(func, st, True)
        after += ["\tif (%s && %s)" % (ok, out),
                  "\t\tdt_stream_learn(DT_LIBRARY, *%s, NULL);" % out]
    if roles[1]:
        handle = mode_arg(func, st, False)
        if not any(p.name == st.setter_arg and p.decl.split()[0] == "cudaStream_t"
                   for p in func.params):
            raise GenError("%s: no parameter %s of type cudaStream_t" % (func.name, st.setter_arg))
        after += ["\tif (%s)" % ok,
                  "\t\tdt_stream_learn(DT_LIBRARY, %s, %s);" % (handle, st.setter_arg),
                  "\telse",
                  "\t\tdt_stream_forget(DT_LIBRARY, %s);" % handle]
    if roles[2]:
        before.append("\tdt_stream_forget(DT_LIBRARY, %s);" % mode_arg(func, st, False))
    return before, after


def c_mode_setter(lib: Library, f: Followed, funcs: List[Function]) -> str:
    """What its setter's wrapper runs once the real setter returned: the object's new value, or
    that its value is no longer known. funcs: the library's wrapped functions."""
    setter = next((func for func in funcs if func.name == f.setter), None)
    if setter is None:
        raise GenError("%s: %s setter %s is not a wrapped function"
                       % (lib.path, what(f), f.setter))
    kind = mode_kind(lib, f)
    params = setter.params
    if not f.attribute:
        of, mode = params[0].name, params[1].name
        body = f"""\tif (ok)
\t\tdt_mode_update({kind}, {of}, (int32_t){mode});
\telse
\t\tdt_mode_forget({kind}, {of});
"""
    else:
        of, attr, buf, size = (p.name for p in params)
        body = f"""\tint32_t value;

\tif ({attr} != {f.attribute})
\t\treturn;
\tif (ok && {buf} && {size} == sizeof(value)) {{
\t\tmemcpy(&value, {buf}, sizeof(value));
\t\tdt_mode_update({kind}, {of}, value);
\t}} else {{
\t\tdt_mode_forget({kind}, {of});
\t}}
"""
    return f"""/* After {f.setter}: the {what(f)} of the
 * {f.of} as set, or not known when the call failed. */
static void {mode_setter(f)}(int ok, {", ".join(p.decl for p in params)})
{{
{body}}}
"""
