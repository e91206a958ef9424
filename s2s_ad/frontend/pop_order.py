"""``xs.pop()`` inside an expression, lowered in Python's evaluation order.

Contract: :func:`hoist` rewrites, in place, every statement of a function
definition (nested ones included) whose own expression pops a list inside a
larger expression (``a = xs.pop() * 2.0``, ``s + f(xs.pop())``,
``return xs.pop(0) * xs[0]``) into statements that compute the same values
in the same order: each pop becomes ``xs_pop = xs.pop(...)`` (the whole
statement form the rest of the frontend lowers: an item of a list known
while lowering, or a stack read from its end, :mod:`s2s_ad.frontend.generated`),
and everything Python evaluates *before* that pop, which a pop could change
the value of (an item ``xs[0]``, a call, arithmetic on what may be a list),
is computed first into a temporary of its own, in order. A constant or a
name is left where it is (a pop rebinds no name), as is the function a call
names (``math.sin``, ``obj.method``): Python calls it after its arguments.
A statement whose whole value is the pop (``v = xs.pop()``,
``y[i] = T.pop()``, ``v += T.pop()``) is left as it is.

Before → after::

    a = xs[0] * xs.pop()              before_pop = xs[0]
                                      xs_pop = xs.pop()
                                      a = before_pop * xs_pop
    return xs.pop(0) * xs[0]          xs_pop = xs.pop(0)
                                      return xs_pop * xs[0]
    c[i] += xs.pop()                  before_pop = c[i]
                                      xs_pop = xs.pop()
                                      c[i] = before_pop + xs_pop

Refused, located: a pop that may not run (under ``and``/``or`` after the
first operand, in an arm of ``a if c else b``, in a chained comparison after
its first, in a comprehension or a ``lambda``), a pop in a ``while``
condition (evaluated again at every iteration), a pop evaluated after a
``*`` or ``**`` unpacking in the same call or display, and any other place
whose order this pass does not follow (an assignment's target, an
attribute's augmented assignment): each with the rewrite, a pop into a name
of its own first.
"""

from __future__ import annotations

import ast
import copy

from s2s_ad.names import Namer, identifiers
from s2s_ad.syntax_walk import walk

__all__ = ["hoist", "is_pop"]

