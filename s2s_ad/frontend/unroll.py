"""Loops unrolled while lowering: the body lowered once per iteration.

Contract: :func:`unroll_for` unrolls a ``for i in range(constants)`` whose
body appends to (or assigns into) a list or dict built before it, grows a
tuple or list built before it by ``+`` (``t = t + (v,)``, ``t += h(x)``), or indexes
a list of structures (``layers[i].W``), so the structures stay known while
lowering (:mod:`s2s_ad.frontend.structures`); :func:`unroll_items` unrolls a
``for`` over a structure known while lowering (``for W, b in layers``, ``for c
in COEFFS``). Both return False when the loop is to be lowered as a loop
(a long loop that appends grows its list at run time instead,
:mod:`s2s_ad.frontend.runtime_lists`).

Before → after::

    xs = []                               xs_0 = x * 0
    for i in range(3):                    xs_1 = x * 1
        xs.append(x * i)                  xs_2 = x * 2
"""

from __future__ import annotations

import ast
import builtins

from s2s_ad import ir
from s2s_ad.frontend import runtime_lists
from s2s_ad.frontend.structures import (StaticDict, StaticList, StaticObject, _static_int,
                                        dict_view, is_structure, known_items, made_items,
                                        module_numbers)
from s2s_ad.syntax_walk import walk


UNROLL_LIMIT = 1000
"""Most iterations a loop that builds a list is unrolled to."""
SHORT_UNROLL = 16
"""Most iterations a ``range(constant)`` loop that appends is unrolled to
first; a longer one grows its list at run time (a loop is shorter to read
and faster to run), unless the function needs the list's length while
lowering (then it is lowered again, unrolled up to ``UNROLL_LIMIT``)."""


def unroll_for(lo, node: ast.For) -> bool:
    """Unroll ``for i in range(constants)`` whose body appends to (or
    assigns into) a list or dict built before the loop: the body is lowered
    once per iteration with ``i`` a constant, so the list's length stays
    known. Return False (the loop is lowered as a loop) otherwise."""
    if not (_mutates_structure(lo, node.body) or _indexes_structures(lo, node.body)):
        return False
    it = node.iter
    if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"
            and it.func.id not in lo.env and lo.resolve(it.func) is builtins.range
            and not it.keywords and 1 <= len(it.args) <= 3):
        return False
    bounds = [_static_int(lo, a) for a in it.args]
    if any(b is None for b in bounds):
        return False  # refused where the list is found changed, with its name
    trips = range(*bounds)
    if len(trips) > getattr(lo, "unroll_limit", UNROLL_LIMIT) \
            and not _indexes_structures(lo, node.body):
        lo.unroll_skipped = True
        return False  # a run-time list (frontend/runtime_lists.py)
    if _jumps(node.body) or len(trips) > UNROLL_LIMIT:
        return False
    for i in trips:
        lo.assign(node.target, ir.Const(i), it)
        _static_block(lo, node.body)
    return True


def why_unrolled(lo, body: list) -> str:
    """What the body of a loop :func:`unroll_for` unrolled does that needs
    it (for a refusal: "this loop appends to a list")."""
    if runtime_lists.appended_names(body):
        return "appends to a list"
    if _mutates_structure(lo, body):
        return "writes into a list or dict built before it"
    return "indexes a list or structure known while lowering by a value it changes"


