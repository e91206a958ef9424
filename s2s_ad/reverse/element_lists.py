"""Reverse loops over single elements of float64 arrays, run on Python lists.

Contract: :func:`run` rewrites, in place, each top-level reverse loop of a
NumPy reverse sweep (or one inside its branches, not inside another loop)
that touches arrays only one element at a time, ``a[k]`` with ``k`` an int
computed from the loop's index. Before the loop, ``float_lists`` (a helper
the module defines) gives each such array's elements as a Python list, and
the loop reads and writes ``a_l[k]`` instead; after it, ``put_floats``
writes the list of each array the loop wrote into back into the array.

Why: an element read from a NumPy array is a NumPy scalar, and every
operation on one costs about 80 ns; a list item is a Python float, several
times cheaper. For a 1-d float64 array the two compute the same numbers:
``+``, ``-``, ``*`` and comparisons on Python floats are float64's (IEEE,
no exception on overflow), and a NumPy function given a float returns
what it returns for the NumPy scalar. The loop's other operands matter too:
a Python float combined with a float32 NumPy scalar gives float32 where the
NumPy scalar it replaces gives float64. So ``float_lists`` makes lists only
when, at run time, every array is a 1-d float64 ndarray that owns its data
(the arrays written into are distinct from each other and from what the
loop reads) and every other number the loop reads from before it is an
``int`` or a ``float``; otherwise (float32, complex, Dask arrays, a float32
``a``) it returns the arrays themselves, and the same loop runs on them as
before. The rewrite is refused while generating (the loop is left as it
was) unless the loop is made only of assignments and branches over ``+``,
``-``, ``*``, comparisons, constants and calls of NumPy and ``math``
functions — no ``/`` or ``**`` (a Python float raises on ``1.0 / 0.0``
where NumPy gives ``inf``), no tape, no helper, no whole-array use — and
every value it stores into an element is a float.

Before → after::

    for i in reversed(range(1, t3)):        y_l, dy_l, dx_l = float_lists((y,), (dy, dx), (a,))
        t4 = i - 1                          for i in reversed(range(1, t3)):
        t5 = y[t4]                              t4 = i - 1
        dt8 = dy[i]                             t5 = y_l[t4]
        dx[i] = dx[i] + dt8         ──▶         dt8 = dy_l[i]
        dt5 = dt8 * a                           dx_l[i] = dx_l[i] + dt8
        da = da + dt8 * t5                      ...
        dy[t4] = dy[t4] + dt5                   dy_l[t4] = dy_l[t4] + dt5
                                            put_floats(dy, dy_l)
                                            put_floats(dx, dx_l)

:func:`unlisted` gives the statements back as they were (for
:mod:`s2s_ad.sweep`, which explains the loop in the arrays' names).
"""

from __future__ import annotations

import ast
import copy

from s2s_ad.emit.code import Block, Stmt
from s2s_ad.syntax_walk import walk

__all__ = ["ROLE", "bound_by", "for_sweep", "run", "unlisted"]

ROLE = "lists"
"""The role of the statements this pass adds (:attr:`s2s_ad.emit.code.Stmt.role`)."""

_OPS = (ast.Add, ast.Sub, ast.Mult)


def run(stmts: list, defined: set[str], helper, modules: dict[str, str], namer,
        tapes: set[str]) -> dict[str, str]:
    """Rewrite the loops of ``stmts`` (see the module); ``defined``: the names
    bound before ``stmts`` run, on every path; ``helper(base)``: the generated
    name of a helper; ``modules``: the function's modules (``{"numpy": "np"}``);
    ``tapes``: the tape lists (a loop reading one is left as it is: a value
    the forward pass taped may be a float32 scalar). Returns array name ->
    the name of the list of its elements, for every list made."""
    lists: dict[str, str] = {}
    _block(stmts, set(defined), helper, (modules, tapes), namer, lists)
    return lists


