"""Tuples, lists and dicts of numbers, resolved while lowering.

Contract: a structure built inside a differentiated function — a tuple, a
list (literal, ``append``, a comprehension over ``range`` with constant
bounds or over another list), a dict with constant string keys — never
reaches the IR. The frontend keeps it as a Python container of SSA operands
(:class:`StaticList`, :class:`StaticDict`, or a plain tuple), so indexing with
a constant, ``len``, ``sum`` and unpacking resolve to the operands themselves
and the IR stays scalar. Anything whose shape would depend on run-time values
(an index computed from a float, a comprehension over ``range(n)`` with a
parameter ``n``) is refused with a location.

Before → after::

    def f(x, y):                          func f(x, y):
        xs = [x * i for i in range(3)]      t1 = mul x 0
        xs.append(y)                        t2 = mul x 1
        return sum(xs) + xs[-1]             t3 = mul x 2
                                            ...   (sum: three adds; xs[-1] is y)

A tuple returned by a *call* to a user function is the exception: it is one
IR value of kind ``"tuple"``, and ``a, b = helper(x)`` reads its items with
``item`` ops (so the helper's pair is still called once).
"""

from __future__ import annotations

import ast
import builtins
import copy
import numbers
import types
from dataclasses import dataclass, field

from s2s_ad import ir
from s2s_ad.errors import SourceError
from s2s_ad.frontend import param_uses
from s2s_ad.syntax_walk import walk


@dataclass(eq=False)
class StaticList:
    """A Python list whose length is known while lowering. Mutable, like the
    list it stands for: ``ys = xs; xs.append(v)`` changes ``ys`` too."""

    items: list = field(default_factory=list)


def joined(lo, node: ast.BinOp, left, right):
    """``left + right`` of two lists (or two tuples) known while lowering:
    the joined list (tuple); None for anything else. A tuple a call returned
    (``pair(x, y) + (z,)``, ``pair(x, y) + pair(y, x)``, ``r + (z,)`` for
    ``r = pair(x, y)``) is joined as the tuple of its items where the other
    operand is a tuple too (Python adds a tuple to nothing else)."""
    if not isinstance(node.op, ast.Add):
        return None
    if isinstance(left, StaticList) and isinstance(right, StaticList):
        return StaticList(left.items + right.items)
    for value, side, other in ((left, node.left, right), (right, node.right, left)):
        if isinstance(other, StaticList):
            # `[a] + xs`: a parameter joined to a list is a list (lowered as a
            # number until the code says otherwise, then again as one)
            _param_used_as_sequence(lo, value, side)
    if type(left) is not tuple and _flat_tuple(lo, left) and (
            type(right) is tuple or _flat_tuple(lo, right)):
        left = forwarded(lo, left, node.left)
    if type(right) is not tuple and _flat_tuple(lo, right) and type(left) is tuple:
        right = forwarded(lo, right, node.right)
    if type(left) is tuple and type(right) is tuple:
        return left + right
    return None


def refuse_tuple_arithmetic(lo, node: ast.BinOp, left, right) -> None:
    """Refuse, located, arithmetic on the tuple a call returned that
    :func:`joined` did not join (``pair(x, y) + 1.0``, ``pair(x, y) * 2``)."""
    for operand, value in ((node.left, left), (node.right, right)):
        if _flat_tuple(lo, value):
            n = lo.__dict__["tuple_calls"][id(value)]
            what = f"`{ast.unparse(operand)}` returns {n} values (a tuple)"
            if not isinstance(operand, ast.Call):  # `z = pair(x, y)`, then `z * 2.0`
                what = f"`{ast.unparse(operand)}` holds the {n} values a call returned (a tuple)"
            raise lo.src.error(operand, f"{what}, used here in arithmetic; unpack them "
                               "(`a, b = ...`) or index the result (a tuple joins another tuple "
                               "with `+`)")


def _flat_tuple(lo, value) -> bool:
    """Is ``value`` the flat tuple a call returned (its length known, no list
    of any length among its items)?"""
    return isinstance(value, ir.Value) and id(value) in lo.__dict__.get("tuple_calls", {}) \
        and not lo.__dict__.get("list_items", {}).get(id(value))


@dataclass(eq=False)
class StaticDict:
    items: dict = field(default_factory=dict)


@dataclass(eq=False)
class StaticObject:
    """A dataclass or NamedTuple instance (a parameter's, frontend/pytrees.py)
    while lowering: its fields."""

    cls: type
    items: dict = field(default_factory=dict)

    @property
    def is_tuple(self) -> bool:
        return issubclass(self.cls, tuple)


STRUCTURE_NODES = (ast.List, ast.Dict, ast.Subscript, ast.ListComp, ast.GeneratorExp,
                   ast.DictComp)


def sequence_param(lo, node: ast.arg, name: str, shape, default, has_default: bool,
                   kwonly: bool, numbers: bool = False) -> ir.Param:
    """A parameter receiving a list or tuple of ``shape`` items: one scalar
    value per item (``xs_0``, ``xs_1``, ...), bound as a static list; its
    items are numbers or arrays as :func:`leaf_kinds` says (``numbers``:
    the items not known to be arrays are numbers)."""
    container, n = ("list", shape) if isinstance(shape, int) else shape
    if n is RUNTIME and container in ("list", "tuple"):
        return _runtime_param(lo, node, name, container, default, has_default, kwonly)
    if container not in ("list", "tuple") or not isinstance(n, int) or n < 0:
        raise lo.src.error(node, f"the length of {node.arg!r} must be an int or "
                           f"('list'|'tuple', int), not {shape!r}")
    kind_of = leaf_kinds(lo, node.arg, numbers)  # items may be arrays
    items = [ir.Value(lo.namer.fresh(f"{node.arg}_{i}"), kind_of(f"{node.arg}[{i}]"), None)
             for i in range(n)]
    value = ir.Value(name, container, node.arg)
    lo.env[node.arg] = StaticList(list(items)) if container == "list" else tuple(items)
    return ir.Param(value, default, has_default, kwonly, items)


