"""Straight-line statements made as compact as a person writes them.

Contract: :func:`run` rewrites a generated function's statements in place,
each rewrite exact — the same IEEE operations on the same operands, in the
same order, so every result is bitwise the one of the unrewritten code — and
none across a branch, a loop or a comment line (``# forward pass``,
``# reverse sweep``):

* **negations folded**: a temporary ``t = -w`` (``w`` a name) is read as
  ``-w`` where it is read; an added negation becomes a subtraction
  (``d += -e`` → ``d -= e``, ``a + -b`` → ``a - b``: IEEE defines ``a - b``
  as ``a + (-b)``), and two negations in one product or quotient cancel
  (``-a * (-b / c)`` → ``a * (b / c)``: negation only flips the sign bit,
  and rounding is symmetric);
* **a value added to itself doubled**: ``d = e; d += e`` (the two operands
  of ``x * x`` giving ``x`` the same contribution, where it is ``x``'s first)
  becomes ``d = 2 * e`` (``e + e`` and ``2 * e`` are the same number:
  doubling is exact). Onto an adjoint that already holds a value it is not
  made: ``(d + e) + e`` and ``d + 2 * e`` round differently;
* **single-use temporaries fused into their reader**: a temporary of the
  generated code (a value, tangent or adjoint the user did not name:
  :attr:`~s2s_ad.emit.code.CodeFunction.temps`) assigned once and read once,
  later in the same straight-line run, is written inside its reader's
  expression, when nothing in between writes a name it reads, and, where it
  may raise (a division, a call, an index; in NumPy code any operator), when
  nothing in between and nothing its reader evaluates first may raise or has
  an effect (so the same exception is raised first). A temporary that reads
  an element or an attribute, and every temporary of NumPy code, is not moved
  past a statement that writes into an object (``y[i] = v``, ``d += g``): a
  view may share the buffer.

Before → after (``s2 * s3`` and ``log1p(c * c)`` of the 50-term benchmark)::

    dt54 = -dout                  ds2 = -dout * s3
    ds2 = dt54 * s3               ds3 = -dout * s2
    ds3 = dt54 * s2        ──▶    dc = 2 * (-dout / (1 + t47) * c)
    dt48 = -dout
    dt47 = dt48 / (1 + t47)
    dc = dt47 * c
    dc += dt47 * c

:data:`ENABLED` (:func:`disabled`) switches every rewrite off, the forward
mode's own folding of temporaries (:mod:`s2s_ad.forward.transform`) too: the
tests compare the results of both forms bit for bit.
"""

from __future__ import annotations

import ast
import re
import contextlib
import copy
from collections import Counter

from s2s_ad.emit.code import Block, CodeFunction, Stmt, name_nodes, negated
from s2s_ad.emit.peephole import _rw, names_in
from s2s_ad.syntax_walk import child_fields, child_nodes, walk

ENABLED = True
"""False: generated code keeps one statement per operation (see :func:`disabled`)."""

MAX_DEPTH = 40
"""No temporary is fused into an expression that would nest deeper."""

PURE_BUILTINS = frozenset({"abs", "min", "max", "float", "int", "len", "sum", "range"})


@contextlib.contextmanager
def disabled():
    """Generate code without the rewrites of this module while inside."""
    global ENABLED
    before, ENABLED = ENABLED, False
    try:
        yield
    finally:
        ENABLED = before


def run(fn: CodeFunction) -> None:
    """Rewrite ``fn``'s body (see the module's contract)."""
    if not ENABLED:
        return
    modules = fn.source.modules if fn.source is not None else {}
    arrays = bool(fn.helpers) or "numpy" in modules \
        or any(getattr(v, "kind", "") == "array" for v in _values(fn))
    counts = names_in(Block(ast.If(fn.returns, [], []), fn.body))
    _Fuse(fn.temps, set(modules.values()), arrays, counts).block(fn.body)