def unroll_items(lo, node: ast.For) -> bool:
    """Unroll a ``for`` over a structure known while lowering: a list or
    tuple built in the function, of a structure parameter (``for W, b in
    layers``, ``for layer in layers``), a module-level list of numbers (``for c
    in COEFFS``), or ``zip``/``enumerate``/``reversed`` of them. A list
    parameter of floats keeps its loop (control.py). Return False otherwise."""
    items = _static_items(lo, node.iter)
    if items is None:
        return False
    params = [n.id for n in walk(node.iter) if isinstance(n, ast.Name) and n.id in lo.env
              and lo.sequence_param(lo.env[n.id]) is not None]
    if params and items and not any(_holds_structure(x) for x in items):
        return False  # over list parameters of numbers: a loop over their positions
    if _jumps(node.body):
        static = lo.env.get(node.iter.id) if isinstance(node.iter, ast.Name) else None
        if isinstance(static, StaticList) and lo.region_depth == 0 and not any(
                is_structure(x) or isinstance(x, ir.Value) and x.kind in ("tuple", "list")
                for x in static.items):
            # `for v in xs: ... return` over a list of numbers: a loop over the
            # list made a run-time list (frontend/runtime_lists.py)
            runtime_lists.promote(lo, static, node, node.iter.id,
                                  "iterated here by a loop that leaves early")
            return False
        raise lo.src.error(node, "a loop over a tuple, list or structure known while lowering "
                           "is unrolled, and cannot use `break`, `continue` or `return`")
    if len(items) > UNROLL_LIMIT:
        raise lo.src.error(node, f"this loop over {len(items)} items would be unrolled; "
                           f"s2s-ad unrolls such loops up to {UNROLL_LIMIT} times")
    live = _live(lo, node.iter, items)
    for k, v in enumerate(items):
        if live is not None:
            v = live(k)
        lo.assign(node.target, v, node.iter)
        _static_block(lo, node.body)
    return True


def _live(lo, node: ast.expr, items: list):
    """For an iterable that reads a list or dict known while lowering as the
    loop goes (the list itself, ``reversed``/``enumerate``/``zip`` of it, a
    dict's ``values()``/``items()``): a function giving the item Python reads
    at iteration k, after the body's writes of the iterations before
    (``for v in xs: xs[2] = x * x`` reads the new ``xs[2]`` at the third),
    ``items`` (as the loop starts) where a column of ``zip`` is fixed; None where the items are fixed when the loop starts (a tuple, a copy:
    ``sorted(xs)``, ``xs[:]``, a display). A loop whose body changes the
    list's length or the dict's keys is refused: Python would read more or
    fewer items, or raise."""
    def length_kept(items, n, k):
        if len(items) != n:
            raise lo.src.error(node, "the loop's body changes the length of the list (or the "
                               "keys of the dict) it iterates over; loop over a copy "
                               "(`xs[:]`) or over `range(n)`")
        return k

    if isinstance(node, ast.Name):
        s = lo.env.get(node.id)
        if not isinstance(s, StaticList):
            return None
        n = len(s.items)
        return lambda k: s.items[length_kept(s.items, n, k)]
    view = node.func.attr if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
        and node.func.attr in ("items", "values") and not node.args else None
    if view is not None:
        d = _known(lo, node.func.value)
        if not isinstance(d, StaticDict):
            return None
        keys = list(d.items)

        def item(k):
            if list(d.items) != keys:
                length_kept((), 1, k)
            return d.items[keys[k]] if view == "values" else (ir.Const(keys[k]), d.items[keys[k]])
        return item
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id not in lo.env and not node.keywords and node.args):
        return None
    fn = lo.src.globals.get(node.func.id, getattr(builtins, node.func.id, None))
    if fn is builtins.reversed and len(node.args) == 1 and isinstance(node.args[0], ast.Name):
        inner = _live(lo, node.args[0], items[::-1])
        return None if inner is None else (lambda k: inner(len(items) - 1 - k))
    if fn is builtins.enumerate:
        inner = _live(lo, node.args[0], [row[1] for row in items])
        return None if inner is None else (lambda k: _Row((items[k][0], inner(k))))
    if fn is builtins.zip:
        columns = [_live(lo, a, [row[j] for row in items]) for j, a in enumerate(node.args)]
        if all(c is None for c in columns):
            return None
        # the other columns are read once (ranges, displays: built before the loop)
        return lambda k: _Row(c(k) if c is not None else items[k][j]
                              for j, c in enumerate(columns))
    return None


class _Row(tuple):
    """A row of ``zip``/``enumerate`` (not an item that is a tuple)."""


def _holds_structure(x) -> bool:
    if isinstance(x, _Row):
        return any(_holds_structure(e) for e in x)
    return is_structure(x)