def leaf_kinds(lo, name: str, numbers: bool = True):
    """The kind of each leaf (by its path, ``tree[1][2]``) of the structure
    or list parameter ``name``: an array where the caller's value holds one
    there (``lo.arrays`` names those paths:
    :func:`s2s_ad.frontend.specs.array_paths`), a number elsewhere, in NumPy
    code too, so that ``isinstance(node, float)`` is decided for the value
    given. Without paths: every leaf is an array where ``arrays`` names the
    parameter (``arrays=("p",)`` given by hand), and in NumPy code where
    the leaves' kinds are not known (``numbers`` false: a length given
    without a value, ``--length xs=3``; an array serves a number too), or
    where the function reads the structure from its closure or module
    (whose leaves may change between number and array)."""
    arrays = lo.arrays
    if any(a.startswith((name + "[", name + ".")) for a in arrays):
        return lambda at: "array" if at in arrays else "float"
    whole = name in arrays or getattr(lo, "array_mode", False) and (
        not numbers or name in lo.src.captured)
    return lambda at: "array" if whole else "float"


RUNTIME = None
"""The length of a list parameter known only at run time (``("list", RUNTIME)``
in ``lengths``): the generated code reads ``len(xs)`` and ``xs[i]`` when it
runs, so one module serves every length."""


def _runtime_param(lo, node: ast.arg, name: str, container: str, default, has_default: bool,
                   kwonly: bool) -> ir.Param:
    """A list parameter of any length: one IR value of kind ``"list"`` (or
    ``"tuple"``), read only by ``getitem`` and ``len`` ops (control.py)."""
    if getattr(lo, "array_mode", False):
        raise lo.src.error(node, f"{node.arg!r}: lists of any length are supported in "
                           "functions of floats; here it needs a length")
    value = ir.Value(name, container, node.arg)
    lo.env[node.arg] = value
    return ir.Param(value, default, has_default, kwonly)


def is_runtime(lo, value) -> bool:
    """Is ``value`` a list parameter whose length is known only at run time?"""
    param = lo.seq_params.get(id(value)) if isinstance(value, ir.Value) else None
    return param is not None and param.items is None


def failed_call(lo, value) -> None:
    """A call's result read as a structure, whose callee could not be
    lowered: raise why (the helper's own located refusal). A helper
    returning its number parameter unchanged (``def h(xs): return xs``)
    read so says that the caller's argument is a list."""
    failed = getattr(lo, "call_failures", {}).get(id(value))
    if failed is not None:
        raise failed
    passed = lo.__dict__.get("identity_calls", {}).get(id(value))
    if passed is not None:
        param_uses.used_as_sequence(lo, *passed)


def note_identity_call(lo, op: ir.Op, lowered: ir.Function, node: ast.Call) -> None:
    """Keep the argument ``op`` passes to a parameter ``lowered`` returns
    unchanged, a number there (read as a list, the argument is one)."""
    ids = [id(p.value) for p in lowered.params]
    if lowered.outputs is None and id(lowered.result) in ids and len(ids) == len(op.args):
        lo.__dict__.setdefault("identity_calls", {})[id(op.out)] = (
            op.args[ids.index(id(lowered.result))], node)


def note_failed_call(lo, lists, failure: SourceError) -> None:
    """``lists`` (built here) were passed to a helper that could not be
    lowered: an index past their length is then read as the helper's
    refusal, which may be why the caller expects them longer
    (``xs.append(...)`` in the helper)."""
    for seq in lists:
        lo.__dict__.setdefault("failed_passes", {}).setdefault(id(seq), failure)


def _param_used_as_sequence(lo, value, node: ast.AST, kinds=("float",),
                            keyed: bool = False) -> None:
    failed_call(lo, value)
    param_uses.used_as_sequence(lo, value, node, kinds, keyed)


def module_numbers(lo, name: str) -> bool:
    """Is ``name`` a module-level list or tuple of numbers the function reads
    (``COEFFS = [1.0, -2.0]``, not rebound in it)? It lowers to a tuple of
    constants (:meth:`Lowering.read`), a structure known while lowering
    wherever it is read: indexed, sliced, iterated, given to ``len``."""
    if name in lo.env or name in getattr(lo, "local_fns", {}):
        return False
    obj = lo.src.globals.get(name)
    return isinstance(obj, (list, tuple)) and bool(obj) and all(
        isinstance(v, numbers.Real) and not isinstance(v, bool) for v in obj)


def merged_dicts(lo, nodes: list, values: list) -> StaticDict:
    """``d | e`` of two dicts known while lowering (a dict parameter's, one
    built in the function): a new dict, ``e``'s items after (and over)
    ``d``'s, as Python merges them."""
    out = StaticDict()
    for node, value in zip(nodes, values):
        if not isinstance(value, StaticDict):
            _param_used_as_sequence(lo, value, node, ("float", "array"))
            raise lo.src.error(node, f"`|` merges two dicts; this operand is {describe(value)}")
        out.items.update(value.items)
    return out


def is_structure(value) -> bool:
    return isinstance(value, (tuple, StaticList, StaticDict, StaticObject))


def repeated(node: ast.BinOp) -> tuple[ast.expr, ast.expr] | None:
    """``(item, count)`` for ``[item] * count`` or ``count * [item]``."""
    if not isinstance(node.op, ast.Mult):
        return None
    for lst, count in ((node.left, node.right), (node.right, node.left)):
        if isinstance(lst, ast.List) and len(lst.elts) == 1 \
                and not isinstance(lst.elts[0], ast.Starred):
            return lst.elts[0], count
    return None


def describe(value) -> str:
    if isinstance(value, tuple):
        return "a tuple"
    if isinstance(value, StaticList):
        return "a list"
    if isinstance(value, StaticDict):
        return "a dict"
    if isinstance(value, StaticObject):
        name = value.cls.__name__
        return f"{'an' if name[:1] in 'AEIOUaeiou' else 'a'} {name}"
    if isinstance(value, ir.Value) and value.kind == "tuple":
        return "a tuple returned by a call"
    if isinstance(value, ir.Value) and value.kind == "list":
        return "a list of any length (read by index, len, sum and loops when the code runs)"
    if getattr(value, "is_range", False):
        return "a range (iterated over, or read at a constant index)"
    if isinstance(value, ir.Value) and value.kind == "array":
        return "an array"
    return "a number"