def fold(stmts: list, returns: ast.expr, temps: set[str], modules: dict, arrays: bool) -> None:
    """The rewrites on statements not yet made a function (the forward
    mode's, before its copies are read through)."""
    if ENABLED:
        counts = names_in(Block(ast.If(returns, [], []), stmts))
        _Fuse(temps, set(modules.values()), arrays, counts).block(stmts)


def _values(fn: CodeFunction):
    from s2s_ad import ir
    func = fn.source
    if func is None:
        return
    yield from func.param_values
    for node in ir.walk(func.body):
        yield from ir.defined(node)


class _Fuse:
    def __init__(self, temps: set[str], modules: set[str], arrays: bool, counts: Counter):
        self.temps = temps
        self.modules = modules
        self.arrays = arrays
        self.counts = counts

    def block(self, stmts: list) -> None:
        for s in stmts:
            if isinstance(s, Block):
                self.block(s.body)
                self.block(s.orelse)
        start = 0
        for k in range(len(stmts) + 1):
            if k == len(stmts) or isinstance(stmts[k], Block) or stmts[k].node is None:
                if k - start > 0:
                    self.run(stmts, start, k)
                start = k + 1
        stmts[:] = [s for s in stmts if s is not None]
        for s in stmts:
            # (in NumPy code only the reverse sweep's: its adjoints are floats,
            # where an unsigned integer array's negation would wrap)
            if isinstance(s, Stmt) and (not self.arrays or s.target):
                _signs(s)

    def run(self, stmts: list, lo: int, hi: int) -> None:
        """The rewrites on the straight-line run ``stmts[lo:hi]`` (and the
        head of an ``if`` or ``for`` after it, evaluated once, after the run)."""
        for i in range(lo, hi):
            self.negation(stmts, i, hi)
        for i in range(lo, hi - 1):
            self.double(stmts, i)
        if not self.arrays:
            for i in range(lo, hi - 1):
                while self.chain(stmts, i):
                    pass
        head = stmts[hi] if hi < len(stmts) and isinstance(stmts[hi], Block) \
            and isinstance(stmts[hi].head, (ast.If, ast.For)) else None
        for i in reversed(range(lo, hi)):
            self.fuse(stmts, i, hi, head)

    # -- negations ---------------------------------------------------------------

    def negation(self, stmts: list, i: int, hi: int) -> None:
        """``t = -w`` read only as ``-w``, each read later in this run."""
        name = self._temp(stmts[i])
        if name is None:
            return
        value = stmts[i].node.value
        if not (isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub)
                and isinstance(value.operand, ast.Name)) or value.operand.id == name:
            return
        w = value.operand.id
        uses, seen = [], 1
        for j in range(i + 1, hi):
            r = stmts[j]
            if r is None:
                continue
            loads = [n for n in name_nodes(r.node) if n.id == name]
            if any(not isinstance(n.ctx, ast.Load) for n in loads):
                return
            if loads:
                uses.append((r, loads))
                seen += len(loads)
            if seen == self.counts[name]:
                break
            if w in _rw(r)[1]:
                return
        if seen != self.counts[name] or not uses or (self.arrays and seen > 2):
            return  # (an array negated once, not once per reader)
        for r, loads in uses:
            _replace(r.node, {id(n): ast.UnaryOp(ast.USub(), ast.Name(w, ast.Load()))
                              for n in loads})
        self.counts[w] += seen - 2
        self.counts[name] = 0
        stmts[i] = None

    # -- doubling ------------------------------------------------------------------

    def double(self, stmts: list, i: int) -> None:
        """``d = e; d += e`` → ``d = 2.0 * e`` (``2 * e`` outside the reverse
        sweep): the same number, ``e + e``, bit for bit."""
        s = stmts[i]
        j = _next(stmts, i)
        r = None if j is None else stmts[j]
        if s is None or r is None or isinstance(r, Block) or r.node is None:
            return
        if not (isinstance(s.node, ast.Assign) and len(s.node.targets) == 1
                and isinstance(s.node.targets[0], ast.Name)):
            return
        if not (isinstance(r.node, ast.AugAssign) and isinstance(r.node.op, ast.Add)
                and isinstance(r.node.target, ast.Name)):
            return
        d = s.node.targets[0].id
        e = s.node.value
        # (a computed value, a fresh object: ``d += e`` on a name would add
        # into the object ``e`` names)
        if r.node.target.id != d or not isinstance(e, ast.BinOp) \
                or ast.dump(e) != ast.dump(r.node.value) or not self._pure(e) \
                or any(n.id == d for n in name_nodes(e)):
            return
        # an adjoint is a float (or an array of them): `2.0 * e`, as the rules'
        # constants are written; `2 * e` elsewhere (a forward value may be an int)
        s.node.value = ast.BinOp(ast.Constant(2.0 if s.target else 2), ast.Mult(), e)
        for n in name_nodes(r.node.value):
            self.counts[n.id] -= 1
        self.counts[d] -= 1
        if s.comment.endswith(" (left operand)"):
            s.comment = s.comment[:-len(" (left operand)")] + " (both operands: doubled)"
        stmts[j] = None

    # -- chains of contributions ---------------------------------------------------------

    def chain(self, stmts: list, i: int) -> bool:
        """``d = e1; d += e2`` → ``d = e1 + e2`` and ``d += e1; d += e2`` →
        ``d = d + e1 + e2``: adjacent contributions of one source line to one
        adjoint, in code of numbers (``(d + e1) + e2`` is what the two
        statements compute; on an array ``+=`` would write in place)."""
        s = stmts[i]
        j = _next(stmts, i)
        r = None if j is None else stmts[j]
        if s is None or r is None or isinstance(r, Block) or r.node is None \
                or not (s.partial and r.partial and s.origin is not None
                        and r.origin is not None and s.origin.loc.line == r.origin.loc.line):
            return False
        d = _accumulated(r.node)
        if d is None or any(n.id == d for n in name_nodes(r.node.value)):
            return False
        if isinstance(s.node, ast.Assign) and len(s.node.targets) == 1 \
                and isinstance(s.node.targets[0], ast.Name) and s.node.targets[0].id == d:
            first = s.node.value
            self.counts[d] -= 1  # (r's occurrence of d is gone)
        elif _accumulated(s.node) == d:
            first = ast.BinOp(ast.Name(d, ast.Load()), ast.Add(), s.node.value)
        else:
            return False
        s.node = ast.Assign([ast.Name(d, ast.Store())],
                            ast.BinOp(first, ast.Add(), r.node.value))
        if not s.comment.endswith("(both operands: doubled)"):
            s.comment = _joined(s.comment, r.comment)
        stmts[j] = None
        return True

    # -- fusion --------------------------------------------------------------------

    def fuse(self, stmts: list, i: int, hi: int, head: Block | None = None) -> None:
        name = self._temp(stmts[i])
        if name is None or self.counts[name] != 2:
            return
        e = stmts[i].node.value
        if not self._pure(e):
            return
        raises = self._raises(e)
        reads = {n.id for n in name_nodes(e)}
        sensitive = self.arrays or any(isinstance(n, (ast.Subscript, ast.Attribute))
                                       for n in walk(e))
        depth = _depth(e)
        for j in range(i + 1, hi + (head is not None)):
            r = stmts[j]
            if r is None:
                continue
            node = r.head if r is head else r.node
            expr = (node.test if isinstance(node, ast.If) else node.iter) if r is head else node
            loads = [n for n in name_nodes(expr) if n.id == name]
            if r is head and not loads:
                return
            if loads:
                if len(loads) != 1 or not isinstance(loads[0].ctx, ast.Load) \
                        or not isinstance(node, (ast.Assign, ast.AugAssign, ast.If, ast.For)) \
                        or depth + _depth(expr) > MAX_DEPTH \
                        or stmts[i].role == "pop" and _tape_of_backward(node, loads[0]):
                    return
                first = self._evaluated_before(node, loads[0])
                if first is None or (raises and first):
                    return
                _replace(node, {id(loads[0]): e})
                if isinstance(node, ast.If) and isinstance(node.test, ast.UnaryOp) \
                        and isinstance(node.test.op, ast.Not) and node.test.operand is e:
                    node.test = negated(e)  # `if x.dtype.kind not in 'fc':`
                stmts[i] = None
                return
            _, writes = _rw(r)
            if writes & reads or name in writes:
                return
            if raises and (self._raises(r.node) or not self._pure(r.node)):
                return
            if sensitive and (_writes_into(r.node, self.arrays) or not self._pure(r.node)):
                return

    def _evaluated_before(self, node: ast.stmt, target: ast.Name) -> bool | None:
        """Whether anything ``node`` evaluates before it reads ``target`` may
        raise or has an effect; None when ``target`` is read only sometimes
        (a branch of ``a if c else b``, a later operand of ``and``/``or``, a
        comprehension) or in a form whose order is not followed here."""
        order: list = []
        if isinstance(node, ast.Assign):
            roots = [node.value, *node.targets]
        elif isinstance(node, ast.If):
            roots = [node.test]
        elif isinstance(node, ast.For):
            roots = [node.iter]
        else:
            roots = [node.target, node.value]
        for root in roots:
            found = _post_order(root, target, order)
            if found is None:
                return None
            if found:
                return any(self._raises_here(n) or self._effect_here(n) for n in order)
        return None

    # -- what an expression may do -------------------------------------------------

    def _temp(self, s) -> str | None:
        if s is None or not isinstance(s.node, ast.Assign) or len(s.node.targets) != 1:
            return None
        t = s.node.targets[0]
        if isinstance(t, ast.Name) and t.id in self.temps:
            return t.id
        return None

    def _effect_here(self, n: ast.AST) -> bool:
        if not isinstance(n, ast.Call):
            return False
        f = n.func
        if isinstance(f, ast.Name):
            return f.id not in PURE_BUILTINS and f.id not in PURE_HELPERS
        if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) \
                and f.value.id in self.modules:
            return f.attr in WRITES_INTO or any(k.arg == "out" for k in n.keywords)
        return True

    def _pure(self, node: ast.AST) -> bool:
        """No call with an effect (``xs.pop()``, a called function's pair, a
        helper that writes into its argument) anywhere in ``node``."""
        return not any(self._effect_here(n)
                       or isinstance(n, (ast.Yield, ast.NamedExpr, ast.Lambda, ast.Await))
                       for n in walk(node))

    def _raises_here(self, n: ast.AST) -> bool:
        """May this node's own operation raise?"""
        if isinstance(n, ast.BinOp):
            return self.arrays or not isinstance(n.op, (ast.Add, ast.Sub, ast.Mult))
        if isinstance(n, (ast.Call, ast.Subscript, ast.Raise, ast.Assert)):
            return True
        if isinstance(n, ast.Attribute):
            return not (isinstance(n.value, ast.Name) and n.value.id in self.modules)
        if isinstance(n, ast.Compare):
            return self.arrays
        if isinstance(n, ast.AugAssign):
            return self.arrays or not isinstance(n.op, (ast.Add, ast.Sub, ast.Mult))
        return False

    def _raises(self, node: ast.AST) -> bool:
        return any(self._raises_here(n) for n in walk(node))


