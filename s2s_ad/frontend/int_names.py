"""Names that hold Python ints, and arrays of one axis, read from the text alone.

Contract: ``int_names(tree)`` is the set of local names of a function whose
every binding is an int by Python's rules, whatever the arguments: an int
constant, ``len(...)``, ``int(...)``, a ``range`` loop's variable, and
``+ - * // %`` and unary ``-`` of those (never ``/`` or ``**``). A parameter
is an int only when annotated ``int``. ``is_int(e, ints)`` says the same of an
expression. ``one_axis(tree, name, ints)``: ``name`` is bound once, at the top
level of the function, to ``np.zeros(n)``, ``np.ones(n)``, ``np.empty(n)``
or ``np.full(n, v)`` with ``n`` an int, or to ``np.zeros_like(z)``,
``np.ones_like(z)``, ``np.copy(z)``, ``z.copy()`` (with ``+ 0.0``) of such a
``z``: an array of one axis, whose element at an int index is a NumPy scalar,
a copy no later write changes.

    ints:      i = 0; n_i = len(a); i = i + 1; for k in range(n_i): ...   -> {i, n_i, k}
    one_axis:  y = np.zeros(len(a))                                        -> y
"""

from __future__ import annotations

import ast
from s2s_ad import syntax_walk
from s2s_ad.syntax_walk import walk

__all__ = ["int_names", "int_tapes", "is_int", "new_list", "one_axis", "slots"]

_INT_OPS = (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod)


def is_int(e: ast.expr, ints: set) -> bool:
    if isinstance(e, ast.Constant):
        return type(e.value) is int
    if isinstance(e, ast.Name):
        return e.id in ints
    if isinstance(e, ast.BinOp):
        return isinstance(e.op, _INT_OPS) and is_int(e.left, ints) and is_int(e.right, ints)
    if isinstance(e, ast.UnaryOp):
        return isinstance(e.op, (ast.USub, ast.UAdd)) and is_int(e.operand, ints)
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Name) and len(e.args) == 1 \
            and not e.keywords:
        return e.func.id in ("len", "int") and e.func.id not in _shadowed(ints)
    if _positions_of(e, ("max", "min"), ints):
        return True  # max(range(len(xs)), key=xs.__getitem__): a position
    if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and e.func.attr == "pop" \
            and not e.args and not e.keywords and isinstance(e.func.value, ast.Name):
        return e.func.value.id in getattr(ints, "tapes", ())  # a stack of ints
    if isinstance(e, ast.Subscript) and isinstance(e.value, ast.Name) \
            and isinstance(e.ctx, ast.Load) and not isinstance(e.slice, ast.Slice):
        return e.value.id in getattr(ints, "tapes", ()) \
            or e.value.id in getattr(ints, "orders", ())  # an item of a tape of ints, a position
    return False


def _positions_of(e: ast.expr, functions: tuple, ints) -> bool:
    """Is ``e`` ``f(range(...), key=...)``, ``f`` one of ``functions``
    (``max``, ``min``, ``sorted``: the position of a run-time max/min, or the
    order of a run-time sort, as s2s-ad writes them), ``range`` and ``f``
    Python's own?"""
    return isinstance(e, ast.Call) and isinstance(e.func, ast.Name) \
        and e.func.id in functions and len(e.args) == 1 \
        and all(k.arg in ("key", "reverse") for k in e.keywords) \
        and isinstance(e.args[0], ast.Call) and isinstance(e.args[0].func, ast.Name) \
        and e.args[0].func.id == "range" \
        and not {e.func.id, "range"} & _shadowed(ints)


def _shadowed(ints) -> set:
    return getattr(ints, "shadowed", set())


class _Ints(set):
    shadowed: set
    orders: set
    tapes: set


def int_tapes(tree: ast.FunctionDef, globals_: dict | None = None, given=()) -> set:
    """Lists ``T = []`` used only by ``T.append(e)`` (``e`` an int), ``T.pop()``,
    ``T[k]`` and ``len(T)``, or ``T = [None] * n`` whose slots are filled by
    ``T[k] = e`` (``e`` an int): tapes of ints, whose pops and items are ints.
    Returned in a tuple (a forward function's tape) they still are. ``given``:
    parameters known to be such tapes (a backward function's tape items its
    forward function fills with ints), used the same ways."""
    return _fixed_point(tree, globals_, given)[1]


