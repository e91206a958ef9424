"""One test of shapes for a function's elementwise operations between arrays
whose shapes the code cannot tell apart, instead of one ``unbroadcast`` call
per operand.

Contract: :class:`FlatShapes` is asked by
:meth:`s2s_ad.reverse.arrays.ArraySweep.unbroadcast`, for an operator
(``+ - * / ** % //``) of the function's straight-line code (not inside a loop
or a branch) between two arrays of different shape classes
(:func:`s2s_ad.reverse.analysis.shape_classes`: a parameter and a slice, say;
not a reduction keeping its axes, which broadcasts), for the name of a flag; the contribution is then written
``g if flag else unbroadcast(g, x)``. The flag holds when every array such an
operation reads has one shape: then each operation's result has that shape
too, each contribution (the result's adjoint times a local derivative of
that shape, or a number) has the operand's shape already, and
``unbroadcast(g, x)`` would return ``g`` itself. Where the flag does not hold
(a row added to a matrix, a Dask array whose lengths are not known yet), each
contribution is summed back by ``unbroadcast`` as before.

The operations are grouped by the shape classes they join (an operation's
operands and its result are of one shape when the flag holds), one flag per
group of two operations or more, computed once at the start of the reverse
sweep from one array per shape class the group reads
(``same_shapes(cell, forget, ingate, change, outgate)``): a class an earlier
operation of the group makes is of that shape already. The flag's test costs
about as much as one ``unbroadcast`` call; each call it takes out saved
0.3 µs (the LSTM cell's backward pass made twelve).

A gradient module read back from its file has each ``g if flag else
unbroadcast(g, x)`` written ``unbroadcast(g, x)`` and the flags taken out
(:mod:`s2s_ad.frontend.shape_flags`).

Before → after::

                                               flat = same_shapes(cell, forget, ingate, change)
    dt12 = unbroadcast(dcell_1, t12)     ──▶   dt12 = dcell_1 if flat else unbroadcast(dcell_1, t12)
    dcell = unbroadcast(dt12 * forget, cell)   dcell = dt12 * forget if flat else unbroadcast(...)
"""

from __future__ import annotations

import ast

from s2s_ad import ir
from s2s_ad.emit.code import Stmt
from s2s_ad.reverse.analysis import REDUCING
from s2s_ad.rules.numpy import BROADCASTING


class FlatShapes:
    def __init__(self, arrays):
        self.arrays = arrays
        """The function's :class:`~s2s_ad.reverse.arrays.ArraySweep`."""
        self._group: dict[int, int] | None = None
        """id(op) -> its group, for the operations that have a flag."""
        self._reads: dict[int, list] = {}
        """group -> one array per shape class it reads (what the flag compares)."""
        self._lines: dict[int, list] = {}
        self.flags: dict[int, str] = {}
        """group -> the flag's name, for the groups a contribution asked for."""

    def flag(self, op: ir.Op) -> str | None:
        """The flag under which ``op``'s contributions need no ``unbroadcast``, or None."""
        if self._group is None:
            self._find()
        group = self._group.get(id(op))
        if group is None:
            return None
        if group not in self.flags:
            self.flags[group] = self.arrays.namer.fresh("flat")
        return self.flags[group]

    def statements(self, ref) -> list:
        """``flat = same_shapes(...)`` for each flag used; ``ref(v)`` reads a value."""
        out = []
        for group, name in self.flags.items():
            lines = sorted(set(self._lines[group]))
            where = (f"line {lines[0]}" if len(lines) == 1
                     else "lines " + ", ".join(str(n) for n in lines))
            call = ast.Call(ast.Name(self.arrays.helper("same_shapes"), ast.Load()),
                            [ref(v) for v in self._reads[group]], [])
            out.append(Stmt(ast.Assign([ast.Name(name, ast.Store())], call),
                            f"{where}: arrays of one shape, so no adjoint there "
                            "is summed over broadcast axes"))
        return out

    def _operands(self, op: ir.Op) -> list | None:
        """The array operands of an operator between arrays of different
        shape classes in the straight-line code, else None."""
        arrays = self.arrays
        if op.callee is not None or op.prim not in BROADCASTING or id(op.out) in arrays.zero_d:
            return None
        values = [a for a in op.args if not arrays.number(a)]
        if len(values) < 2 or any(
                not isinstance(a, ir.Value) or a.kind != "array" or id(a) in arrays.buffers
                or arrays.shapes.get(id(a)) is None for a in values):
            return None
        tokens = [arrays.shapes[id(a)] for a in values]
        if len({id(t) for t in tokens}) == 1 or arrays.shapes.get(id(op.out)) is None:
            return None  # one class: no unbroadcast to take out
        if any(getattr(arrays._producers.get(id(t)), "prim", None) in REDUCING for t in tokens):
            return None  # a reduction keeping its axes: it broadcasts (Z - np.max(Z, axis=1, ...))
        return values

    def _find(self) -> None:
        shapes = self.arrays.shapes
        sites = [(op, vs) for op in self.arrays.func.body.ops if isinstance(op, ir.Op)
                 for vs in [self._operands(op)] if vs is not None]
        parent: dict[int, int] = {}

        def root(t: int) -> int:
            while parent.setdefault(t, t) != t:
                t = parent[t]
            return t

        for op, values in sites:
            tokens = [id(shapes[id(a)]) for a in values] + [id(shapes[id(op.out)])]
            for t in tokens[1:]:
                parent[root(t)] = root(tokens[0])
        groups: dict[int, list] = {}
        for op, values in sites:
            groups.setdefault(root(id(shapes[id(op.out)])), []).append((op, values))
        self._group = {}
        for k, members in enumerate(groups.values()):
            if len(members) < 2:
                continue  # a flag would cost what it saves
            covered: set[int] = set()
            reads = []
            for op, values in members:  # in program order
                for a in values:
                    if id(shapes[id(a)]) not in covered:
                        covered.add(id(shapes[id(a)]))
                        reads.append(a)
                covered.add(id(shapes[id(op.out)]))
            self._reads[k] = reads
            self._lines[k] = [op.loc.line for op, _ in members if op.loc is not None]
            for op, _ in members:
                self._group[id(op)] = k