def _static_items(lo, node: ast.expr) -> list | None:
    if isinstance(node, (ast.List, ast.Tuple)) and node.elts and all(
            isinstance(e, ast.Constant) and type(e.value) in (int, float) for e in node.elts):
        return [ir.Const(e.value) for e in node.elts]  # for i in [1, 2, 3]: a literal
    view = dict_view(lo, node)
    if view is not None:  # for name, w in params.items()
        return view
    if isinstance(node, (ast.List, ast.Tuple)):  # for v in [x, x * x, math.sin(x)]
        return known_items(lo.expr(node))
    if isinstance(node, (ast.Subscript, ast.Attribute)):
        root = node
        while isinstance(root, (ast.Subscript, ast.Attribute)):
            root = root.value
        if not (isinstance(root, ast.Name) and (root.id in lo.env
                                                or module_numbers(lo, root.id))):
            return None
        # p["layers"], model.layers, COEFFS[1:]: an item or a slice
        return known_items(lo.expr(node))
    if isinstance(node, ast.Name):
        if node.id not in lo.env:
            if node.id in lo.src.globals and isinstance(lo.src.globals[node.id], (list, tuple)):
                value = lo.expr(node)
                return list(value) if isinstance(value, tuple) else None
            return None
        value = lo.env[node.id]
        made = made_items(lo, value)
        if made is not None:
            return list(made)  # `r = h(x)`, then `for v in r`: its items
        return known_items(value)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id not in lo.env and not node.keywords:
        fn = lo.src.globals.get(node.func.id, getattr(builtins, node.func.id, None))
        if fn is builtins.reversed and len(node.args) == 1:
            items = _static_items(lo, node.args[0])
            return None if items is None else items[::-1]
        if fn is builtins.sorted and len(node.args) == 1:
            # `for k in sorted(d)`: keys (or other constants) known while lowering
            items = _static_items(lo, node.args[0])
            if items is None or not all(isinstance(v, ir.Const) for v in items):
                return None
            try:
                return sorted(items, key=lambda v: v.value)
            except TypeError:  # keys of kinds Python does not order
                return None
        if fn is builtins.zip and node.args:
            # a list display written in the `zip` (`zip(COEFFS, [x, x * x])`) is lowered
            # last, once every other column is known: Python builds it before the loop
            columns = [None if _display(a) else _range(lo, a) or _static_items(lo, a)
                       for a in node.args]
            if any(c is None and not _display(a) for c, a in zip(columns, node.args)):
                return None
            columns = [[lo.expr(e) for e in a.elts] if _display(a) else c
                       for c, a in zip(columns, node.args)]
            return [_Row(row) for row in zip(*columns)]
        if fn is builtins.enumerate and len(node.args) in (1, 2):
            items = _static_items(lo, node.args[0])
            start = _static_int(lo, node.args[1]) if len(node.args) == 2 else 0
            if items is None or start is None:
                return None
            return [_Row((ir.Const(start + i), x)) for i, x in enumerate(items)]
    return None


def _range(lo, node: ast.expr) -> list | None:
    """The items of ``range(...)`` of constant bounds (a column of ``zip``), else None."""
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id not in lo.env and not node.keywords and 1 <= len(node.args) <= 3
            and lo.src.globals.get(node.func.id, getattr(builtins, node.func.id, None))
            is builtins.range):
        return None
    bounds = [_static_int(lo, a) for a in node.args]
    if None in bounds or bounds[2:] == [0]:
        return None
    return [ir.Const(k) for k in range(*bounds)] or None


def _display(node: ast.expr) -> bool:
    """A list or tuple display of expressions (not only number constants)."""
    return isinstance(node, (ast.List, ast.Tuple)) and bool(node.elts) and not any(
        isinstance(e, ast.Starred) for e in node.elts)


def _static_block(lo, stmts: list) -> None:
    """Lower ``stmts``, choosing the branch of an ``if`` whose test the loop
    index decides (``if i > 0:``) while lowering."""
    for stmt in stmts:
        test = _static_bool(lo, stmt.test) if isinstance(stmt, ast.If) else None
        if test is None:
            lo.statement(stmt)
        else:
            _static_block(lo, stmt.body if test else stmt.orelse)


_COMPARE = {ast.Lt: int.__lt__, ast.LtE: int.__le__, ast.Gt: int.__gt__, ast.GtE: int.__ge__,
            ast.Eq: int.__eq__, ast.NotEq: int.__ne__}