def for_sweep(sweep, stmts: list, defined: set[str], tape: list) -> dict[str, str]:
    """:func:`run` on a NumPy reverse sweep's statements (nothing for a sweep
    of numbers); ``tape``: the values the forward pass keeps."""
    if sweep.arrays is None:
        return {}
    return run(stmts, defined, sweep.arrays.helper, sweep.modules, sweep.namer,
               {v.name for v in tape if v.kind == "looptape"})


def _block(stmts: list, defined: set[str], helper, modules, namer, lists) -> None:
    k = 0
    while k < len(stmts):
        s = stmts[k]
        if isinstance(s, Block) and isinstance(s.head, ast.For):
            plan = _Loop(s, defined, *modules).plan()
            if plan is not None:
                before, after = _rewrite(s, plan, helper, namer, lists)
                stmts[k:k + 1] = [before, s] + after
                k += 2 + len(after)
                continue
        elif isinstance(s, Block) and isinstance(s.head, ast.If):
            _block(s.body, set(defined), helper, modules, namer, lists)
            _block(s.orelse, set(defined), helper, modules, namer, lists)
        elif isinstance(s, Stmt) and s.node is not None:
            defined |= _bound(s.node)
        k += 1


def bound_by(stmts: list, args: ast.arguments) -> set[str]:
    """The parameters in ``args`` and the names the top-level statements of
    ``stmts`` bind (not those in its blocks)."""
    out = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
    for s in stmts:
        if isinstance(s, Stmt) and s.node is not None:
            out |= _bound(s.node)
    return out


def _bound(node: ast.stmt) -> set[str]:
    """Names a simple statement binds."""
    if isinstance(node, ast.Assign):
        out = set()
        for t in node.targets:
            out |= {n.id for n in walk(t) if isinstance(n, ast.Name)
                    and isinstance(n.ctx, ast.Store)}
        return out
    if isinstance(node, (ast.AugAssign, ast.AnnAssign)) and isinstance(node.target, ast.Name):
        return {node.target.id}
    return set()