def lower_expr(lo, node: ast.expr, var: str | None):
    """Lower a structure expression; ``lo`` is the frontend's lowering state."""
    if isinstance(node, ast.List):
        return StaticList([v for e in node.elts for v in _elements(lo, e)])
    if isinstance(node, ast.Dict):
        out = StaticDict()
        for k, v in zip(node.keys, node.values):
            if k is None:  # `{**d, "w": w}`: the items of a dict built in the function
                inner = lo.expr(v)
                if not isinstance(inner, StaticDict):
                    _param_used_as_sequence(lo, inner, v, ("float", "array"))
                    raise lo.src.error(v, "`**` in a dict literal is supported on a dict built "
                                       "in the function or a dict parameter, with constant "
                                       "string keys")
                out.items.update(inner.items)
                continue
            out.items[_key(lo, k)] = lo.expr(v)
        return out
    if isinstance(node, ast.Subscript):
        return subscript(lo, node, var)
    if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
        return StaticList(comprehension(lo, node))
    if isinstance(node, ast.DictComp):  # `{k: v * 2.0 for k, v in params.items()}`
        return StaticDict(dict(comprehension(
            lo, node, lambda: (_key(lo, node.key), lo.expr(node.value)))))
    raise lo.refuse(node)


def _elements(lo, node: ast.expr) -> list:
    """The items ``node`` puts in a list display: one, or those of ``*seq``
    (a tuple or list built in the function, or the tuple a call returned)."""
    if not isinstance(node, ast.Starred):
        return [lo.expr(node)]
    seq = forwarded(lo, lo.expr(node.value), node)
    if isinstance(seq, StaticList):
        return list(seq.items)
    if isinstance(seq, tuple):
        return list(seq)
    raise lo.src.error(node, "`*` in a list is supported on a tuple or list built in the "
                       "function (its items known while lowering)")


def _key(lo, node: ast.expr) -> str:
    key = lo.static_key(node)  # a constant, or `k` of `for k in d.keys()`, a string parameter
    if isinstance(key, str):
        return key
    raise lo.src.error(node, "dict keys must be constant strings (`d[\"w\"]`)")


def _index(lo, node: ast.expr, length: int | None) -> int:
    """A constant integer index (loop variables of unrolled comprehensions
    are constants), made non-negative when ``length`` is known."""
    value = _static_int(lo, node)
    if value is None:
        raise lo.src.error(node, "indices must be integer constants (or variables of a "
                           "comprehension over range with constant bounds)")
    i = value
    if length is not None:
        if not -length <= i < length:
            raise lo.src.error(node, f"index {i} is out of range for length {length}")
        i %= length
    return i


_INT_OPS = {ast.Add: int.__add__, ast.Sub: int.__sub__, ast.Mult: int.__mul__,
            ast.FloorDiv: int.__floordiv__, ast.Mod: int.__mod__}


def _static_int(lo, node: ast.expr) -> int | None:
    """The value of an integer expression over constants, or None."""
    if isinstance(node, ast.Constant):
        v = node.value
        return v if isinstance(v, int) and not isinstance(v, bool) else None
    if isinstance(node, ast.Name):
        v = lo.env.get(node.id)
        if v is None and node.id not in lo.env:
            g = lo.src.globals.get(node.id)
            return g if isinstance(g, int) and not isinstance(g, bool) else None
        return _folded(lo, v)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _static_int(lo, node.operand)
        return None if v is None else -v
    if isinstance(node, ast.BinOp) and type(node.op) in _INT_OPS:
        a, b = _static_int(lo, node.left), _static_int(lo, node.right)
        if a is None or b is None or (b == 0 and isinstance(node.op, (ast.FloorDiv, ast.Mod))):
            return None
        return _INT_OPS[type(node.op)](a, b)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len" \
            and len(node.args) == 1 and "len" not in lo.env:
        v = lo.expr(node)
        return v.value if isinstance(v, ir.Const) else None
    return None


_FOLD = {"add": int.__add__, "sub": int.__sub__, "mul": int.__mul__}


def _folded(lo, v, depth: int = 0) -> int | None:
    """An int constant, or the value of a name bound to integer arithmetic on
    constants (``t3 = i - 1`` in a loop unrolled with ``i`` a constant)."""
    if isinstance(v, ir.Const):
        return v.value if isinstance(v.value, int) and not isinstance(v.value, bool) else None
    op = lo.defs.get(id(v)) if isinstance(v, ir.Value) and v.kind == "int" else None
    if depth > 8 or not isinstance(op, ir.Op) or op.prim not in _FOLD or len(op.args) != 2:
        return None
    a, b = (_folded(lo, x, depth + 1) for x in op.args)
    return None if a is None or b is None else _FOLD[op.prim](a, b)


def subscript(lo, node: ast.Subscript, var: str | None):
    if isinstance(node.slice, ast.Slice):
        return _slice(lo, node)
    base = lo.expr(node.value)
    if isinstance(base, StaticDict):
        key = _key(lo, node.slice)
        if key not in base.items:
            raise lo.src.error(node.slice, f"the dict has no key {key!r}")
        return base.items[key]
    if isinstance(base, StaticObject) and base.is_tuple:
        base = tuple(base.items.values())  # a NamedTuple indexed like a tuple
    if isinstance(base, (tuple, StaticList)):
        items = base if isinstance(base, tuple) else base.items
        if _static_int(lo, node.slice) is None and hasattr(lo, "run_time_item"):
            return lo.run_time_item(base, node, var)  # `C[i]` in a `while` loop
        failure = lo.__dict__.get("failed_passes", {}).get(id(base))
        if failure is not None and not -len(items) <= (_static_int(lo, node.slice) or 0) \
                < len(items):
            raise failure  # `ys[3]` after `h(ys)`, which appends to its parameter
        return items[_index(lo, node.slice, len(items))]
    if call_tuple(lo, base):
        items = forwarded(lo, base, node) if _static_int(lo, node.slice) is None \
            and hasattr(lo, "run_time_item") else None
        if isinstance(items, tuple):
            return lo.run_time_item(items, node, var)  # `r[i % 2]`, `r = h(x)`, in a loop
        return call_item(lo, base, node, var)
    if isinstance(base, ir.Value) and (is_runtime(lo, base) or id(base) in lo.grown):
        # `sorted(xs)[0]`, `rollout(x, n)[-1]`: a list read when the code runs
        index = lo.expr(node.slice)
        whole = isinstance(index, ir.Value) and index.kind == "int" or isinstance(
            index, ir.Const) and type(index.value) is int
        if not whole:
            raise lo.src.error(node.slice, "a list index must be an integer")
        lo.mark_int(index, node.slice, "a list index")
        return lo.emit("getitem", [base, index], node, var)
    if _array_item(lo, base):
        return _through(lo, base, node, var)
    _param_used_as_sequence(lo, base, node)
    raise lo.src.error(node, f"`{ast.unparse(node.value)}` is {describe(base)}; only tuples, "
                       "lists and dicts built in the function can be indexed")


