"""One test of shapes for a function's elementwise operations between arrays
whose shapes the code cannot tell apart, instead of one ``unbroadcast`` call
per operand.

Contract: :class:`FlatShapes` is asked by
:meth:`s2s_ad.reverse.arrays.ArraySweep.unbroadcast`, for an operator
(``+ - * / ** % //``) of the function's straight-line code or of a loop's
body (not inside a branch) between two arrays of different shape classes
(:func:`s2s_ad.reverse.analysis.shape_classes`: a parameter and a slice, say;
not a reduction keeping its axes, which broadcasts), for the name of a flag; the contribution is then written
``g if flag else unbroadcast(g, x)``. The flag holds when every array such an
operation reads has one shape: then each operation's result has that shape
too, each contribution (the result's adjoint times a local derivative of
that shape, or a number) has the operand's shape already, and
``unbroadcast(g, x)`` would return ``g`` itself. Where the flag does not hold
(a row added to a matrix, a Dask array whose lengths are not known yet), each
contribution is summed back by ``unbroadcast`` as before.

An operand of a parameter's shape class beside one that is not (the bias
in ``H @ W + b``, the target in ``P - Y``) is where a function's own code
broadcasts, if anywhere, and compared by the flag it would make it false for
the whole group. Such operands are left out of the flag; the operation's
result is compared instead, and their own contributions are under a second
flag, ``flat_1 = same_shapes(H, P, t2, b, Y)``, which holds where they are
of that shape too (an LSTM cell's state, passed in). That flag is computed
first: where it holds so does the group's, ``flat = flat_1 or
same_shapes(H, P, t2)``, and one call decides both.

The operations are grouped by the shape classes they join (an operation's
operands and its result are of one shape when the flag holds), one flag per
group of two operations or more, computed once at the start of the reverse
sweep from one array per shape class the group reads
(``same_shapes(cell, forget, ingate, change, outgate)``): a class an earlier
operation of the group makes is of that shape already. The flag's test costs
about as much as one ``unbroadcast`` call; each call it takes out saved
0.3 µs (the LSTM cell's backward pass made twelve).

A loop's body has flags of its own, computed at the start of each iteration
of the reverse loop from that iteration's values (a class is read through
the value it is named after, ``k2`` rather than ``h * k2``) and compared
with the adjoints the iteration starts from (``carried`` in
:meth:`statements`: a carried adjoint still the number 0.0 makes the flag
false). A checkpointed loop's body has none.

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
import copy

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
        self._left_out: set[tuple] = set()
        """(group, id) of the operands of a parameter's shape class a group's
        flag does not compare (a bias, a target)."""
        self._lefts: dict[int, list] = {}
        """group -> one operand per parameter's class it leaves out."""
        self._widened: dict[int, set] = {}
        """group -> ids of the results among its reads compared only because an
        operand left out may have widened them (the wide flag compares that
        operand instead, which fixes the result's shape)."""
        self.wide: dict[int, str] = {}
        """group -> the flag's name for the contributions to the operands left
        out: the group's flag, and those operands of its shape too."""
        self._region: dict[int, int] = {}
        """group -> id of the region whose operations it joins."""
        self._classes: dict[int, set] = {}
        """group -> ids of the shape classes its operations read and make."""

    def flag(self, op: ir.Op, i: int) -> str | None:
        """The flag under which operand ``i``'s contributions in ``op`` need no
        ``unbroadcast``, or None."""
        if self._group is None:
            self._find()
        group = self._group.get(id(op))
        if group is None:
            return None
        # a product's adjoint a reduction left unspread (a number) is of the
        # operands' shape only through the local derivative, which may read
        # an operand left out (dout * c for np.sum(t * c)): all compared then
        wide = (group, id(op.args[i])) in self._left_out or (
            id(op.out) in self.arrays.unspread
            and any((group, id(a)) in self._left_out for a in op.args))
        flags = self.wide if wide else self.flags
        if group not in flags:
            flags[group] = self.arrays.namer.fresh("flat")
        return flags[group]

    def statements(self, ref, region: ir.Region, carried: list = ()) -> list:
        """``flat = same_shapes(...)`` for each flag used by the operations of
        ``region`` (the function's body, or a loop's: then at the start of
        each iteration of the reverse loop); ``ref(v)`` reads a value.
        ``carried`` pairs a loop's next values with the names of their
        adjoints as the reverse iteration starts: those of a group's shapes
        are compared too (one that is still the number 0.0, as where the
        loop's result does not reach the function's, makes the flag false,
        and ``unbroadcast`` gives it its shape as before)."""
        out = []
        same = ast.Name(self.arrays.helper("same_shapes"), ast.Load())
        shapes = self.arrays.shapes
        for group in list(self.flags) + [g for g in self.wide if g not in self.flags]:
            if self._region[group] != id(region):
                continue
            lines = sorted(set(self._lines[group]))
            where = (f"line {lines[0]}" if len(lines) == 1
                     else "lines " + ", ".join(str(n) for n in lines))
            reads = [ref(v) for v in self._reads[group]]
            reads += [ast.Name(name, ast.Load()) for v, name in carried
                      if isinstance(v, ir.Value) and id(shapes.get(id(v))) in self._classes[group]]
            if group in self.wide:
                # the wide flag first: where it holds (the parameters of the
                # group's one shape, the common case) so does the group's own,
                # and one call decides both. It compares the operands left out
                # themselves, so not the results they may have widened: each
                # such result has the shape of its operands, all compared
                # (t12 = cell * forget: cell and forget, not t12)
                kept = [r for v, r in zip(self._reads[group], reads)
                        if id(v) not in self._widened[group]]
                lefts = [ref(v) for v in self._lefts[group]]
                call = ast.Call(copy.copy(same), kept + reads[len(self._reads[group]):] + lefts,
                                [])
                out.append(Stmt(ast.Assign([ast.Name(self.wide[group], ast.Store())], call),
                                f"{where}: arrays of one shape, the parameters there too"))
            if group in self.flags:
                call = ast.Call(copy.copy(same), [copy.deepcopy(r) for r in reads], [])
                if group in self.wide:
                    call = ast.BoolOp(ast.Or(), [ast.Name(self.wide[group], ast.Load()), call])
                out.append(Stmt(ast.Assign([ast.Name(self.flags[group], ast.Store())], call),
                                f"{where}: arrays of one shape, so no adjoint there "
                                "is summed over broadcast axes"))
        return out

    def _operands(self, op: ir.Op) -> tuple | None:
        """The array operands of an operator between arrays of different
        shape classes in the straight-line code, split into those the flag
        compares and those of a parameter's class it leaves out; else None."""
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
        if any(getattr(arrays._made_by.get(id(t)), "prim", None) in REDUCING for t in tokens):
            return None  # a reduction keeping its axes: it broadcasts (Z - np.max(Z, axis=1, ...))
        # a parameter's class (b2 in H @ W2 + b2, Y in P - Y) is where a shape
        # broadcasts in a function's own code, if anywhere: compared, it would
        # make the flag false for every other operation of the group
        params = {id(p.value) for p in arrays.func.params}
        joined = [a for a in values if id(arrays.shapes[id(a)]) not in params]
        if not joined:  # parameters only (a * b): compared, as nothing else is there
            return values, []
        return joined, [a for a in values if id(arrays.shapes[id(a)]) in params]

    def _find(self) -> None:
        self._group = {}
        body = self.arrays.func.body
        self._find_in(body)
        for node in ir.walk(body):
            if isinstance(node, (ir.For, ir.While)) and not node.checkpoint:
                self._find_in(node.body, node.carried)

    def _find_in(self, region: ir.Region, carried: list = ()) -> None:
        """The groups of ``region``'s operations (not those of the branches
        and loops inside it); ``carried``: the loop's carried values, if
        ``region`` is a loop's body."""
        shapes = self.arrays.shapes
        # a loop's body: values it defines, and parameters (straight-line code
        # reads the values its operations read: a pair's tape holds them already)
        readable = {id(v) for v in list(carried) + [p.value for p in self.arrays.func.params]
                    + [v for node in region.ops for v in ir.defined(node)]
                    if isinstance(v, ir.Value) and v.kind == "array"
                    and id(v) not in self.arrays.buffers} if region is not self.arrays.func.body \
            else set()
        sites, left_out = [], {}
        for op in region.ops:
            split = self._operands(op) if isinstance(op, ir.Op) else None
            if split is not None:
                sites.append((op, split[0]))
                left_out[id(op)] = split[1]
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
        for members in groups.values():
            if len(members) < 2:
                continue  # a flag would cost what it saves
            k = len(self._region)
            self._region[k] = id(region)
            self._classes[k] = {id(shapes[id(a)]) for op, values in members
                                for a in list(values) + left_out[id(op)] + [op.out]}
            covered: set[int] = set()
            reads, lefts, widened = [], [], set()
            compared = {id(shapes[id(a)]) for _, values in members for a in values}
            # a class is read through the value it is named after where that value
            # is the region's own (k2 rather than h * k2, which the reverse loop
            # would recompute for the flag alone)
            named = {id(shapes[id(a)]): shapes[id(a)] for _, values in members for a in values
                     if id(shapes[id(a)]) in readable}
            for op, values in members:  # in program order
                for a in values:
                    if id(shapes[id(a)]) not in covered:
                        covered.add(id(shapes[id(a)]))
                        reads.append(named.get(id(shapes[id(a)]), a))
                # a parameter the group compares elsewhere (a + b, then t * a) is not left out
                out_of = [a for a in left_out[id(op)] if id(shapes[id(a)]) not in compared]
                if out_of and id(shapes[id(op.out)]) not in covered:
                    reads.append(op.out)  # an operand left out may have widened it
                    widened.add(id(op.out))
                covered.add(id(shapes[id(op.out)]))
                for a in out_of:
                    self._left_out.add((k, id(a)))
                    if id(shapes[id(a)]) not in {id(shapes[id(b)]) for b in lefts}:
                        lefts.append(a)
            self._reads[k] = reads
            self._lefts[k] = lefts
            self._widened[k] = widened
            self._lines[k] = [op.loc.line for op, _ in members if op.loc is not None]
            for op, _ in members:
                self._group[id(op)] = k