def _static_bool(lo, node: ast.expr) -> bool | None:
    """The value of a comparison of integer constants, or None."""
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARE:
        a, b = _static_int(lo, node.left), _static_int(lo, node.comparators[0])
        if a is not None and b is not None:
            return _COMPARE[type(node.ops[0])](a, b)
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        v = _static_bool(lo, node.operand)
        return None if v is None else not v
    if isinstance(node, ast.BoolOp):
        values = [_static_bool(lo, v) for v in node.values]
        if any(v is None for v in values):
            return None
        return all(values) if isinstance(node.op, ast.And) else any(values)
    return None


def _mutates_structure(lo, body: list) -> bool:
    def structure(name: str) -> bool:
        return isinstance(lo.env.get(name), (StaticList, StaticDict))

    def grown(n: ast.AST) -> bool:
        """``t = t + (v,)``, ``t = (v,) + t``, ``t += (v,)`` on a tuple or
        list known while lowering: it gets longer each iteration."""
        if isinstance(n, ast.AugAssign):
            name, added = n.target, isinstance(n.op, ast.Add)
            sides = [n.target]
        elif isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.value, ast.BinOp):
            name, added = n.targets[0], isinstance(n.value.op, ast.Add)
            sides = [n.value.left, n.value.right]
        else:
            return False
        return added and isinstance(name, ast.Name) \
            and isinstance(lo.env.get(name.id), (tuple, StaticList)) \
            and any(isinstance(e, ast.Name) and e.id == name.id for e in sides)

    for stmt in body:
        for n in walk(stmt):
            if grown(n):
                return True
            if (isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
                    and isinstance(n.func.value, ast.Name) and n.func.attr in ("append", "extend")
                    and structure(n.func.value.id)):
                return True
            if isinstance(n, (ast.Assign, ast.AugAssign)):
                targets = n.targets if isinstance(n, ast.Assign) else [n.target]
                for t in targets:
                    if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name) \
                            and structure(t.value.id):
                        return True
    return False


def _indexes_structures(lo, body: list) -> bool:
    """Does ``body`` index a list or tuple of structures (``layers[i].W``),
    or a list or tuple known while lowering by anything but a constant
    (``c[i]`` on a list a caller passed whole, ``frontend/passing.py``)?
    Such an index must be known while lowering: the loop is unrolled."""
    for stmt in body:
        for n in walk(stmt):
            if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name):
                v = (lo.read(n.value.id, n.value) if module_numbers(lo, n.value.id)
                     else lo.env.get(n.value.id))  # COEFFS[i]: a module-level list
            elif isinstance(n, ast.Subscript):
                v = _known(lo, n.value)  # params["layers"][i]: an item of a structure
            else:
                continue
            if isinstance(v, StaticDict) and not isinstance(n.slice, ast.Constant) \
                    and lo.static_key(n.slice) is None:
                return True  # params[f"W{i}"]: a key the loop's index makes
            items = (v.items if isinstance(v, StaticList) else
                     list(v) if isinstance(v, tuple) else None)
            if items and any(is_structure(x) for x in items):
                return True
            if items and not isinstance(n.slice, ast.Slice) \
                    and _static_int(lo, n.slice) is None and lo.sequence_param(v) is None:
                return True  # (a list parameter is read at run-time indices instead)
    return False


def _known(lo, node: ast.expr, depth: int = 0):
    """The structure ``node`` names while lowering, read without lowering it:
    a name's, then items at constant keys and indices and fields
    (``params["layers"]``, ``model.blocks[0]``); None for anything else."""
    if depth > 8:
        return None
    if isinstance(node, ast.Name):
        return lo.env.get(node.id)
    if isinstance(node, ast.Attribute):
        base = _known(lo, node.value, depth + 1)
        return base.items.get(node.attr) if isinstance(base, StaticObject) else None
    if not isinstance(node, ast.Subscript) or not isinstance(node.slice, ast.Constant):
        return None
    base, key = _known(lo, node.value, depth + 1), node.slice.value
    if isinstance(base, StaticDict) and isinstance(key, str):
        return base.items.get(key)
    items = base.items if isinstance(base, StaticList) else base if isinstance(
        base, tuple) else None
    if items is not None and type(key) is int and -len(items) <= key < len(items):
        return items[key]
    return None


def _jumps(body: list) -> bool:
    for stmt in body:
        for n in walk(stmt):
            if isinstance(n, (ast.Break, ast.Continue, ast.Return)):
                return True
    return False