WRITES_INTO = frozenset({"copyto", "put", "place", "putmask", "fill_diagonal", "put_along_axis"})
"""NumPy functions that write into an argument."""

PURE_HELPERS = frozenset({"digamma"})
"""Functions the generated module defines that only compute a value."""

_ORDERED = (ast.BinOp, ast.UnaryOp, ast.Call, ast.Subscript, ast.Attribute, ast.Tuple, ast.List,
            ast.Starred, ast.Slice, ast.keyword, ast.Name, ast.Constant, ast.Compare)


def _post_order(node: ast.AST, target: ast.Name, order: list) -> bool | None:
    """Append to ``order`` the nodes evaluated, in Python's order, before
    ``target`` is read; True once it is found, False when it is not in
    ``node``, None when it is inside a form this does not follow."""
    if node is target:
        return True
    if not isinstance(node, _ORDERED) and any(n is target for n in walk(node)):
        return None
    if isinstance(node, ast.Compare) and len(node.ops) > 1 \
            and any(n is target for c in node.comparators[1:] for n in walk(c)):
        return None
    if isinstance(node, _ORDERED) and not isinstance(node, (ast.Name, ast.Constant)):
        if isinstance(node, ast.Call):
            children = [node.func, *node.args, *node.keywords]
        elif isinstance(node, ast.Compare):
            children = [node.left, *node.comparators]
        elif isinstance(node, ast.BinOp):
            children = [node.left, node.right]
        else:
            children = [c for c in ast.iter_child_nodes(node)
                        if not isinstance(c, (ast.expr_context, ast.operator, ast.unaryop))]
        for c in children:
            found = _post_order(c, target, order)
            if found is None or found:
                return found
    order.append(node)
    return False