def _array_item(lo, base) -> bool:
    """Is ``base`` an array that an item of a structure gave, in NumPy code
    (``r[1]`` of ``r = h(x)``, ``d["W"]``), indexed or sliced further?"""
    return getattr(lo, "array_mode", False) and isinstance(base, ir.Value) \
        and base.kind == "array"


def _through(lo, base: ir.Value, node: ast.Subscript, var):
    """``node`` (``r[1][1:]``) as NumPy indexing of ``base``, the array its
    value (``r[1]``) is, bound to a name spelled as that expression."""
    text = ast.unparse(node.value)
    lo.env[text] = base
    lo.spliced.append(text)
    name = ast.copy_location(ast.Name(text, ast.Load()), node.value)
    return lo.subscript(ast.copy_location(ast.Subscript(name, node.slice, ast.Load()), node),
                        var, None)


def _slice(lo, node: ast.Subscript):
    return slice_of(lo, lo.expr(node.value), node)


def slice_of(lo, base, node: ast.Subscript):
    """``node`` (a slice) of ``base``, a tuple or list known while lowering
    (or the tuple ``r = h(x)`` binds, or ``h(x)`` itself: its items)."""
    base = made_items(lo, base) or forwarded(lo, base, node.value)
    if _array_item(lo, base):
        return _through(lo, base, node, None)
    if not isinstance(base, (tuple, StaticList)):
        _param_used_as_sequence(lo, base, node)
        raise lo.src.error(node, "only tuples and lists built in the function can be sliced")
    items = base if isinstance(base, tuple) else base.items
    bounds = []
    for part in (node.slice.lower, node.slice.upper, node.slice.step):
        bounds.append(None if part is None else _index(lo, part, None))
    picked = items[slice(*bounds)]
    return tuple(picked) if isinstance(base, tuple) else StaticList(list(picked))


def call_items(lo, out: ir.Value, outputs: list, node: ast.AST) -> None:
    """The items of the tuple ``r = h(x)`` binds, read where the call is
    (one ``item`` op each, next to the call): ``r[k]`` read later, in a loop
    or a branch too, is that item, a value like any other, whose adjoint the
    reverse sweep sums over its reads wherever they are (an item op inside a
    loop or branch kept its adjoint where the call's backward could not see
    it; a list of any length the callee returned among its items too)."""
    if not call_tuple(lo, out):
        return
    def read(k):  # `t[k]`, at the call, for the op's text
        sub = ast.Subscript(ast.Name(out.var or out.name, ast.Load()), ast.Constant(k),
                            ast.Load())
        return ast.fix_missing_locations(ast.copy_location(sub, node))

    lo.__dict__.setdefault("call_items", {})[id(out)] = {
        k: item(lo, out, k, read(k)) for k in range(len(outputs))}


def made_items(lo, value) -> tuple | None:
    """The items of the flat tuple ``value``, a call's result bound to a name,
    as :func:`call_items` read them next to the call; None unless every item
    was read there."""
    length = lo.__dict__.get("tuple_calls", {}).get(id(value)) \
        if isinstance(value, ir.Value) else None
    made = lo.__dict__.get("call_items", {}).get(id(value), {})
    if length is None or any(k not in made for k in range(length)):
        return None
    return tuple(made[k] for k in range(length))


def forwarded(lo, value, node: ast.expr):
    """``value``, or, where it is the flat tuple a call returned (``return
    h(x)`` in a helper, or ``r = h(x); return r``), the tuple of its items,
    as ``a, b = h(x); return a, b`` returns them (a tuple holding a list of
    any length is left as it is: refused where it is returned)."""
    length = lo.__dict__.get("tuple_calls", {}).get(id(value)) \
        if isinstance(value, ir.Value) else None
    if length is None or lo.__dict__.get("list_items", {}).get(id(value)) \
            or not call_tuple(lo, value):
        return value
    made = lo.__dict__.get("call_items", {}).get(id(value), {})
    return tuple(made[k] if k in made else item(lo, value, k, node) for k in range(length))


def call_item(lo, base: ir.Value, node: ast.Subscript, var: str | None) -> ir.Value:
    """``node``, ``r[k]`` or ``h(x)[k]``, an item of the tuple a call returned
    (``base``, marked a tuple): from the end for a negative ``k``, the callee's
    tuple length known once it is lowered (not for a call with a rule of the
    user's: refused, located)."""
    length = lo.__dict__.get("tuple_calls", {}).get(id(base))
    if length is None and (_static_int(lo, node.slice) or 0) < 0:
        raise lo.src.error(node.slice, "a negative index into the tuple a function with a "
                           "rule of its own returns: its length is not known here; index "
                           "it from the front")
    k = _index(lo, node.slice, length)
    made = lo.__dict__.get("call_items", {}).get(id(base), {})
    return made[k] if k in made else item(lo, base, k, node, var)