def int_names(tree: ast.FunctionDef, globals_: dict | None = None) -> set:
    """The names of ``tree`` that hold ints on every path (see the module);
    ``globals_``: the module's names (a ``len`` of its own is not the builtin)."""
    return _fixed_point(tree, globals_)[0]


def _stack_candidates(tree: ast.FunctionDef, given=()) -> dict:
    """``T`` -> the expressions appended to it, for lists used as stacks only."""
    parents = syntax_walk.parents(tree)
    out: dict = {g: [] for g in given}
    bad = set()
    for n in walk(tree):
        if not isinstance(n, ast.Name):
            continue
        parent = parents.get(id(n))
        holder = parent
        while isinstance(holder, ast.Tuple) and isinstance(n.ctx, ast.Load):
            holder = parents.get(id(holder))
        if holder is not parent and isinstance(holder, ast.Return):
            continue  # returned in a tuple (a forward function's tape)
        if isinstance(n.ctx, ast.Store):
            if not (isinstance(parent, ast.Assign) and parent.targets == [n]
                    and new_list(parent.value)):
                bad.add(n.id)
            continue
        if isinstance(parent, ast.Subscript) and parent.value is n \
                and isinstance(parent.ctx, ast.Store) and not isinstance(parent.slice, ast.Slice):
            holder = parents.get(id(parent))
            if isinstance(holder, ast.Assign) and holder.targets == [parent]:
                out.setdefault(n.id, []).append(holder.value)  # `T[k] = e`: a slot filled
                continue
        call = parents.get(id(parent))
        if isinstance(parent, ast.Attribute) and parent.value is n and isinstance(call, ast.Call) \
                and call.func is parent and not call.keywords:
            if parent.attr == "append" and len(call.args) == 1:
                out.setdefault(n.id, []).append(call.args[0])
                continue
            if parent.attr == "pop" and not call.args:
                out.setdefault(n.id, [])
                continue
        if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) \
                and parent.func.id == "len" and parent.args == [n]:
            continue
        if isinstance(parent, ast.Subscript) and parent.value is n \
                and isinstance(parent.ctx, ast.Load) and not isinstance(parent.slice, ast.Slice):
            out.setdefault(n.id, [])  # an item read by index (a tape of slots, appended)
            continue
        bad.add(n.id)
    return {k: v for k, v in out.items() if k not in bad and (v or k in given)}


def slots(e: ast.expr) -> bool:
    """``[None] * n``: a tape of slots, each filled by ``T[k] = e`` before it is read."""
    return isinstance(e, ast.BinOp) and isinstance(e.op, ast.Mult) \
        and isinstance(e.left, ast.List) and len(e.left.elts) == 1 \
        and isinstance(e.left.elts[0], ast.Constant) and e.left.elts[0].value is None


def new_list(e: ast.expr) -> bool:
    """``[]`` or ``[None] * n``: a tape made empty or of slots."""
    return isinstance(e, ast.List) and not e.elts or slots(e)