def _replace(node: ast.AST, new: dict) -> None:
    """Replace the nodes whose ids are keys of ``new`` (names read) inside ``node``."""
    for parent in walk(node):
        for field in child_fields(parent):
            value = getattr(parent, field, None)
            if isinstance(value, ast.AST) and id(value) in new:
                setattr(parent, field, new[id(value)])
            elif isinstance(value, list):
                for k, item in enumerate(value):
                    if isinstance(item, ast.AST) and id(item) in new:
                        value[k] = new[id(item)]


_BACKWARD = re.compile(r".+_bwd(_\d+)?")


def _tape_of_backward(node: ast.AST, name: ast.Name) -> bool:
    """Is ``name`` the tape a helper's backward function is called with
    (``h_bwd(T, ...)``)? A tape read from a tape of tapes stays a statement of
    its own (``T = Ts[i]``), the form in which s2s-ad reads its own modules
    back (:mod:`s2s_ad.frontend.pairs`)."""
    return any(isinstance(n, ast.Call) and n.args and n.args[0] is name
               and isinstance(n.func, ast.Name) and _BACKWARD.fullmatch(n.func.id)
               for n in walk(node))


def _next(stmts: list, i: int) -> int | None:
    """The position of the first statement after ``stmts[i]`` that is not
    deleted (None), if any. (Scanning from ``i``, not slicing the rest of the
    run: a slice per statement made the pass quadratic in the run's length.)"""
    for j in range(i + 1, len(stmts)):
        if stmts[j] is not None:
            return j
    return None


