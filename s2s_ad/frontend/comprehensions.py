"""Comprehensions over lists of any length: a list grown at run time.

Contract: :func:`runtime` lowers ``[e for v in xs if c]`` (or the generator
``(e for v in xs)``) whose one ``for`` iterates over a list whose length is
known only when the code runs — a list parameter of any length, a list a
closure captures, a list grown at run time or made by ``[c] * n``, a list a
helper returned, ``range(n)`` of bounds known only then (``n`` an int
parameter, ``len(xs)`` of such a list, ``A.shape[0]``), or
``zip``/``enumerate``/``reversed`` of them — as the loop
it stands for, appending to a new list grown at run time, which it returns
(kind ``"list"``: read by index, ``len``, ``sum``, loops, passed to helpers).
A comprehension with an ``if``, or over ``reversed(...)``, of a list known
while lowering is that loop too (unrolled; the ``if`` makes the list grow
at run time where its condition is decided only then).
:func:`joined` lowers ``xs + ys`` where either is a list of any length (a
list grown at run time, a list parameter of any length, a slice of one,
``xs[:k] + xs[k + 1:]``) and the other a list too (a join of lists again:
``ys + xs + ys`` is ``(ys + xs) + ys``), as the two loops it stands for, each
appending its items to a new list grown at run time.
The loop variables are renamed (a comprehension's names are its own, as in
Python 3), so nothing outside sees them. Inside a loop or branch, the list
belongs to one run of its body (its adjoint is made where the reverse of
that run starts, :func:`s2s_ad.reverse.lists.region_adjoints`). None for
any other comprehension (unrolled by
:func:`s2s_ad.frontend.structures.comprehension`).

Before → after, for ``ys = [(w * d - 1.0) ** 2 for d in data]``::

    ys = []
    for d_1 in data:
        ys.append((w * d_1 - 1.0) ** 2)
"""

from __future__ import annotations

import ast
import builtins
import copy

from s2s_ad import ir
from s2s_ad.frontend import checkpoint, list_slices, structures
from s2s_ad.syntax_walk import walk

ITERATORS = (builtins.zip, builtins.enumerate, builtins.reversed)


def over_runtime_list(lo, node: ast.expr) -> bool:
    """Does ``node`` (what a ``for`` iterates over) read a list of any length:
    the list by name, or ``zip``/``enumerate``/``reversed`` of one?"""
    if list_slices.is_runtime_slice(lo, node):  # `xs[1:]`
        return True
    if isinstance(node, ast.Name):
        value = lo.env.get(node.id)
        # an array: its items along the first axis, as a `for` loop reads them
        return structures.is_runtime(lo, value) or isinstance(value, ir.Value) \
            and value.kind == "array"
    if isinstance(node, (ast.Subscript, ast.Attribute)) and getattr(lo, "array_mode", False):
        base = node
        while isinstance(base, (ast.Subscript, ast.Attribute)):
            base = base.value
        value = lo.env.get(base.id) if isinstance(base, ast.Name) else None
        # a piece of an array (`X[1:]`, `X.T`): its rows, as a `for` loop reads them
        return isinstance(value, ir.Value) and value.kind == "array"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id not in lo.env and lo.resolve(node.func) in ITERATORS:
        return any(over_runtime_list(lo, a) for a in node.args)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
            and node.func.id not in lo.env and lo.resolve(node.func) is builtins.range:
        # a range whose bounds are known only when the code runs (`range(n)` of an
        # int parameter, `points.shape[0]`)
        return any(structures._static_int(lo, a) is None for a in node.args)
    return False


def _reversed(lo, node: ast.expr) -> bool:
    """Does ``node`` iterate over ``reversed(...)`` (directly or in ``zip``/``enumerate``)?"""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
        and node.func.id not in lo.env and lo.resolve(node.func) in ITERATORS \
        and (lo.resolve(node.func) is builtins.reversed
             or any(_reversed(lo, a) for a in node.args))