def _fixed_point(tree: ast.FunctionDef, globals_: dict | None, given=()) -> tuple[set, set]:
    import builtins
    binds: dict[str, list] = {}
    for n in walk(tree):
        if isinstance(n, (ast.FunctionDef, ast.Lambda)) and n is not tree:
            for a in walk(n.args):
                if isinstance(a, ast.arg):
                    binds.setdefault(a.arg, []).append(None)
        if isinstance(n, ast.Assign):
            for t in n.targets:
                pairs = {}  # `a, b = x, y` binds a to x and b to y
                if isinstance(t, ast.Tuple) and isinstance(n.value, ast.Tuple) \
                        and len(t.elts) == len(n.value.elts):
                    pairs = {id(e): v for e, v in zip(t.elts, n.value.elts)}
                for m in walk(t):
                    if isinstance(m, ast.Name) and isinstance(m.ctx, ast.Store):
                        binds.setdefault(m.id, []).append(n.value if m is t
                                                          else pairs.get(id(m)))
        elif isinstance(n, ast.AnnAssign) and isinstance(n.target, ast.Name):
            binds.setdefault(n.target.id, []).append(n.value)
        elif isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
            binds.setdefault(n.target.id, []).append(
                ast.BinOp(ast.Name(n.target.id, ast.Load()), n.op, n.value))
        elif isinstance(n, (ast.For, ast.comprehension)):
            loop = n.iter
            ranged = isinstance(loop, ast.Call) and isinstance(loop.func, ast.Name) \
                and loop.func.id == "range" and not loop.keywords
            for m in walk(n.target):
                if isinstance(m, ast.Name) and isinstance(m.ctx, ast.Store):
                    binds.setdefault(m.id, []).append(
                        ("range", loop.args) if ranged and m is n.target else None)
        elif isinstance(n, ast.NamedExpr):
            binds.setdefault(n.target.id, []).append(None)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            for a in n.names:
                binds.setdefault((a.asname or a.name).split(".")[0], []).append(None)
        elif isinstance(n, (ast.With, ast.ExceptHandler, ast.Global, ast.Nonlocal)):
            for m in walk(n):
                if isinstance(m, ast.Name) and isinstance(m.ctx, ast.Store):
                    binds.setdefault(m.id, []).append(None)
    for a in tree.args.posonlyargs + tree.args.args + tree.args.kwonlyargs:
        ann = a.annotation
        binds.setdefault(a.arg, []).append(
            ast.Constant(0) if isinstance(ann, ast.Name) and ann.id == "int" else None)
    for a in (tree.args.vararg, tree.args.kwarg):
        if a is not None:
            binds.setdefault(a.arg, []).append(None)
    ints = _Ints(binds)  # the greatest fixed point: drop what some binding makes not an int
    ints.shadowed = {n for n in binds if n in ("len", "int", "range")} | {
        n for n in ("len", "int", "range")
        if globals_ is not None and n in globals_ and globals_[n] is not getattr(builtins, n)}
    stacks = _stack_candidates(tree, given)
    ints.tapes = set(stacks)
    ints.orders = {n for n, bs in binds.items()  # perm = sorted(range(len(xs)), key=...)
                   if bs and all(b is not None and not isinstance(b, tuple)
                                 and _positions_of(b, ("sorted",), ints) for b in bs)}
    changed = True
    while changed:
        changed = False
        for name in list(ints):
            for b in binds[name]:
                ok = b is not None and (all(is_int(a, ints) for a in b[1]) if isinstance(b, tuple)
                                        else is_int(b, ints))
                if not ok:
                    ints.discard(name)
                    changed = True
                    break
        for tape in list(ints.tapes):
            if not all(is_int(e, ints) for e in stacks[tape]):
                ints.tapes.discard(tape)
                changed = True
    ints -= ints.shadowed  # (kept: what is_int needs, the shadowed names and the stacks)
    return ints, set(ints.tapes)


def one_axis(tree: ast.FunctionDef, name: str, ints: set, numpy_names=("np", "numpy"),
             _seen: frozenset = frozenset()) -> bool:
    """Is ``name`` an array of one axis (see the module)?"""
    if name in _seen:
        return False
    binds = [n for n in walk(tree) if isinstance(n, (ast.Assign, ast.AnnAssign, ast.AugAssign,
                                                           ast.NamedExpr, ast.For))
             and any(isinstance(m, ast.Name) and m.id == name and isinstance(m.ctx, ast.Store)
                     for t in ([n.target] if not isinstance(n, ast.Assign) else n.targets)
                     for m in walk(t))]
    plain = [b for b in binds if not isinstance(b, ast.AugAssign)]
    if len(plain) != 1 or plain[0] not in tree.body or not isinstance(plain[0], ast.Assign) \
            or len(plain[0].targets) != 1 or not isinstance(plain[0].targets[0], ast.Name):
        return False
    if any(not (isinstance(b.target, ast.Name)) for b in binds if isinstance(b, ast.AugAssign)):
        return False
    value = plain[0].value
    if isinstance(value, ast.BinOp) and isinstance(value.op, (ast.Add, ast.Sub)) \
            and isinstance(value.right, ast.Constant) and type(value.right.value) is float:
        value = value.left  # np.zeros_like(x) + 0.0
    if not (isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
            and not value.keywords):
        return False
    f, args = value.func, value.args
    numpy_call = isinstance(f.value, ast.Name) and f.value.id in numpy_names
    seen = _seen | {name}
    if numpy_call and f.attr in ("zeros", "ones", "empty") and len(args) == 1:
        return is_int(args[0], ints)
    if numpy_call and f.attr == "full" and len(args) == 2:
        return is_int(args[0], ints)
    if numpy_call and f.attr in ("zeros_like", "ones_like", "copy") and len(args) == 1:
        return isinstance(args[0], ast.Name) and one_axis(tree, args[0].id, ints, numpy_names, seen)
    if f.attr == "copy" and not args and isinstance(f.value, ast.Name) \
            and f.value.id not in numpy_names:
        return one_axis(tree, f.value.id, ints, numpy_names, seen)
    return False