def _accumulated(node: ast.AST) -> str | None:
    """``d`` for ``d += e``."""
    if isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add) \
            and isinstance(node.target, ast.Name):
        return node.target.id
    return None


def _joined(first: str, second: str) -> str:
    """The comment of two contributions of one line, written once: ``line 9:
    x * x, ∂/∂x = x (left operand); ∂/∂x = x (right operand)``."""
    head, sep, rest = second.partition(", ∂")
    if sep and first.startswith(head + ", "):
        return f"{first}; ∂{rest}"
    return f"{first}; {second}"


def _writes_into(node: ast.AST, arrays: bool) -> bool:
    """Does the statement write into an object (an element, an attribute, an
    array added to in place)? (``d += e`` on a name in code of numbers binds
    a new number: the code generated for numbers runs on numbers, the cache
    dispatching arrays to code generated for them.)"""
    if isinstance(node, ast.AugAssign):
        return arrays or not isinstance(node.target, ast.Name)
    if isinstance(node, ast.Assign):
        return any(not isinstance(t, (ast.Name, ast.Tuple, ast.List)) or
                   any(isinstance(n, (ast.Subscript, ast.Attribute, ast.Starred))
                       for n in walk(t)) for t in node.targets)
    return True


def _depth(node: ast.AST) -> int:
    """The levels of ``node``'s tree (as ``ast.iter_child_nodes`` gives it:
    an expression context, ``Load``, ``Store``, counts as a level below its
    node)."""
    best, stack = 0, [(node, 1)]
    while stack:
        n, d = stack.pop()
        deepest = d + 1 if getattr(n, "ctx", None) is not None else d  # (its context)
        if deepest > best:
            best = deepest
        stack.extend([(c, d + 1) for c in child_nodes(n)])
    return best