_REWRITE = "pop into a name of its own first (`v = xs.pop()`), where it always runs"
_SCOPES = (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def is_pop(node) -> bool:
    """``xs.pop(...)`` on a name."""
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
        and node.func.attr == "pop" and isinstance(node.func.value, ast.Name)


def hoist(src) -> None:
    """Rewrite ``src.tree``'s pops inside expressions (see the module)."""
    tree = src.tree
    if not any(is_pop(n) for n in walk(tree)):
        return
    hoister = _Hoister(src, Namer(reserved=identifiers(tree)))
    for node in list(walk(tree)):
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                block[:] = [s for stmt in block for s in hoister.statement(stmt)]


def _has_pop(node) -> bool:
    return node is not None and any(is_pop(n) for n in walk(node))


def _first_pop(node):
    return next(n for n in walk(node) if is_pop(n))


def _whole_pop(value) -> bool:
    """The pop is the whole value, its arguments popping nothing."""
    return is_pop(value) and not any(_has_pop(a) for a in value.args) \
        and not any(_has_pop(k.value) for k in value.keywords)


class _Hoister:
    def __init__(self, src, namer: Namer):
        self.src, self.namer = src, namer
        self.pre: list[ast.stmt] = []

    def refuse(self, node, what: str):
        pop = _first_pop(node)
        return self.src.error(pop, f"`{ast.unparse(pop)}` {what}, which s2s-ad does not "
                              f"order; {_REWRITE}")

    def statement(self, stmt: ast.stmt) -> list[ast.stmt]:
        """``stmt`` and, before it, what its pops need computed first."""
        self.pre = []
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
            targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
            for t in targets:
                if _has_pop(t):
                    raise self.refuse(t, "is in an assignment's target")
            if stmt.value is None or not _has_pop(stmt.value) or _whole_pop(stmt.value):
                return [stmt]
            stmt.value = self.lower(stmt.value)
        elif isinstance(stmt, ast.AugAssign):
            if _has_pop(stmt.target):
                raise self.refuse(stmt.target, "is in an assignment's target")
            if not _has_pop(stmt.value) or _whole_pop(stmt.value):
                return [stmt]
            stmt = self.augmented(stmt)
        elif isinstance(stmt, (ast.Expr, ast.Return)):
            if not _has_pop(stmt.value) or _whole_pop(stmt.value):
                return [stmt]
            stmt.value = self.lower(stmt.value)
        elif isinstance(stmt, ast.If):
            if not _has_pop(stmt.test):
                return [stmt]
            stmt.test = self.lower(stmt.test)  # evaluated once, before either arm
        elif isinstance(stmt, (ast.For, ast.AsyncFor)):
            if _has_pop(stmt.target):
                raise self.refuse(stmt.target, "is in a loop's target")
            if not _has_pop(stmt.iter):
                return [stmt]
            stmt.iter = self.lower(stmt.iter)  # evaluated once, before the loop
        elif isinstance(stmt, ast.While):
            if _has_pop(stmt.test):
                raise self.refuse(stmt.test, "is in a `while` condition (evaluated again "
                                  "at every iteration)")
            return [stmt]
        else:
            for field in ("test", "msg", "exc", "cause", "items", "targets", "value"):
                part = getattr(stmt, field, None)
                for p in part if isinstance(part, list) else [part]:
                    if isinstance(p, ast.AST) and _has_pop(p):
                        raise self.refuse(p, f"is in a `{type(stmt).__name__.lower()}` "
                                          "statement")
            return [stmt]
        for s in self.pre:
            ast.fix_missing_locations(s)
        return self.pre + [stmt]

    def augmented(self, stmt: ast.AugAssign) -> ast.stmt:
        """``t op= e``: Python reads ``t`` before ``e``. A name's value is
        the object it is bound to (a pop rebinds no name); an item is read
        into a temporary first and written back with ``=``."""
        target = stmt.target
        if isinstance(target, ast.Name):
            stmt.value = self.lower(stmt.value)
            return stmt
        if not (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)):
            raise self.refuse(stmt.value, "is added into an attribute or a computed "
                              "container")
        key = target.slice
        if not _inert(key):
            key = self.temporary(key, "key")
        old = self.temporary(ast.Subscript(ast.Name(target.value.id, ast.Load()), key,
                                           ast.Load()), "before_pop", stmt)
        value = self.lower(stmt.value)
        write = ast.Subscript(ast.Name(target.value.id, ast.Load()), copy.deepcopy(key),
                              ast.Store())
        plain = ast.Assign([ast.copy_location(write, target)],
                           ast.copy_location(ast.BinOp(old, stmt.op, value), stmt.value))
        return ast.copy_location(plain, stmt)

    def temporary(self, value: ast.expr, base: str, at=None) -> ast.Name:
        name = self.namer.fresh(base)
        where = at if at is not None else value
        self.pre.append(ast.copy_location(
            ast.Assign([ast.copy_location(ast.Name(name, ast.Store()), where)], value), where))
        return ast.copy_location(ast.Name(name, ast.Load()), where)

    def lower(self, e: ast.expr) -> ast.expr:
        """``e`` with its pops, and what it evaluates before its last pop,
        moved into ``self.pre`` in evaluation order."""
        if not _has_pop(e):
            return e
        if isinstance(e, _SCOPES):
            raise self.refuse(e, "is in a comprehension or a `lambda` (run any number of "
                              "times, or not at all)")
        slots = self.slots(e)
        last = max((k for k, (_, _, get) in enumerate(slots) if _has_pop(get())), default=-1)
        for k, (owner, kind, get) in enumerate(slots):
            child = get()
            if k > last:
                break
            if isinstance(child, ast.Starred) or kind == "**":
                raise self.refuse(e, "follows a `*`/`**` unpacking in the same call or display")
            new = self.lower(child)
            if k < last and not _inert(new, kind == "func"):
                new = self.temporary(new, "before_pop")
            _put(owner, kind, new)
        if is_pop(e):
            return self.temporary(e, f"{e.func.value.id}_pop")
        return e

    def slots(self, e: ast.expr) -> list:
        """``e``'s operands in the order Python evaluates them: (owner, field
        or (field, index), getter); a pop in an operand that may not run is
        refused here."""
        def one(owner, field):
            return (owner, field, lambda: getattr(owner, field))

        def item(owner, field, i):
            return (owner, (field, i), lambda: getattr(owner, field)[i])

        if isinstance(e, ast.BoolOp):
            for v in e.values[1:]:
                if _has_pop(v):
                    raise self.refuse(v, f"is under `{'and' if isinstance(e.op, ast.And) else 'or'}`"
                                      " (it may not run)")
            return [item(e, "values", 0)]
        if isinstance(e, ast.IfExp):
            for v in (e.body, e.orelse):
                if _has_pop(v):
                    raise self.refuse(v, "is in an arm of `a if c else b` (it may not run)")
            return [one(e, "test")]
        if isinstance(e, ast.Compare):
            for v in e.comparators[1:]:
                if _has_pop(v):
                    raise self.refuse(v, "is in a chained comparison after its first (it may "
                                      "not run)")
            return [one(e, "left"), item(e, "comparators", 0)]
        if isinstance(e, ast.BinOp):
            return [one(e, "left"), one(e, "right")]
        if isinstance(e, ast.UnaryOp):
            return [one(e, "operand")]
        if isinstance(e, ast.Call):
            out = [] if is_pop(e) else [(e, "func", lambda: e.func)]
            out += [item(e, "args", i) for i in range(len(e.args))]
            for kw in e.keywords:
                out.append((kw, "value" if kw.arg is not None else "**", _getter(kw)))
            return out
        if isinstance(e, ast.Subscript):
            return [one(e, "value"), one(e, "slice")]
        if isinstance(e, ast.Slice):
            return [one(e, f) for f in ("lower", "upper", "step") if getattr(e, f) is not None]
        if isinstance(e, ast.Attribute):
            return [one(e, "value")]
        if isinstance(e, ast.NamedExpr):
            return [one(e, "value")]
        if isinstance(e, (ast.Tuple, ast.List, ast.Set)):
            return [item(e, "elts", i) for i in range(len(e.elts))]
        if isinstance(e, ast.Dict):
            out = []
            for i, k in enumerate(e.keys):
                if k is None:  # `{**d, ...}`
                    out.append((e, "**", lambda i=i: e.values[i]))
                else:
                    out += [item(e, "keys", i), item(e, "values", i)]
            return out
        raise self.refuse(e, f"is inside a `{type(e).__name__}` expression")


def _getter(kw):
    return lambda: kw.value


def _put(owner, kind, value) -> None:
    if isinstance(kind, tuple):
        getattr(owner, kind[0])[kind[1]] = value
    else:
        setattr(owner, kind, value)


def _inert(e, callee: bool = False) -> bool:
    """What a pop evaluated after ``e`` cannot change: a constant, a name (a
    pop rebinds none), and, as the function a call names, an attribute of
    one (``math.sin``, ``obj.method``: called after the arguments)."""
    if isinstance(e, (ast.Constant, ast.Name)):
        return True
    return callee and isinstance(e, ast.Attribute) and _inert(e.value, True)
