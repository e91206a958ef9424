"""Everyday syntax lowered to what the frontend already knows.

Contract: each function takes the frontend's ``_Lowering`` (``lo``) and a
node, and returns an operand (or a rewritten node) built from existing ops:

* :func:`splice` — ``f(*args)`` and ``f(**kw)`` where ``args`` is a tuple or
  list and ``kw`` a dict built in the function (their items are known while
  lowering): the call with the items as its arguments; ``(*shape, 1)`` the
  same in a tuple;
* :func:`sum_call` — ``sum(xs, start)`` (``start + xs[0] + ...``, folded
  left as Python does) and ``sum(a)`` of a NumPy array (``np.sum(a, axis=0)``);
* :func:`check_nesting` — a statement nesting expressions deeper than
  :data:`MAX_NESTING` is refused, located, before lowering;
* :func:`math_call` — ``math.fsum(xs)`` (the sum of the items; its value
  is summed left to right, without fsum's exact rounding), ``math.prod(xs,
  start=1)``, ``math.dist(p, q)`` (``√Σ(pᵢ-qᵢ)²``).

Before → after::

    pair(*args)                 pair(args[0], args[1])
    sum(xs, 1.5)                ((1.5 + xs[0]) + xs[1]) + xs[2]
    math.dist((x, y), (1, 2))   math.sqrt((x - 1) * (x - 1) + (y - 2) * (y - 2))
"""

from __future__ import annotations

import ast
import builtins
import math

from s2s_ad import ir
from s2s_ad.frontend import structures
from s2s_ad.frontend.runtime_checks import raise_unless
from s2s_ad.syntax_walk import nested_beyond, walk


def _items(lo, value, node: ast.expr, what: str) -> list:
    value = structures.forwarded(lo, value, node)  # a call's tuple: its items
    if isinstance(value, tuple):
        return list(value)
    if isinstance(value, structures.StaticList):
        return list(value.items)
    raise lo.src.error(node, f"{what} is supported on a tuple or list built in the function "
                       "(its items known while lowering)")


def bound(lo, text: str, value, at: ast.AST) -> ast.Name:
    """A name standing for an operand already lowered, spelled as the
    expression it comes from (never an identifier, so never a user's)."""
    lo.env[text] = value
    lo.spliced.append(text)
    return ast.copy_location(ast.Name(text, ast.Load()), at)


def splice(lo, node: ast.Call) -> ast.Call:
    """``node`` with ``*seq`` and ``**mapping`` arguments replaced by their items."""
    if not any(isinstance(a, ast.Starred) for a in node.args) \
            and all(k.arg is not None for k in node.keywords):
        return node
    args: list[ast.expr] = []
    for a in node.args:
        if not isinstance(a, ast.Starred):
            args.append(a)
            continue
        items = _items(lo, lo.expr(a.value), a, "`*` in a call")
        base = ast.unparse(a.value)
        args += [bound(lo, f"{base}[{i}]", v, a) for i, v in enumerate(items)]
    keywords: list[ast.keyword] = []
    for k in node.keywords:
        if k.arg is not None:
            keywords.append(k)
            continue
        value = lo.expr(k.value)
        if not isinstance(value, structures.StaticDict):
            raise lo.src.error(k.value, "`**` in a call is supported on a dict built in the "
                               "function, with constant string keys")
        base = ast.unparse(k.value)
        for key, v in value.items.items():
            if not isinstance(key, str):
                raise lo.src.error(k.value, f"`**{base}`: the key {key!r} is not a string")
            keywords.append(ast.keyword(key, bound(lo, f"{base}[{key!r}]", v, k.value)))
    out = ast.Call(node.func, args, keywords)
    ast.copy_location(out, node)
    out.end_lineno, out.end_col_offset = node.end_lineno, node.end_col_offset
    return out