def item(lo, value: ir.Value, index: int, node: ast.AST, var: str | None = None) -> ir.Value:
    """``value[index]`` for a tuple returned by a call: an ``item`` op."""
    if var is not None:
        name = lo.namer.claim(var)
    else:
        name = lo.namer.fresh(f"{value.name}_{index}")
    out = ir.Value(name, "array" if getattr(lo, "array_mode", False) else "float", var)
    if index in lo.__dict__.get("list_items", {}).get(id(value), ()):
        # a list of any length the callee returned in its tuple: read as it is
        # (frontend/runtime_lists.call_result), its adjoint a list (reverse/lists.py)
        out.kind = "list"
        lo.seq_params[id(out)] = ir.Param(out)
        lo.returned_lists.add(id(out))
    if index in lo.__dict__.get("index_items", {}).get(id(value), ()):
        lo.index_values.add(id(out))  # an index array the callee computed from ints
    text = ast.unparse(node) if isinstance(node, ast.expr) else f"{value.name}[{index}]"
    if var is not None:
        text = f"{var} = {text}"
        lo.env[var] = out
    op = ir.Op("item", (value, ir.Const(index)), out, lo.loc(node), text)
    lo.ops.append(op)
    lo.defs[id(out)] = op  # (what it is computed from: param_uses._computed_from)
    return out


def call_tuple(lo, value) -> bool:
    """Is ``value`` the result of a call to a user function, used as a
    tuple? Then it becomes a value of kind ``"tuple"`` (whether the callee
    really returns a tuple is checked once callees are lowered)."""
    if isinstance(value, ir.Value) and id(value) in lo.call_values:
        failed_call(lo, value)
        value.kind = "tuple"
        return True
    return False


def comprehension(lo, node, item=None) -> list:
    """The elements of ``[e for v in range(...)]`` or ``[e for v in xs]``,
    unrolled: each element is lowered with ``v`` bound to a constant or to
    an element of ``xs``; ``item()`` lowers an element where it is not
    ``node.elt`` (a dict comprehension's key and value). (Over a list of any
    length, a comprehension is a loop: :mod:`s2s_ad.frontend.comprehensions`.)"""
    gen = node.generators[0]
    if gen.is_async:
        raise lo.src.error(node, "async comprehensions are not supported")
    values = iteration(lo, gen.iter)  # (a parameter used as a list: said first)
    if gen.ifs:
        raise lo.src.error(gen.ifs[0], "`if` in a comprehension is supported over a list of "
                           "any length; over one known while lowering, write the loop")
    out = []
    saved = {n: lo.env[n] for n in _names(gen.target) if n in lo.env}
    inner = None
    if len(node.generators) > 1:  # `for i in range(2) for j in range(3)`: nested, in order
        inner = copy.copy(node)
        inner.generators = node.generators[1:]
    try:
        for v in values:
            lo.assign(gen.target, v, gen.iter)
            if inner is not None:
                out += comprehension(lo, inner, item)
                continue
            out.append(lo.expr(node.elt) if item is None else item())
    finally:
        for n in _names(gen.target):
            lo.env.pop(n, None)
        lo.env.update(saved)
    return out


def _names(target: ast.expr) -> list[str]:
    return [n.id for n in walk(target) if isinstance(n, ast.Name)]