class _Loop:
    """Whether a reverse loop can run on lists, and what it needs."""

    def __init__(self, block: Block, defined: set[str], modules: dict[str, str],
                 tapes: set[str]):
        self.block = block
        self.defined = defined - tapes
        self.np = modules.get("numpy")
        self.modules = {modules[m] for m in ("numpy", "math") if m in modules}
        self.arrays: dict[str, bool] = {}
        """Array name -> is it written into, in loop order of first use."""
        self.numbers: list[str] = []
        """Names the loop reads as values bound before it (checked at run time)."""
        self.assigned: dict[str, list[ast.expr]] = {}
        """Local name -> the expressions assigned to it in the body."""
        self.ints: set[str] = set()
        self.floats: set[str] = set()

    def plan(self):
        head = self.block.head
        if not (isinstance(head.target, ast.Name) and _int_range(head.iter)):
            return None
        stmts = []
        if not self._collect(self.block.body, stmts):
            return None
        index = head.target.id
        if index in self.assigned:
            return None
        # ints: the index and locals assigned only int arithmetic of ints (to a fixpoint)
        self.ints = {index}
        changed = True
        while changed:
            changed = False
            for name, values in self.assigned.items():
                if name not in self.ints and all(self._int(v) for v in values):
                    self.ints.add(name)
                    changed = True
        for name, values in self.assigned.items():  # floats: made of a float on every assignment
            if name not in self.ints:
                self.floats.add(name)
        changed = True
        while changed:
            changed = False
            for name in list(self.floats):
                if not all(self._float(v) for v in self.assigned[name]):
                    self.floats.discard(name)
                    changed = True
        if not self._uses(self.block.body, {index}):
            return None
        if not self.arrays:
            return None
        return self

    # -- the statements -----------------------------------------------------

    def _collect(self, body: list, out: list) -> bool:
        """Only assignments (to a name or an element) and branches."""
        for s in body:
            if isinstance(s, Block):
                if not isinstance(s.head, ast.If) or not self._expr_ok(s.head.test):
                    return False
                if not (self._collect(s.body, out) and self._collect(s.orelse, out)):
                    return False
                continue
            node = s.node
            if node is None:
                continue
            if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
                return False
            target = node.targets[0]
            if isinstance(target, ast.Name):
                self.assigned.setdefault(target.id, []).append(node.value)
            elif not (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)):
                return False
            if not self._expr_ok(node.value):
                return False
            out.append(node)
        return True

    def _expr_ok(self, e: ast.expr) -> bool:
        """Operations whose result on Python floats is float64's on NumPy scalars."""
        for n in walk(e):
            if isinstance(n, ast.BinOp):
                if not isinstance(n.op, _OPS):
                    return False
            elif isinstance(n, ast.UnaryOp):
                if not isinstance(n.op, (ast.USub, ast.UAdd, ast.Not)):
                    return False
            elif isinstance(n, ast.Constant):
                if type(n.value) not in (int, float, bool):
                    return False
            elif isinstance(n, ast.Call):
                f = n.func
                if not (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)
                        and f.value.id in self.modules and not n.keywords
                        and not any(isinstance(a, ast.Starred) for a in n.args)):
                    return False
            elif isinstance(n, ast.Attribute):
                if not (isinstance(n.value, ast.Name) and n.value.id in self.modules):
                    return False
            elif not isinstance(n, (ast.Name, ast.Subscript, ast.Compare, ast.BoolOp,
                                    ast.IfExp, ast.expr_context, ast.operator, ast.unaryop,
                                    ast.cmpop, ast.boolop)):
                return False
        return True

    def _int(self, e: ast.expr) -> bool:
        if isinstance(e, ast.Constant):
            return type(e.value) is int
        if isinstance(e, ast.Name):
            return e.id in self.ints
        if isinstance(e, ast.BinOp):
            return isinstance(e.op, _OPS) and self._int(e.left) and self._int(e.right)
        if isinstance(e, ast.UnaryOp):
            return isinstance(e.op, (ast.USub, ast.UAdd)) and self._int(e.operand)
        return False

    def _float(self, e: ast.expr) -> bool:
        """Is ``e`` a float (never an int) whatever the numbers before the loop are?"""
        if isinstance(e, ast.Constant):
            return type(e.value) is float
        if isinstance(e, ast.Name):
            return e.id in self.floats
        if isinstance(e, ast.Subscript):  # an element: a float in the list, as in the array
            return True
        if isinstance(e, ast.BinOp):  # Python: int op float is a float
            return isinstance(e.op, _OPS) and (self._float(e.left) or self._float(e.right))
        if isinstance(e, ast.UnaryOp):
            return isinstance(e.op, (ast.USub, ast.UAdd)) and self._float(e.operand)
        if isinstance(e, ast.IfExp):
            return self._float(e.body) and self._float(e.orelse)
        if isinstance(e, ast.Call):  # a NumPy function of a float returns a NumPy float
            return (e.func.value.id == self.np and not e.func.attr.startswith(("is", "arg"))
                    and any(self._float(a) for a in e.args))
        return False

    # -- the names ----------------------------------------------------------

    def _uses(self, body: list, bound: set[str]) -> bool:
        """Walk the body in order: elements read and written, names read
        before the body binds them (``bound``: bound so far, on every path)."""
        for s in body:
            if isinstance(s, Block):
                if not self._reads(s.head.test, bound):
                    return False
                then, other = set(bound), set(bound)
                if not (self._uses(s.body, then) and self._uses(s.orelse, other)):
                    return False
                bound |= then & other
                continue
            node = s.node
            if node is None:
                continue
            if not self._reads(node.value, bound):
                return False
            target = node.targets[0]
            if isinstance(target, ast.Name):
                if target.id in self.arrays:
                    return False
                bound.add(target.id)
                continue
            if not self._element(target, bound, write=True):
                return False
            if not self._float(node.value):  # an int stored into a float array is a float
                return False
        return True

    def _reads(self, e: ast.expr, bound: set[str]) -> bool:
        subs = [n for n in walk(e) if isinstance(n, ast.Subscript)]
        inside = {id(n) for s in subs for n in walk(s.value)}
        for s in subs:
            if not self._element(s, bound, write=False):
                return False
        for n in walk(e):
            if isinstance(n, ast.Call):
                inside.add(id(n.func.value))  # the module of np.f(...)
            elif isinstance(n, ast.Attribute):
                inside.add(id(n.value))
        for n in walk(e):
            if isinstance(n, ast.Name) and id(n) not in inside:
                if not self._value(n.id, bound):
                    return False
        return True

    def _element(self, s: ast.Subscript, bound: set[str], write: bool) -> bool:
        if not (isinstance(s.value, ast.Name) and self._int(s.slice)):
            return False
        name = s.value.id
        if name in self.assigned or name in self.numbers or name not in self.defined:
            return False
        self.arrays[name] = self.arrays.get(name, False) or write
        for n in walk(s.slice):
            if isinstance(n, ast.Name) and not self._value(n.id, bound):
                return False
        return True

    def _value(self, name: str, bound: set[str]) -> bool:
        """A name read as a value: bound earlier in this iteration, or a number
        bound before the loop (on every path), checked at run time."""
        if name in bound:
            return True
        if name in self.arrays or name in self.modules or name not in self.defined:
            return False
        if name not in self.numbers:
            self.numbers.append(name)
        return True