def runtime(lo, node: ast.ListComp | ast.GeneratorExp, var: str | None = None):
    """The list ``node`` makes, as the loop it stands for, or None (see the
    module docstring): a list of any length (an ``ir.Value``), or one known
    while lowering where the loop was unrolled and appended to unconditionally.
    Several ``for`` clauses are loops nested in their order, each ``if`` inside
    the loop of the clause it follows, as Python runs them."""
    gens = node.generators
    if any(g.is_async for g in gens) or not any(
            over_runtime_list(lo, g.iter) or g.ifs or _reversed(lo, g.iter) for g in gens):
        return None
    # the comprehension's own variables: renamed where they would hide a
    # variable of the function; and a name for its list
    renames = {t.id: _unused(lo, t.id) for g in gens for t in walk(g.target)
               if isinstance(t, ast.Name) and t.id in lo.env}
    items = _unused(lo, var or "items")
    own = [t.id for g in gens for t in walk(g.target) if isinstance(t, ast.Name)]
    start = [ast.Assign([ast.Name(items, ast.Store())], ast.List([], ast.Load()))]
    seen: dict[str, str] = {}  # the renames of the clauses so far: what a clause reads
    heads = []
    for k, gen in enumerate(gens):
        over = _Rename(dict(seen)).visit(_copy(gen.iter))
        if k == 0 and isinstance(over, (ast.List, ast.Tuple)):
            # a display: a loop runs over it by name
            seq = _unused(lo, "seq")
            own.append(seq)
            start.insert(0, ast.Assign([ast.Name(seq, ast.Store())], over))
            over = ast.Name(seq, ast.Load())
        seen.update((t.id, renames[t.id]) for t in walk(gen.target)
                    if isinstance(t, ast.Name) and t.id in renames)
        rename = _Rename(dict(seen))
        heads.append((rename.visit(_copy(gen.target)), over,
                      [rename.visit(_copy(c)) for c in gen.ifs]))
    elt = _Rename(renames).visit(_copy(node.elt))
    body: ast.stmt = ast.Expr(ast.Call(ast.Attribute(ast.Name(items, ast.Load()), "append",
                                                     ast.Load()), [elt], []))
    for target, over, conds in reversed(heads):
        for cond in reversed(conds):
            body = ast.If(cond, [body], [])
        body = ast.For(_store(target), over, [body], [], None)
    loop = body
    for stmt in (*start, loop):
        _located(stmt, node)
    # the list may be made inside a loop or branch: one per run of its body
    inner, lo.inner_lists = lo.__dict__.get("inner_lists"), True
    try:
        checkpoint.expression_block(lo, [*start, loop])
        out = lo.env[items]
    finally:
        lo.inner_lists = inner
        lo.env.pop(items, None)
        for n in own:
            lo.env.pop(renames.get(n, n), None)
    return out


def _runtime_list(lo, node: ast.expr) -> bool:
    """``node`` a list of any length: a name holding one, a slice of one, a
    comprehension :func:`runtime` makes one of, or a join of lists one of
    which is such a list (``ys + xs + ys``: Python adds from the left, so the
    outer join's left side is the inner join)."""
    if list_slices.is_runtime_slice(lo, node):
        return True
    if isinstance(node, ast.BinOp) and structures.repeated(node) is not None:
        return True  # `[c] * n`: a list made when the code runs
    if _join_of_lists(node):
        return (_runtime_list(lo, node.left) or _runtime_list(lo, node.right)) \
            and _a_list(lo, node.left) and _a_list(lo, node.right)
    if isinstance(node, ast.ListComp):
        return any(over_runtime_list(lo, g.iter) or bool(g.ifs) or _reversed(lo, g.iter)
                   for g in node.generators)
    value = lo.env.get(node.id) if isinstance(node, ast.Name) else None
    return isinstance(value, ir.Value) and value.kind == "list" and (
        structures.is_runtime(lo, value) or id(value) in lo.grown)