def tuple_items(lo, node: ast.Tuple, targets):
    """``(a, *rest, b)``: the items, a starred one spliced in; in NumPy code,
    ``(*x.shape, 1)`` starring a shape is a shape joined when the code runs.
    Each starred operand is lowered once."""
    starred = {id(e): lo.expr(e.value) for e in node.elts if isinstance(e, ast.Starred)}

    def spliced(v):  # a tuple or list built in the function, or a call's tuple
        return isinstance(v, (tuple, structures.StaticList)) \
            or structures.made_items(lo, v) is not None or structures.call_tuple(lo, v)

    if getattr(lo, "array_mode", False) and not all(spliced(v) for v in starred.values()):
        elts = [ast.copy_location(ast.Starred(bound(lo, ast.unparse(e.value), starred[id(e)],
                                                    e.value), ast.Load()), e)
                if isinstance(e, ast.Starred) else e for e in node.elts]
        return lo.shape_operand(ast.copy_location(ast.Tuple(elts, ast.Load()), node))
    out = []
    for e, t in zip(node.elts, targets):
        if isinstance(e, ast.Starred):
            out += _items(lo, starred[id(e)], e, "`*` in a tuple")
        else:
            out.append(lo.expr(e, t))
    return tuple(out)


def sum_call(lo, node: ast.Call, var, hint):
    """``sum(xs, start)``, ``sum(xs, start=s)``, ``sum(a)`` of an array; None
    for a plain ``sum(xs)`` (lowered by :func:`structures.builtin`)."""
    start = None
    if len(node.args) == 2 and not node.keywords:
        start = node.args[1]
    elif len(node.args) == 1 and len(node.keywords) == 1 and node.keywords[0].arg == "start":
        start = node.keywords[0].value
    elif node.keywords or len(node.args) != 1:
        raise lo.src.error(node, "`sum` takes an iterable and an optional start")
    arg = node.args[0]
    if getattr(lo, "array_mode", False) and not isinstance(arg, structures.STRUCTURE_NODES) \
            and not lo.holds_structure(arg):
        value = lo.expr(arg)
        if isinstance(value, ir.Value) and value.kind == "array":
            total = lo.emit("np.sum", [value], node, None if start is not None else var,
                            hint=hint, attrs={"axis": 0, "keepdims": False})
            if start is None:
                return total
            return lo.emit("add", [lo.expr(start), total], node, var, hint=hint)
    if start is None:
        return None
    first = lo.expr(start)
    made = lo.runtime_comprehension(arg)
    if made is not None:  # over a list of any length: its sum, added to the start
        return lo.emit("add", [first, structures.builtin_sum(lo, made, node)], node, var,
                       hint=hint)
    items = (structures.comprehension(lo, arg) if isinstance(arg, (ast.GeneratorExp,
                                                                  ast.ListComp))
             else structures.iteration(lo, arg))
    return _fold(lo, "add", first, items, node, var, hint)


def _fold(lo, prim: str, acc, items: list, node, var, hint):
    for x in items:
        if structures.is_structure(x):
            raise lo.src.error(node, "the items must be numbers, not tuples or lists")
    for i, x in enumerate(items):
        last = i == len(items) - 1
        acc = lo.emit(prim, [acc, x], node, var if last else None, hint=hint if last else None)
    return acc


def _sequence(lo, arg: ast.expr) -> list:
    if isinstance(arg, (ast.GeneratorExp, ast.ListComp)):
        return structures.comprehension(lo, arg)
    return structures.iteration(lo, arg)


def _dist_of_lists(lo, node: ast.Call, points: list, var) -> ir.Operand:
    """``math.dist(p, q)`` where a point is a list of any length:
    ``math.sqrt(sum((a - b) ** 2 for a, b in zip(p, q)))`` (the same value
    up to rounding), after Python's check that the points have one length."""
    p, q = (bound(lo, f"({ast.unparse(a)})", v, a) for a, v in zip(node.args, points))

    def located(e: ast.expr) -> ast.expr:  # (made here: at the call, for its messages)
        for n in walk(e):
            ast.copy_location(n, node)
        return e

    def length(e):
        return ast.Call(ast.Name("len", ast.Load()), [e], [])
    same = lo.expr(located(ast.Compare(length(p), [ast.Eq()], [length(q)])))
    raise_unless(lo, same, node, f"{ast.unparse(node)}: points of one length", "ValueError",
                 "both points must have the same number of dimensions")
    a, b = "dist() item 1", "dist() item 2"  # (not Python names: no clash)
    pairs = ast.comprehension(ast.Tuple([ast.Name(a, ast.Store()), ast.Name(b, ast.Store())],
                                        ast.Store()), ast.Call(ast.Name("zip", ast.Load()),
                                                               [p, q], []), [], 0)
    square = ast.BinOp(ast.BinOp(ast.Name(a, ast.Load()), ast.Sub(), ast.Name(b, ast.Load())),
                       ast.Pow(), ast.Constant(2))
    total = ast.Call(ast.Name("sum", ast.Load()), [ast.GeneratorExp(square, [pairs])], [])
    return lo.emit("math.sqrt", [lo.expr(located(total))], node, var)