# -- signs ---------------------------------------------------------------------------


def _negations(node: ast.AST) -> int:
    return sum(1 for n in walk(node) if isinstance(n, ast.UnaryOp)
               and isinstance(n.op, ast.USub))


def _signs(s: Stmt) -> None:
    """Negations in ``s`` folded where exact (see the module's contract)."""
    node = s.node
    if not isinstance(node, (ast.AugAssign, ast.Assign)):
        return
    before = _negations(node.value)
    if not before:
        return  # (nothing to fold: most statements)
    if isinstance(node, ast.AugAssign) and isinstance(node.op, (ast.Add, ast.Sub)):
        neg, e = _sign(node.value)
        if _negations(e) < before:
            node.value = e
            if neg:
                node.op = ast.Sub() if isinstance(node.op, ast.Add) else ast.Add()
    elif isinstance(node, ast.Assign):
        neg, e = _sign(node.value)
        if neg:
            e = _negate(e)
        if _negations(e) < before:
            node.value = e


def _sign(e: ast.expr) -> tuple[bool, ast.expr]:
    """``(negative, e')`` with ``e == -e'`` when ``negative``, else ``e == e'``,
    bit for bit: signs of the factors of a product or quotient gathered,
    ``a + -b`` as ``a - b``, ``a - -b`` as ``a + b``."""
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
        neg, inner = _sign(e.operand)
        return not neg, inner
    if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.Mult, ast.Div)):
        nl, left = _sign(e.left)
        nr, right = _sign(e.right)
        return nl != nr, ast.BinOp(left, e.op, right)
    if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.Add, ast.Sub)):
        nl, left = _sign(e.left)
        nr, right = _sign(e.right)
        left = _negate(left) if nl else left
        op = e.op
        if nr:
            op = ast.Sub() if isinstance(op, ast.Add) else ast.Add()
        return False, ast.BinOp(left, op, right)
    return False, _inside(e)


def _inside(e: ast.expr) -> ast.expr:
    """``e`` with the signs of its operands' subexpressions folded (a new
    node: ``e`` is left as it is)."""
    e = copy.copy(e)
    for field, value in ast.iter_fields(e):
        if isinstance(value, ast.expr):
            neg, inner = _sign(value)
            setattr(e, field, _negate(inner) if neg else inner)
        elif isinstance(value, list):
            items = list(value)
            for k, item in enumerate(items):
                if isinstance(item, ast.expr):
                    neg, inner = _sign(item)
                    items[k] = _negate(inner) if neg else inner
            setattr(e, field, items)
    return e


def _negate(e: ast.expr) -> ast.expr:
    """``-e``, the sign on the leftmost factor of a product or quotient
    (``-a * b`` reads better than ``-(a * b)`` and is the same number)."""
    if isinstance(e, ast.BinOp) and isinstance(e.op, (ast.Mult, ast.Div)):
        return ast.BinOp(_negate(e.left), e.op, e.right)
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub):
        return e.operand
    return ast.UnaryOp(ast.USub(), e)
