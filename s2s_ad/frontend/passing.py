"""Structures passed whole to helpers: flattened at the call, rebuilt inside.

Contract: a tuple, list, dict, dataclass or NamedTuple known while lowering
(built in the caller, or a structure parameter of it, nested in any way)
passed to a user function — ``helper(xs)``, ``forward(params, x)``, and the
tuple a ``*args`` parameter collects or the dict of a ``**kwargs`` one — is
never one value in the IR. At the call, :func:`flatten` turns it into a
*spec* (its shape: keys, fields, classes, lengths, and the kind of each
leaf) and its leaves; the call op passes the leaves as operands of their
own. The helper is lowered for that spec (:func:`params`): each leaf is a
parameter of its own (a number, an integer or an array), and the name the
helper's source uses is bound to the same structure of those parameters, so
``xs[0]``, ``p["w"]``, ``layer.W``, ``len(xs)``, loops and unpacking resolve
while lowering, as they do in the caller. Leaves that are constants (a
number, a string, None, a bool) are constants of the helper's lowering.

The pair (or inlined lines) therefore has one parameter per leaf, and its
backward function one adjoint per leaf: nothing of the structure reaches the
reverse sweep. A helper called with structures of another spec gets another
pair (the spec is part of the specialisation key, :func:`s2s_ad.frontend.
calls.key`).

Spec grammar::

    node := ("leaf", kind)                           kind: float, int, array
          | ("const", value)                         a number, str, None, bool
          | ("list" | "tuple", (node, ...))
          | ("dict", ((key, node), ...))
          | ("object", cls, ((field, node), ...))    dataclass or NamedTuple

Before → after, for ``def helper(xs): return xs[0] * xs[2]`` called as
``helper([a, b, a * b])``::

    t1 = mul a b                       func helper(xs_0, xs_1, xs_2):
    helper_1 = call helper(a, b, t1)     out = mul xs_0 xs_2
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import numbers

from s2s_ad import ir
from s2s_ad.frontend import pair_layout, runtime_lists, statics, structures
from s2s_ad.frontend.numpy import annotated_numbers
from s2s_ad.frontend.structures import StaticDict, StaticList, StaticObject

LEAF_KINDS = ("float", "int", "array")


def runtime_list(lo, value) -> bool:
    """Is ``value`` a list of any length (a list parameter read when the code
    runs, or a list grown at run time), in code of numbers? It is passed to a
    helper as one value, which the helper reads by index, ``len``, ``sum``
    and loops when it runs."""
    return (isinstance(value, ir.Value) and value.kind in ("list", "tuple")
            and (structures.is_runtime(lo, value) or runtime_lists.is_grown(lo, value)))


def spec_size(spec) -> int:
    """The nodes of the specs of the structures a call passes (``op.callee.passed``):
    a part of a structure has fewer than the whole, so a recursion passing
    parts ends (:mod:`s2s_ad.frontend.calls`)."""
    if not isinstance(spec, tuple):
        return 0
    return 1 + sum(spec_size(x) for x in spec if isinstance(x, tuple))


def is_passed(value) -> bool:
    """Is ``value`` (an argument lowered at a call) a structure passed whole?"""
    return structures.is_structure(value)


def flatten(lo, value, node: ast.AST, what: str) -> tuple:
    """``(spec, leaves)`` of the structure ``value``, an argument of the call
    ``node`` to ``what``; refuses, located, what cannot be passed."""
    leaves: list[ir.Operand] = []

    def walk(v):
        if isinstance(v, ir.Const):
            if isinstance(v.value, numbers.Number) or statics.is_static_value(v.value):
                return ("const", v.value)
            raise lo.src.error(node, f"`{what}` is passed a structure holding "
                               f"{type(v.value).__name__} {v.value!r}")
        if isinstance(v, ir.Value):
            if v.kind not in LEAF_KINDS:
                raise lo.src.error(node, f"`{what}` is passed a structure holding "
                                   f"{structures.describe(v)}: only numbers, arrays and "
                                   "structures of them known while lowering are passed inside "
                                   "a structure; pass it as an argument of its own")
            leaves.append(v)
            return ("leaf", v.kind)
        if isinstance(v, tuple):
            return ("tuple", tuple(walk(x) for x in v))
        if isinstance(v, StaticList):
            return ("list", tuple(walk(x) for x in v.items))
        if isinstance(v, StaticDict):
            for k in v.items:
                if not isinstance(k, str):
                    raise lo.src.error(node, f"`{what}` is passed a dict with the key {k!r}; "
                                       "keys are constant strings")
            return ("dict", tuple((k, walk(x)) for k, x in v.items.items()))
        if isinstance(v, StaticObject):
            return ("object", v.cls, tuple((k, walk(x)) for k, x in v.items.items()))
        raise lo.src.error(node, f"`{what}` is passed {structures.describe(v)} inside a "
                           "structure; only numbers, arrays and structures of them are")

    return walk(value), leaves


def returned(lo, value, node: ast.AST) -> tuple:
    """``(spec, leaves)`` of a structure a helper returns: every number,
    array or bool in it is a leaf (one output of the helper's pair); a
    string, None or constant bool is a ``("const", value)`` node of the spec,
    the caller's constant. A bool leaf (a recorded decision in the tape s2s-ad's own
    ``H_fwd`` returns beside lists) is read by the caller as a number, as an
    item of a flat returned tuple is: ``if c:`` on it is refused, located,
    and a test ``c != 0.0`` has the same truth."""
    leaves: list[ir.Operand] = []

    def walk(v):
        if isinstance(v, ir.Const) and isinstance(v.value, numbers.Number) \
                or isinstance(v, ir.Value) and v.kind in LEAF_KINDS + ("bool",):
            leaves.append(v)
            return ("leaf", getattr(v, "kind", "float"))
        if isinstance(v, ir.Const) and statics.is_static_value(v.value):
            # a string, None or bool (`Layer(W, b)` with `act="tanh"` by default):
            # known while lowering, read by the caller as the constant it is
            return ("const", v.value)
        if isinstance(v, ir.Value) and v.kind == "list":
            # a list of any length (a tape s2s-ad's own H_fwd returns beside
            # a value that is a tuple): an output of its own, as in a flat tuple
            runtime_lists.returned(lo, v, node)
            leaves.append(v)
            return ("leaf", "list")
        if isinstance(v, tuple):
            return ("tuple", tuple(walk(x) for x in v))
        if isinstance(v, StaticList):
            return ("list", tuple(walk(x) for x in v.items))
        if isinstance(v, StaticDict):
            return ("dict", tuple((k, walk(x)) for k, x in v.items.items()))
        if isinstance(v, StaticObject):
            return ("object", v.cls, tuple((k, walk(x)) for k, x in v.items.items()))
        raise lo.src.error(node, f"returning a structure holding {structures.describe(v)} is "
                           "not supported; return numbers, arrays and structures of them")

    return walk(value), leaves


def is_flat(value) -> bool:
    """A tuple or list of numbers: returned as the plain tuple of a pair."""
    items = value if isinstance(value, tuple) else getattr(value, "items", None)
    return isinstance(value, (tuple, StaticList)) and not any(
        structures.is_structure(x) for x in items)


def written_returns(tree: ast.FunctionDef, kind: str):
    """The spec of the nested tuples every ``return`` of ``tree`` writes out
    (``return (a, b), (da, db)``, as a JVP module's recursive helper does),
    its leaves of ``kind``; None unless every return writes the same nesting
    of tuples with a tuple in it. A recursive call reads its callee's result
    by it before the callee is lowered (the call graph checks that the
    lowering returns the same, :func:`same_shape`)."""
    def spec(e):
        if isinstance(e, ast.Tuple) and not any(isinstance(x, ast.Starred) for x in e.elts):
            return ("tuple", tuple(spec(x) for x in e.elts))
        return ("leaf", kind)

    found, todo = set(), list(tree.body)
    while todo:
        node = todo.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(node, ast.Return):
            found.add(spec(node.value) if node.value is not None else None)
        todo.extend(ast.iter_child_nodes(node))
    if len(found) != 1:
        return None
    (only,) = found
    nested = only is not None and only[0] == "tuple" and any(x[0] == "tuple" for x in only[1])
    return only if nested else None


def same_shape(a, b) -> bool:
    """Do two returned specs nest alike, whatever their leaves' kinds (a caller
    reads each leaf with the kind its own code gives it)?"""
    if a is None or b is None or a[0] == "leaf" or b[0] == "leaf":
        return a == b or (a is not None and b is not None and a[0] == b[0] == "leaf")
    if a[0] != b[0] or len(a[1:]) != len(b[1:]):
        return False
    if a[0] in ("tuple", "list"):
        return len(a[1]) == len(b[1]) and all(same_shape(x, y) for x, y in zip(a[1], b[1]))
    return a == b


def rebuild(lo, out: ir.Value, spec, node: ast.AST):
    """The structure a call returns (``out``, its tuple of leaves), read
    leaf by leaf with ``item`` ops: ``d = helper(x)`` binds ``d`` to it."""
    k = 0

    def build(s):
        nonlocal k
        if s[0] == "leaf":
            k += 1
            return structures.item(lo, out, k - 1, node)
        if s[0] == "const":
            return ir.Const(s[1])
        if s[0] == "dict":
            d = StaticDict()
            for key, sub in s[1]:
                d.items[key] = build(sub)
            return d
        if s[0] in ("list", "tuple"):
            items = [build(sub) for sub in s[1]]
            return StaticList(items) if s[0] == "list" else tuple(items)
        obj = StaticObject(s[1])
        for fname, sub in s[2]:
            obj.items[fname] = build(sub)
        return obj

    out.kind = "tuple"
    return build(spec)


def record_class(cls) -> list[str] | None:
    """The fields of a NamedTuple or dataclass class (every one in its
    ``__init__``), else None."""
    if not isinstance(cls, type):
        return None
    if issubclass(cls, tuple) and hasattr(cls, "_fields"):
        return list(cls._fields)
    if dataclasses.is_dataclass(cls):
        fs = dataclasses.fields(cls)
        return None if any(not f.init for f in fs) else [f.name for f in fs]
    return None


def construct(lo, cls, node: ast.Call):
    """``Layer(W, b)``, ``Params(w=w, b=b)``: a NamedTuple or dataclass built
    in the function, known while lowering (its fields are the operands)."""
    names = record_class(cls)
    args = [lo.expr(a) for a in node.args]
    kwargs = {k.arg: lo.expr(k.value) for k in node.keywords}
    try:
        bound = inspect.signature(cls).bind(*args, **kwargs)
    except TypeError as exc:
        raise lo.src.error(node, f"`{ast.unparse(node.func)}(...)`: {exc}") from None
    bound.apply_defaults()
    obj = StaticObject(cls)
    for name in names:
        value = bound.arguments[name]
        if not isinstance(value, (ir.Value, ir.Const)) and not structures.is_structure(value):
            if not isinstance(value, numbers.Number) and not statics.is_static_value(value):
                raise lo.src.error(node, f"`{cls.__name__}`: the default of field {name!r} is "
                                   f"{type(value).__name__}; give it a number or an array")
            value = ir.Const(value)
        obj.items[name] = value
    return obj


def count(spec) -> int:
    """How many leaves (operands) a structure of ``spec`` passes."""
    if spec[0] in ("leaf", "runtime"):
        return 1
    if spec[0] == "const":
        return 0
    if spec[0] in ("list", "tuple"):
        return sum(count(s) for s in spec[1])
    subs = spec[2] if spec[0] == "object" else spec[1]
    return sum(count(s) for _, s in subs)


def holds_array(spec) -> bool:
    if spec[0] == "leaf":
        return spec[1] == "array"
    if spec[0] in ("const", "runtime"):
        return False
    if spec[0] in ("list", "tuple"):
        return any(holds_array(s) for s in spec[1])
    subs = spec[2] if spec[0] == "object" else spec[1]
    return any(holds_array(s) for _, s in subs)


def params(lo, node: ast.arg, spec, kwonly: bool) -> list[ir.Param]:
    """The parameters a helper's parameter ``node`` receiving a structure of
    ``spec`` becomes: one per leaf (named after its path, ``xs_0``,
    ``p_w``), with the name bound to the structure of them."""
    out: list[ir.Param] = []
    if spec[0] == "runtime":
        # one value, read by index, len, sum and loops when the code runs (in
        # NumPy code too: its items are then numbers or arrays)
        value = ir.Value(lo.namer.claim(node.arg), spec[1], node.arg)
        lo.env[node.arg] = value
        param = ir.Param(value, None, False, kwonly)
        lo.seq_params[id(value)] = param
        return [param]

    def build(s, path: str):
        if s[0] == "leaf":
            v = ir.Value(lo.namer.fresh(path), s[1], None)
            out.append(ir.Param(v, None, False, kwonly))
            return v
        if s[0] == "const":
            return ir.Const(s[1])
        if s[0] == "dict":
            d = StaticDict()
            for key, sub in s[1]:
                d.items[key] = build(sub, f"{path}_{_ident(key)}")
            return d
        if s[0] in ("list", "tuple"):
            items = [build(sub, f"{path}_{i}") for i, sub in enumerate(s[1])]
            return StaticList(items) if s[0] == "list" else tuple(items)
        obj = StaticObject(s[1])
        for fname, sub in s[2]:
            obj.items[fname] = build(sub, f"{path}_{fname}")
        return obj

    lo.env[node.arg] = build(spec, node.arg)
    return out


def _ident(key: str) -> str:
    out = "".join(c if c.isalnum() or c == "_" else "_" for c in key)
    return out if out and not out[0].isdigit() else f"k{out}"


def operand_names(op: ir.Op) -> list:
    """The callee's parameter each operand of ``op`` is given to (None for
    the leaves of a structure passed whole)."""
    passed = dict(op.callee.passed)
    out: list = []
    sig = pair_layout.signature(op.callee.fn) or inspect.signature(op.callee.fn)  # H_bwd: tape split
    for name in sig.parameters:
        if name in passed:
            out += [None] * count(passed[name])
        else:
            out.append(name)
    return out


def array_arguments(op: ir.Op) -> frozenset:
    """The parameters of ``op``'s callee that receive an array, or a value
    that may be one (``op.args`` are in the callee's parameter order); a
    parameter annotated as a number takes it as one. A structure passed
    whole holding an array counts as one."""
    fn = op.callee.fn
    names = operand_names(op)
    held = {n for n, spec in op.callee.passed if holds_array(spec)}
    return frozenset(held) | (frozenset(n for n, a in zip(names, op.args) if n is not None
                                        and isinstance(a, ir.Value) and a.kind == "array")
                              - annotated_numbers(fn))


def static_arguments(op: ir.Op) -> dict:
    """The parameters of ``op``'s callee given a string, None or a bool (in
    parameter order): the helper is lowered for those values."""
    names = operand_names(op)
    return {n: a.value for n, a in zip(names, op.args)
            if n is not None and isinstance(a, ir.Const) and statics.is_static_value(a.value)}