def math_call(lo, fn, node: ast.Call, var, hint):
    """``math.fsum``, ``math.prod``, ``math.dist``, ``math.hypot`` of other than
    two coordinates (see the module docstring); None for another function."""
    if fn is math.fsum:
        if len(node.args) != 1 or node.keywords:
            raise lo.src.error(node, "`math.fsum` takes one iterable")
        items = _sequence(lo, node.args[0])
        if not items:
            return ir.Const(0.0)
        return _fold(lo, "add", items[0], items[1:], node, var, hint) if len(items) > 1 \
            else lo.emit("float", [items[0]], node, var, hint=hint)
    if fn is math.prod:
        start = ir.Const(1)
        keywords = list(node.keywords)
        if len(node.args) != 1 or any(k.arg != "start" for k in keywords):
            raise lo.src.error(node, "`math.prod` takes an iterable and an optional start=")
        if keywords:
            start = lo.expr(keywords[0].value)
        items = _sequence(lo, node.args[0])
        if not items:
            return start
        if isinstance(start, ir.Const) and start.value == 1 and type(start.value) is int:
            return _fold(lo, "mul", items[0], items[1:], node, var, hint) if len(items) > 1 \
                else items[0]
        return _fold(lo, "mul", start, items, node, var, hint)
    if fn is math.dist:
        if len(node.args) != 2 or node.keywords:
            raise lo.src.error(node, "`math.dist` takes two points")
        points = [lo.expr(a) for a in node.args]
        if any(isinstance(v, ir.Value) and v.kind == "list" for v in points):
            return _dist_of_lists(lo, node, points, var)
        p, q = (structures.items_of(lo, v, a) for v, a in zip(points, node.args))
        if len(p) != len(q) or not p:
            raise lo.src.error(node, "`math.dist` needs two points of the same, nonzero length")
        squares = []
        for a, b in zip(p, q):
            d = lo.emit("sub", [a, b], node, hint="diff")
            squares.append(lo.emit("mul", [d, d], node, hint="sq"))
        total = _fold(lo, "add", squares[0], squares[1:], node, None, None)
        return lo.emit("math.sqrt", [total], node, var, hint=hint)
    if fn is math.hypot and len(node.args) != 2 and not node.keywords \
            and not any(isinstance(a, ast.Starred) for a in node.args):
        # `math.hypot(x, y, z)`: √(x² + y² + z²) (two coordinates: its own rule)
        coords = [lo.expr(a) for a in node.args]
        if not coords:
            return ir.Const(0.0)
        if len(coords) == 1:
            return lo.emit("abs", coords, node, var, hint=hint)
        squares = [lo.emit("mul", [c, c], node, hint="sq") for c in coords]
        total = _fold(lo, "add", squares[0], squares[1:], node, None, None)
        return lo.emit("math.sqrt", [total], node, var, hint=hint)
    return None


BUILTIN_SUM = builtins.sum


MAX_NESTING = 100
"""Deepest expression nesting lowered. Python's own printer (ast.unparse,
used for comments) recurses several frames per level, so a 500-term sum
``x + x + ... + x`` would exhaust the interpreter's stack; refusing it with a
location is better than a RecursionError from inside s2s-ad."""


def check_nesting(src) -> None:
    """Refuse an expression nested deeper than MAX_NESTING (counted without recursion)."""
    stmt = nested_beyond(src.tree, MAX_NESTING)
    if stmt is not None:
        raise src.error(stmt, f"this statement nests expressions more than {MAX_NESTING} "
                        "levels deep; split it into several assignments")