def dict_view(lo, node: ast.expr) -> list | None:
    """``d.items()``, ``d.values()``, ``d.keys()`` of a dict known while
    lowering (built in the function, or a structure parameter): the pairs
    (key, value), the values or the keys, in the dict's order; None for
    anything else."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("items", "values", "keys") and not node.args
            and not node.keywords):
        return None
    base = node.func.value
    root = base
    while isinstance(root, (ast.Attribute, ast.Subscript)):
        root = root.value
    if not (isinstance(root, ast.Name) and root.id in lo.env):
        return None
    d = lo.expr(base)
    if not isinstance(d, StaticDict):
        # a parameter lowered as a number before its dict was seen: the code is
        # made for the dict it is called with
        _param_used_as_sequence(lo, d, base, ("float", "array"))
        return None
    if node.func.attr == "items":
        return [(ir.Const(k), v) for k, v in d.items.items()]
    if node.func.attr == "values":
        return list(d.items.values())
    return [ir.Const(k) for k in d.items]


def iteration(lo, node: ast.expr) -> list:
    """What a comprehension iterates over, as a list of operands."""
    view = dict_view(lo, node)
    if view is not None:
        return view  # `sum(np.sum(w) for w in params.values())`
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id == "range" and node.func.id not in lo.env
            and lo.resolve(node.func) is builtins.range):
        if node.keywords or not 1 <= len(node.args) <= 3:
            raise lo.src.error(node, "range takes one to three positional arguments")
        bounds = [_index(lo, a, None) for a in node.args]
        return [ir.Const(i) for i in range(*bounds)]
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id not in lo.env
            and lo.resolve(node.func) in (builtins.zip, builtins.enumerate)):
        return _zip_or_enumerate(lo, node)
    return items_of(lo, lo.expr(node), node)


def known_items(value) -> list | None:
    """What iterating ``value``, a structure known while lowering, gives: a
    tuple's or list's items, a NamedTuple's fields, a dict's keys (in its
    order); None for anything else."""
    if isinstance(value, StaticObject) and value.is_tuple:
        return list(value.items.values())
    if isinstance(value, (tuple, StaticList)):
        return list(value if isinstance(value, tuple) else value.items)
    if isinstance(value, StaticDict):
        return [ir.Const(k) for k in value.items]
    return None


def items_of(lo, value, node: ast.expr) -> list:
    """The items of ``value`` (``node`` lowered), known while lowering."""
    known = known_items(value)
    if known is not None:
        return known
    op = lo.__dict__.get("call_ops", {}).get(id(value)) if isinstance(value, ir.Value) \
        else None
    outputs = getattr(getattr(getattr(op, "callee", None), "lowered", None), "outputs", None)
    made = made_items(lo, value)
    if made is not None:
        return list(made)  # `r = h(x)`, then `sum(r)` (in a loop or an arm too)
    if outputs is not None and call_tuple(lo, value):
        # a tuple or list of numbers a helper returned: its items, read one by one
        return [item(lo, value, k, node) for k in range(len(outputs))]
    # (NumPy code: a parameter lowered as an array may be a list of arrays)
    _param_used_as_sequence(lo, value, node, ("float", "array"))
    if not getattr(lo, "array_mode", False) and isinstance(value, ir.Value) \
            and value.kind == "float":
        # `sum(w * w)` in a function that never names NumPy: a number computed
        # from parameters iterated over, so one of them is an array or a list
        # (the gradient is then generated for the arguments it is called with)
        for n in walk(node):
            if isinstance(n, ast.Name) and n.id in lo.env:
                _param_used_as_sequence(lo, lo.env[n.id], node)
    raise lo.src.error(node, f"`{ast.unparse(node)}` is {describe(value)}; comprehensions "
                       "iterate over range(constant) or over a list or tuple built in the function"
                       + ("; bind it to a name first (`ys = ...`, then iterate over `ys`)"
                          if isinstance(node, (ast.ListComp, ast.GeneratorExp)) else ""))


def _zip_or_enumerate(lo, node: ast.Call) -> list:
    """``zip(xs, ys)`` as tuples of items, ``enumerate(xs, start)`` as
    ``(index, item)`` tuples, in a comprehension."""
    if lo.resolve(node.func) is builtins.zip:
        if node.keywords or not node.args:
            raise lo.src.error(node, "`zip` takes one or more sequences here")
        columns = [iteration(lo, a) for a in node.args]
        return [tuple(row) for row in zip(*columns)]
    start = [k.value for k in node.keywords if k.arg == "start"]
    if len(node.args) + len(start) not in (1, 2) or len(start) != len(node.keywords):
        raise lo.src.error(node, "`enumerate` takes a sequence and a start here")
    first = _index(lo, (node.args[1:] + start)[0], None) if len(node.args) + len(start) == 2 else 0
    return [(ir.Const(first + i), x) for i, x in enumerate(iteration(lo, node.args[0]))]


def builtin(lo, fn, node: ast.Call, var: str | None, hint: str | None):
    """``sum(xs)``, ``len(xs)``."""
    if node.keywords or len(node.args) != 1:
        raise lo.src.error(node, f"`{fn.__name__}` takes one argument here")
    arg = node.args[0]
    value = None
    if isinstance(arg, ast.Name) and is_runtime(lo, lo.env.get(arg.id)):
        value = lo.env[arg.id]
    elif isinstance(arg, ast.Call) and isinstance(arg.func, ast.Name) \
            and arg.func.id not in lo.env and (
                arg.func.id in getattr(lo, "local_fns", {})
                or isinstance(lo.src.globals.get(arg.func.id), types.FunctionType)):
        value = lo.expr(arg)  # `sum(rollout(x, n))`: maybe a list a helper returned
    elif isinstance(arg, ast.Subscript) and isinstance(arg.slice, ast.Slice):
        value = lo.expr(arg)  # `sum(xs[1:])`: of any length when xs is (list_slices)
    elif isinstance(arg, (ast.Subscript, ast.Attribute)):
        value = lo.expr(arg)  # `sum(d["ys"])`, `len(out.ys)`: a structure's item, maybe
        # a list of any length a helper returned in it
    elif isinstance(arg, ast.BinOp):
        value = lo.expr(arg)  # `sum([x] * 3)`, `len(xs + ys)`: maybe a list made when it runs
    else:
        value = lo.runtime_comprehension(arg)  # `sum(f(v) for v in xs)`, xs of any length
    if value is not None and is_runtime(lo, value):
        if fn is builtins.len:
            return lo.emit("len", [value], node, var, hint=hint)
        return _runtime_sum(lo, value, node, var)
    if value is not None:
        items = items_of(lo, value, arg)
    else:
        items = (comprehension(lo, arg) if isinstance(arg, ast.GeneratorExp)
                 else iteration(lo, arg))
    if fn is builtins.len:
        return ir.Const(len(items))
    if not items:
        return ir.Const(0)
    for x in items:
        if is_structure(x):
            raise lo.src.error(arg, "sum() of tuples or lists is not supported")
    # sum(xs) is ((0 + xs[0]) + xs[1]) + ...; the leading 0 changes nothing.
    acc = items[0]
    for i, x in enumerate(items[1:], 1):
        last = i == len(items) - 1
        acc = lo.emit("add", [acc, x], node, var if last else None,
                      hint=hint if last else None)
    return acc


def builtin_sum(lo, seq: ir.Value, node: ast.Call) -> ir.Value:
    """``sum`` of the list of any length ``seq``."""
    return _runtime_sum(lo, seq, node, None)


def _runtime_sum(lo, seq: ir.Value, node: ast.Call, var: str | None) -> ir.Value:
    """``sum(xs)`` over a list of any length: a loop over its positions that
    adds each item to ``0.0`` (as ``sum`` adds to ``0``)."""
    if not getattr(lo, "array_mode", False):
        # Numbers: Python's own sum (in C); its adjoint adds g to every item's.
        return lo.emit("list.sum", [seq], node, var, text=ast.unparse(node))
    n = lo.emit("len", [seq], node, text=f"len({seq.name})")
    index = ir.Value(lo.namer.fresh("k"), "int")
    kind = "array" if getattr(lo, "array_mode", False) else "float"
    acc = ir.Value(lo.namer.fresh("acc"), kind)
    outer, lo.ops = lo.ops, []
    lo.loop_depth += 1
    lo.region_depth += 1
    try:
        x = lo.emit("getitem", [seq, index], node, text=f"{seq.name}[{index.name}]")
        nxt = lo.emit("add", [acc, x], node, text=ast.unparse(node))
        body = ir.Region(lo.ops, [nxt])
    finally:
        lo.loop_depth -= 1
        lo.region_depth -= 1
        lo.ops = outer
    out = ir.Value(acc.name, kind, None)  # a loop's results are named after its carried values
    loop = ir.For(index, ir.Const(0), n, ir.Const(1), [acc], [ir.Const(0.0)], body, [out],
                  lo.loc(node), f"sum({seq.name})")
    lo.ops.append(loop)
    return out


def method_statement(lo, stmt: ast.Expr) -> tuple | None:
    """``(call, what the name holds, method)`` of a statement ``name.method(...)``
    on a name of the function; None for any other statement."""
    call = stmt.value
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
            and isinstance(call.func.value, ast.Name) and call.func.value.id in lo.env):
        return None
    return call, lo.env[call.func.value.id], call.func.attr


def mutation(lo, stmt: ast.Expr) -> bool:
    """``xs.append(v)``, ``xs.extend(ys)``: lower it and return True, or
    return False when ``stmt`` is not one."""
    found = method_statement(lo, stmt)
    if found is None:
        return False
    call, target, method = found
    refuse_argument_change(lo, target, call)
    if not isinstance(target, StaticList):
        raise _not_a_list(lo, call, target)
    if method not in ("append", "extend"):
        raise lo.src.error(call, f"`{ast.unparse(call.func)}` is not supported; lists support "
                           "append and extend")
    if call.keywords or len(call.args) != 1 or isinstance(call.args[0], ast.Starred):
        raise lo.src.error(call, f"`{method}` takes one argument")
    if method == "append":
        target.items.append(lo.expr(call.args[0]))
    else:
        target.items.extend(iteration(lo, call.args[0]))
    return True


def _not_a_list(lo, call: ast.Call, target) -> SourceError:
    """The refusal of ``name.method(...)`` (a statement) where ``name`` holds
    no list built in the function: say what it holds."""
    name, method = call.func.value.id, call.func.attr
    what = f"`{name}.{method}(...)`"
    op = lo.__dict__.get("call_ops", {}).get(id(target))
    if op is not None:
        helper = getattr(op.callee.fn, "__name__", "the helper")
        return lo.src.error(call, f"{what}: `{name}` holds what `{helper}` returned, which "
                            "s2s-ad reads as it is and does not change in place: copy it into a "
                            f"list of this function first (`{name} = list({helper}(...))`)")
    if isinstance(target, StaticDict):
        return lo.src.error(call, f"{what}: `{name}` is a dict, which has no `{method}`; set a "
                            f"key instead (`{name}[\"k\"] = v`)")
    if isinstance(target, tuple) or isinstance(target, StaticObject) and target.is_tuple:
        return lo.src.error(call, f"{what}: `{name}` is a tuple, which has no `{method}`; build "
                            f"a list instead (`{name} = [...]`)")
    if isinstance(target, ir.Const) or isinstance(target, ir.Value) \
            and target.kind in ("float", "int"):
        return lo.src.error(call, f"{what}: `{name}` is a number, which has no `{method}`; "
                            f"build a list instead (`{name} = [...]`)")
    if isinstance(target, ir.Value) and target.kind == "array":
        return lo.src.error(call, f"{what}: `{name}` is an array, which has no `{method}`; "
                            "build a list of its items and make the array from it "
                            "(`np.array([...])`)")
    return lo.src.error(call, f"{what} is not supported: `{name}` is not a list built in the "
                        "function (only those support append and extend)")


def mutables(values: list) -> set[int]:
    """ids of every list and dict in ``values``, nested ones included."""
    out: set[int] = set()
    stack = list(values)
    while stack:
        v = stack.pop()
        if isinstance(v, (StaticList, StaticDict)):
            if id(v) in out:
                continue
            out.add(id(v))
        if isinstance(v, tuple):
            stack.extend(v)
        elif isinstance(v, StaticList):
            stack.extend(v.items)
        elif isinstance(v, (StaticDict, StaticObject)):
            stack.extend(v.items.values())
    return out


def refuse_argument_change(lo, obj, node: ast.AST, what: str | None = None) -> None:
    """Changing a list or dict the caller holds (an argument, an item of one,
    under any name) in place: the caller would see it; the gradient could not."""
    if id(obj) in getattr(lo, "argument_objects", ()):
        what = what or f"`{ast.unparse(node)}`"
        raise lo.src.error(node, f"{what} changes a list or dict the caller passed (an "
                           "argument or an item of one) in place, which the caller would "
                           "see: s2s-ad differentiates pure functions; build a new value "
                           "instead")


def refuse_caller_array_write(lo, target: ast.Subscript) -> None:
    """``xs[0][1] = v`` with ``xs`` the caller's (a parameter, or a list or
    dict it passed): the write would change the caller's array. The same
    located refusal whether ``xs`` was lowered as an array (``grad`` and
    ``jvp`` made before a call, ``--array xs``) or as the list of a call
    (``vjp``)."""
    root = target.value
    while isinstance(root, ast.Subscript):
        root = root.value
    if not isinstance(root, ast.Name) or root is target.value:
        return
    held = lo.env.get(root.id)
    if id(held) in getattr(lo, "argument_objects", ()) or param_uses.is_param(lo, held):
        item = ast.unparse(target.value)
        raise lo.src.error(target, f"assigning into `{item}` would change an array the caller "
                           f"passed in (through `{root.id}`); assign into a copy (`w = "
                           f"np.copy({item})`, `w[...] = v`) first")


def store(lo, target: ast.Subscript, value) -> None:
    """``xs[0] = v``, ``d["w"] = v``."""
    if isinstance(target.value, ast.Name) and module_numbers(lo, target.value.id):
        raise lo.src.error(target, f"`{target.value.id}` is a module-level list of numbers: "
                           "assigning into it would change it for every later call; build "
                           f"a new list (`c = list({target.value.id})`, then `c[...] = v`)")
    base = lo.expr(target.value)
    refuse_argument_change(lo, base, target)
    if isinstance(base, StaticDict):
        base.items[_key(lo, target.slice)] = value
    elif isinstance(base, StaticList):
        base.items[_index(lo, target.slice, len(base.items))] = value
    elif isinstance(base, ir.Value) and base.kind == "array":
        refuse_caller_array_write(lo, target)
        item = ast.unparse(target.value)
        raise lo.src.error(target, f"`{item}` is an array held by a list, tuple or dict; "
                           "writing into it in place is not supported (other names may hold "
                           f"it): write into a copy and put that back (`w = np.copy({item})`, "
                           f"`w[...] = v`, then `{item} = w`)")
    else:
        failed_call(lo, base)  # a helper's list, read as a number: the helper's reason
        raise lo.src.error(target, f"`{ast.unparse(target.value)}` is {describe(base)}; only "
                           "lists and dicts built in the function can be assigned into")


def augmented_store(lo, stmt: ast.AugAssign) -> None:
    """``xs[k] += v`` (``d["b"] -= v``, any operator) into a list, tuple or dict
    built in the function: ``xs[k] = xs[k] + v`` where the item is a number
    (Python's ``+=`` on a number makes a new one, which the item then is).
    An array item is refused, located: NumPy's ``+=`` writes into the array,
    which another name, the caller or another item may hold too."""
    target = stmt.target
    read = ast.copy_location(ast.Subscript(target.value, target.slice, ast.Load()), target)
    old = lo.expr(read)
    if is_structure(old) or isinstance(old, ir.Value) and old.kind == "array":
        item = ast.unparse(target)
        op = ast.unparse(ast.BinOp(ast.Name("a"), stmt.op, ast.Name("b")))[2:-2]
        raise lo.src.error(stmt, f"`{item} {op}= ...` writes into the array `{item}` holds "
                           f"(NumPy's `{op}=` works in place), which other names, the caller "
                           f"or other items of `{ast.unparse(target.value)}` may hold too, and "
                           f"the gradient would not see the change. Write `{item} = {item} {op} "
                           "...`, which makes a new array")
    new = lo.expr(ast.copy_location(ast.BinOp(read, stmt.op, stmt.value), stmt))
    store(lo, target, new)


def starred_unpack(lo, value, target: ast.Tuple | ast.List, value_node: ast.expr) -> list:
    """The operands ``a, *rest, b = value`` assigns, ``rest`` a new list of
    the items between: ``value`` a tuple or list built in the function, a
    NamedTuple or the tuple a call returned (its length known while lowering)."""
    stars = [k for k, e in enumerate(target.elts) if isinstance(e, ast.Starred)]
    if len(stars) > 1:
        raise lo.src.error(target.elts[stars[1]], "multiple starred names in one assignment")
    value = forwarded(lo, value, value_node)
    if isinstance(value, StaticObject) and value.is_tuple:
        items = list(value.items.values())
    elif isinstance(value, StaticList):
        items = list(value.items)
    elif isinstance(value, tuple):
        items = list(value)
    else:
        # a parameter lowered as a number before its use was known: it is a
        # list (lowered for the call's arguments, or refused asking for its length)
        param_uses.used_as_sequence(lo, value, value_node)
        raise lo.src.error(target.elts[stars[0]], f"`{ast.unparse(value_node)}` is "
                           f"{describe(value)}; a starred name unpacks a tuple or list built "
                           "in the function or returned by a helper (its length known while "
                           "lowering)")
    k, after = stars[0], len(target.elts) - stars[0] - 1
    if len(items) < len(target.elts) - 1:
        raise lo.src.error(target, f"cannot unpack {len(items)} values into "
                           f"{len(target.elts) - 1} names and a starred one")
    return items[:k] + [StaticList(items[k:len(items) - after])] + items[len(items) - after:]


def unpack(lo, value, target: ast.expr, value_node: ast.expr) -> list:
    """The operands ``a, b = value`` assigns."""
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, StaticList):
        return list(value.items)
    if isinstance(value, StaticObject) and value.is_tuple:
        return list(value.items.values())
    made = made_items(lo, value)
    if made is not None:
        # `r = h(x)`, then `a, b = r` (in a loop or an arm too): the items read at the call
        if len(made) != len(target.elts):
            raise lo.src.error(value_node, f"`{ast.unparse(value_node)}` holds a tuple of "
                               f"{len(made)}; it cannot be unpacked into {len(target.elts)} "
                               "names")
        return list(made)
    if call_tuple(lo, value):
        recursive = lo.__dict__.get("recursive_results", {}).get(id(value))
        if recursive is not None and any(isinstance(e, (ast.Tuple, ast.List))
                                         for e in target.elts):
            raise lo.src.error(target, f"`{recursive}` calls itself here, and its result is "
                               "unpacked as nested tuples: a recursive call is read before "
                               f"`{recursive}` is lowered, from its returns as written; write "
                               "the nested tuples out at its one `return`, at its end "
                               "(`return (a, b), c`), or return a flat tuple")
        # Items read into plain names are named after them (``a, b = h(x)``).
        names = [e.id if isinstance(e, ast.Name) else None for e in target.elts]
        return [item(lo, value, i, value_node, names[i] if names.count(names[i]) == 1 else None)
                for i in range(len(target.elts))]
    if _array_like(lo, value):
        # ``n, d = x.shape``, ``x, y, z = v``: items along the first axis, one
        # per name. The gradient module reads them by index, so it does not
        # repeat Python's check that the lengths agree (docs/numpy.md).
        names = [e.id if isinstance(e, ast.Name) else None for e in target.elts]
        return [lo.emit("array.getitem", [value, ir.Const(i)], value_node,
                        text=f"{value.name}[{i}]", hint=names[i] if names[i] else None,
                        attrs={"index": (("op", 1),)})
                for i in range(len(target.elts))]
    _param_used_as_sequence(lo, value, value_node)
    raise lo.src.error(value_node, f"cannot unpack {describe(value)}")


def _array_like(lo, value) -> bool:
    """An array, or a shape (``x.shape``), in array code."""
    if not (getattr(lo, "array_mode", False) and isinstance(value, ir.Value)):
        return False
    if value.kind == "array":
        return True
    producer = lo.defs.get(id(value))
    return producer is not None and producer.prim == "shape"


def outputs(lo, value, node: ast.expr) -> tuple:
    """The flat tuple of scalar operands a ``return`` of a structure gives."""
    items = value if isinstance(value, tuple) else getattr(value, "items", None)
    if not isinstance(items, (tuple, list)):
        raise lo.src.error(node, f"returning {describe(value)} is not supported")
    for x in items:
        if is_structure(x) or (isinstance(x, ir.Value) and x.kind == "tuple"):
            raise lo.src.error(node, "returning nested tuples or lists is not supported")
    return tuple(items)