def _a_list(lo, node: ast.expr) -> bool:
    if _join_of_lists(node):
        return _a_list(lo, node.left) and _a_list(lo, node.right)
    return _runtime_list(lo, node) or isinstance(node, (ast.List, ast.ListComp)) or (
        isinstance(node, ast.Name) and isinstance(lo.env.get(node.id), structures.StaticList))


def _join_of_lists(node: ast.expr) -> bool:
    return isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add)


def joined(lo, node: ast.BinOp, var: str | None = None):
    """``xs + ys`` of two lists, one of any length at least (see the module
    docstring): the new list, grown at run time; None for anything else."""
    if not (isinstance(node.op, ast.Add) and (_runtime_list(lo, node.left)
                                              or _runtime_list(lo, node.right))
            and _a_list(lo, node.left) and _a_list(lo, node.right)):
        return None
    items = _unused(lo, var or "joined")
    lo.env[items] = None  # (taken: an inner join's names differ, `ys + xs + ys`)
    start: list[ast.stmt] = [ast.Assign([ast.Name(items, ast.Store())], ast.List([], ast.Load()))]
    own = []
    for side in (node.left, node.right):
        v = _unused(lo, "item")
        own.append(v)
        lo.env[v] = None  # (taken: the second loop's variable differs)
        over = _copy(side)
        if isinstance(over, (ast.List, ast.ListComp, ast.BinOp)):
            # a display or an inner join: a loop runs over a name
            seq = _unused(lo, "seq")
            own.append(seq)
            lo.env[seq] = None
            start.append(ast.Assign([ast.Name(seq, ast.Store())], over))
            over = ast.Name(seq, ast.Load())
        append = ast.Expr(ast.Call(ast.Attribute(ast.Name(items, ast.Load()), "append",
                                                 ast.Load()), [ast.Name(v, ast.Load())], []))
        start.append(ast.For(ast.Name(v, ast.Store()), over, [append], [], None))
    for n in own:
        lo.env.pop(n, None)
    for stmt in start:
        _located(stmt, node)
    inner, lo.inner_lists = lo.__dict__.get("inner_lists"), True
    try:
        # (its loops are the expression's, not the code's: checkpoint=True leaves them taped)
        checkpoint.expression_block(lo, start)
        return lo.env[items]
    finally:
        lo.inner_lists = inner
        lo.env.pop(items, None)
        for n in own:
            lo.env.pop(n, None)


def _unused(lo, base: str) -> str:
    """A name neither the environment nor the generated code uses yet."""
    name, k = base, 0
    while name in lo.env or name in lo.namer.taken or name in lo.local_fns:
        k += 1
        name = f"{base}_{k}"
    return name


def _copy(node: ast.AST) -> ast.AST:
    # (a copy of the nodes, not of the text: a name s2s-ad spelled as a chain,
    # `consts.COEFFS` or `self.f`, stays one name)
    return copy.deepcopy(node) if isinstance(node, ast.expr) else node


def _located(stmt: ast.stmt, node: ast.expr) -> None:
    """Every node the loop is built of where the comprehension is (so that a
    refusal of the loop points at the comprehension), but the parts of the
    comprehension it copies, which keep their own places: a refusal inside
    the item points at it, and a message quoting it quotes that code (not the
    whole comprehension in place of each name)."""
    for n in walk(stmt):
        if getattr(n, "lineno", None) is None:
            n.lineno, n.col_offset = node.lineno, node.col_offset
            n.end_lineno, n.end_col_offset = node.end_lineno, node.end_col_offset


def _store(target: ast.expr) -> ast.expr:
    for n in walk(target):
        if isinstance(n, (ast.Name, ast.Tuple, ast.List)):
            n.ctx = ast.Store()
    return target


class _Rename(ast.NodeTransformer):
    def __init__(self, renames: dict[str, str]):
        self.renames = renames

    def visit_Name(self, node: ast.Name):
        new = self.renames.get(node.id)
        return ast.copy_location(ast.Name(new, node.ctx), node) if new else node