def _int_range(it: ast.expr) -> bool:
    """``range(...)``, ``reversed(range(...))`` or ``range(...)[:n]``: ints."""
    if isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "reversed" \
            and len(it.args) == 1:
        it = it.args[0]
    if isinstance(it, ast.Subscript):
        it = it.value
    return isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "range"


def _rewrite(block: Block, plan: _Loop, helper, namer, lists: dict) -> tuple[Stmt, list]:
    names = {a: namer.fresh(f"{a}_l") for a in plan.arrays}
    lists.update(names)
    _rename(block.body, names)
    reads = [a for a, w in plan.arrays.items() if not w]
    writes = [a for a, w in plan.arrays.items() if w]

    def tup(items):
        return ast.Tuple([ast.Name(n, ast.Load()) for n in items], ast.Load())

    order = reads + writes
    call = ast.Call(ast.Name(helper("float_lists"), ast.Load()),
                    [tup(reads), tup(writes), tup(plan.numbers)], [])
    target = ast.Tuple([ast.Name(names[a], ast.Store()) for a in order], ast.Store())
    before = Stmt(ast.Assign([target], call),
                  "the elements as floats, for float64 arrays",
                  role=ROLE, control=block.origin)
    put = helper("put_floats")
    after = [Stmt(ast.Expr(ast.Call(ast.Name(put, ast.Load()),
                                    [ast.Name(a, ast.Load()), ast.Name(names[a], ast.Load())],
                                    [])),
                  f"the elements the loop wrote, back into {a}", role=ROLE, control=block.origin)
             for a in writes]
    return before, after


def _rename(body: list, names: dict[str, str]) -> None:
    for s in body:
        if isinstance(s, Block):
            _rename_node(s.head.test, names)
            _rename(s.body, names)
            _rename(s.orelse, names)
        elif s.node is not None:
            _rename_node(s.node, names)


def _rename_node(node: ast.AST, names: dict[str, str]) -> None:
    for n in walk(node):
        if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) \
                and n.value.id in names:
            n.value.id = names[n.value.id]


def unlisted(stmts: list, lists: dict[str, str]) -> list:
    """``stmts`` as they were before :func:`run` (copies): the lists' reads and
    writes on the arrays, without the statements that make and put back the lists."""
    if not lists:
        return stmts
    back = {l_name: a for a, l_name in lists.items()}
    out = []
    for s in stmts:
        if isinstance(s, Block):
            b = copy.copy(s)
            b.head = copy.deepcopy(s.head)
            b.body = unlisted(s.body, lists)
            b.orelse = unlisted(s.orelse, lists)
            if isinstance(b.head, ast.If):
                _rename_node(b.head.test, back)
            out.append(b)
        elif s.role == ROLE:
            continue
        else:
            c = copy.copy(s)
            if s.node is not None:
                c.node = copy.deepcopy(s.node)
                _rename_node(c.node, back)
            out.append(c)
    return out
