"""Which values the function's own code makes 0-d (a number, never an array
with axes), so that their adjoints need no shape bookkeeping.

Contract: :func:`zero_d` returns the ids of the values that are 0-d on every
execution of the op that defines them. The reverse sweep then takes their
adjoints as they come: no ``unbroadcast`` (which would read the value, or
recompute it, only for its shape), no ``own`` copy of an element read (a
NumPy scalar cannot change).

Two sources, both read from the function's code, never from its arguments:

* **forward**: the number of axes (rank) of a value, where the code fixes it:
  ``np.zeros(n)`` with an integer ``n`` has one, ``np.zeros((n, 3))`` two; an
  elementwise op keeps its operands' largest rank; a read ``y[i]`` or
  ``y[i, j]`` with integer indices drops one axis per index, so an element of
  a 1-d array is 0-d; a subscript write keeps its array's rank, across the
  iterations of a loop too; a sum over every axis is 0-d. A parameter's rank
  is unknown (the caller chooses it).
* **backward**: NumPy stores only a 0-d value into one element (``y[i] = v``
  with as many integer indices as ``y`` has axes; anything with axes is a
  ``ValueError``), so such a ``v`` is 0-d; and the result of an elementwise op
  has its operands' largest rank, so the operands of a 0-d result are 0-d.
  This is carried from a value to the op defining it only inside one region
  (straight-line code), where that op runs exactly when the reading op does:
  a value defined before a loop and written into an element inside it is
  0-d only on the iterations that ran, and is not marked.

Before → after, for ``y[i] = y[i - 1] * a + x[i]`` (``y = np.zeros(n)``)::

    t8 = t6 + t7                       (not recomputed)
    dt8 = unbroadcast(own(dy[i]), t8)  dt8 = dy[i]
    dt6 = unbroadcast(dt8, t6)         dt6 = dt8
    da = da + total(dt6 * t5)          da = da + dt6 * t5
"""

from __future__ import annotations

from s2s_ad import ir
from s2s_ad.reverse.analysis import REDUCING
from s2s_ad.rules.numpy import BROADCASTING, SAME_SHAPE

ELEMENTWISE = (BROADCASTING | {"array.pow", "np.arctan2", "np.clip", "np.float_power",
                               "np.hypot", "np.logaddexp", "np.maximum", "np.minimum",
                               "np.power", "np.where"}
               | (SAME_SHAPE - {"array.setitem"}))
"""Ops whose result has the largest rank of their operands (``np.cross`` is
not one: two 2-vectors give a 0-d result)."""

CONSTRUCTORS = frozenset({"np.zeros", "np.ones", "np.empty", "np.full", "array.zeros_as",
                          "array.ones_as", "array.full_as"})
"""Ops whose first operand is the shape of their result."""


def zero_d(func: ir.Function) -> tuple[set[int], set[int]]:
    """ids of the values known to be 0-d wherever they are defined, and ids of
    the subscript writes that store into one element."""
    ranks = _Ranks(func)
    ranks.region(func.body)
    out = {k for k, r in ranks.rank.items() if r == 0}
    elements = {id(n) for n in ir.walk(func.body) if isinstance(n, ir.Op)
                and n.prim == "array.setitem" and n.callee is None and _element(n, ranks)}
    regions = [func.body] + [r for n in ir.walk(func.body) if not isinstance(n, ir.Op)
                             for r in n.regions]
    for r in regions:
        _backward(r, elements, out)
    return out, elements


TUPLES = frozenset({"shape", "tuple"})
"""Ops whose result is a tuple of ints (its kind says ``int``): a shape."""


INT_ALWAYS = frozenset({"len", "np.ndim", "np.size"})
"""Ops whose result is one int whatever their operands."""

INT_ARITHMETIC = frozenset({"add", "sub", "mul", "floordiv", "mod", "neg", "pos", "pow", "abs",
                            "min", "max", "int", "round", "math.floor", "math.ceil",
                            "math.trunc"})
"""Ops whose result is one int when their operands are numbers."""


class _Ranks:
    """The forward part: id(value) -> its rank where the code fixes it."""

    def __init__(self, func: ir.Function):
        self.rank: dict[int, int | None] = {}
        self.tuples: dict[int, int | None] = {}
        """id(a tuple of ints) -> its length if known (a shape written ``(n, 3)``)."""
        for p in func.params:
            if p.value.kind == "int":  # a length, a count or an index
                self.rank[id(p.value)] = 0
        params = {id(p.value) for p in func.params}
        for node in func.body.ops:
            # a parameter bounding a loop of the function's own straight-line
            # code, which every call runs: NumPy's range() takes an integer
            # array only as a 0-d one (``range(np.array([3]))`` is a TypeError)
            if isinstance(node, ir.For) and node.seq is None:
                for a in (node.start, node.stop, node.step):
                    if isinstance(a, ir.Value) and id(a) in params:
                        self.rank[id(a)] = 0

    def of(self, a: ir.Operand) -> int | None:
        if isinstance(a, ir.Const):
            return 0 if type(a.value) in (int, float) else None
        if a.kind == "float":
            return 0
        return self.rank.get(id(a))  # an int or bool kind may be an array (x > 0, a shape)

    def integer(self, a: ir.Operand) -> bool:
        """Is ``a`` one integer (not a tuple or an array of them, not a bool)?"""
        if isinstance(a, ir.Const):
            return type(a.value) is int
        return a.kind == "int" and self.rank.get(id(a)) == 0

    def region(self, r: ir.Region) -> None:
        for node in r.ops:
            if isinstance(node, ir.Op):
                self.op(node)
            elif isinstance(node, ir.If):
                self.region(node.then)
                self.region(node.orelse)
                for j, o in enumerate(node.outs):
                    ins = [node.then.yields[j], node.orelse.yields[j]]
                    self.phi(o, ins)
            else:
                self.loop(node)

    def loop(self, node) -> None:
        """A carried value keeps its initial value's rank if every iteration's
        next value has that rank too (checked again until nothing changes)."""
        for counter in (getattr(node, "index", None), node.trips):
            if counter is not None:
                self.rank[id(counter)] = 0
        for j, (c, init) in enumerate(zip(node.carried, node.inits)):
            self.phi(c, [init, node.body.yields[j]])
        while True:
            if isinstance(node, ir.While):
                self.region(node.cond)
            self.region(node.body)
            changed = False
            for j, c in enumerate(node.carried):
                y = node.body.yields[j]
                if isinstance(y, ir.Value) and id(y) in self.tuples and id(c) not in self.tuples:
                    self.tuples[id(c)] = None
                    changed = True
                nxt = self.of(y)
                if self.rank[id(c)] is not None and nxt != self.rank[id(c)]:
                    self.rank[id(c)] = None
                    changed = True
            if not changed:
                break
        for c, o in zip(node.carried, node.outs):
            self.rank[id(o)] = self.rank[id(c)]
            if id(c) in self.tuples:
                self.tuples[id(o)] = None

    def phi(self, v: ir.Value, inputs: list) -> None:
        """A value that is one of ``inputs``: their rank if they agree (a
        loop's next value, not yet known, is checked after the body)."""
        if any(isinstance(a, ir.Value) and id(a) in self.tuples for a in inputs):
            self.tuples[id(v)] = None
        known = [a for a in inputs if isinstance(a, ir.Const) or a.kind == "float"
                 or id(a) in self.rank]  # (a loop's next value is checked after its body)
        ranks = {self.of(a) for a in known}
        self.rank[id(v)] = ranks.pop() if len(ranks) == 1 else None

    def op(self, op: ir.Op) -> None:
        if op.out.kind in ("int", "bool") and (op.callee is not None or op.prim in TUPLES or any(
                isinstance(a, ir.Value) and id(a) in self.tuples for a in op.args)):
            # a shape, or items of one: a slice of a shape is a tuple too
            self.tuples[id(op.out)] = len(op.args) if op.prim == "tuple" else None
            if op.prim == "array.getitem" and all(item[0] == "op" and self.integer(
                    op.args[item[1]]) for item in op.attrs.get("index", ())):
                del self.tuples[id(op.out)]  # one item of a shape: an int
            self.rank[id(op.out)] = None if id(op.out) in self.tuples else 0
            return
        if op.out.kind in ("int", "bool"):  # a number only where the op makes one
            number = op.prim in INT_ALWAYS or (op.prim in INT_ARITHMETIC and op.callee is None
                                               and all(self.of(a) == 0 for a in op.args))
            self.rank[id(op.out)] = 0 if number and op.out.kind == "int" else None
            return
        self.rank[id(op.out)] = None if op.callee is not None else self._rank(op)

    def _rank(self, op: ir.Op) -> int | None:
        args = op.args
        if op.out.kind == "float":
            return 0
        if op.out.kind != "array":
            return None
        if op.prim in CONSTRUCTORS and args:
            shape = args[0]
            if isinstance(shape, ir.Const) and type(shape.value) is int:
                return 1
            if isinstance(shape, ir.Value):
                if self.integer(shape):
                    return 1
                return self.tuples.get(id(shape))
            return None
        if op.prim in ("np.eye", "np.identity"):
            return 2
        if op.prim == "array.setitem":
            return self.of(args[0])
        if op.prim == "array.getitem":
            return self._getitem(op)
        if op.prim in ELEMENTWISE:
            ranks = [self.of(a) for a in (args[:1] if op.prim in SAME_SHAPE else args)]
            return None if not ranks or None in ranks else max(ranks)
        if op.prim in REDUCING and op.attrs.get("axis") is None \
                and not op.attrs.get("keepdims"):
            return 0
        return None

    def _getitem(self, op: ir.Op) -> int | None:
        base = self.of(op.args[0])
        if base is None:
            return None
        ints = slices = nones = 0
        for item in op.attrs.get("index", ()):
            if item[0] == "op":
                if not self.integer(op.args[item[1]]):
                    return None  # an array or a bool index: the rank depends on it
                ints += 1
            elif item[0] == "slice":
                slices += 1
            elif item[0] == "none":
                nones += 1
            else:
                return None  # an Ellipsis
        if ints + slices > base:
            return None
        return base - ints + nones


def _backward(r: ir.Region, elements: set[int], out: set[int]) -> None:
    """Within one region, walking back: the value written into one element is
    0-d, and so are the operands of an elementwise op with a 0-d result
    defined in the same region."""
    here = {id(n.out) for n in r.ops if isinstance(n, ir.Op)}
    local: set[int] = set()
    for node in reversed(r.ops):
        if not isinstance(node, ir.Op) or node.callee is not None:
            continue
        if node.prim == "array.setitem":
            value = node.args[1]
            if isinstance(value, ir.Value) and id(node) in elements:
                local.add(id(value))
            continue
        if node.prim in ELEMENTWISE and (id(node.out) in local or id(node.out) in out):
            operands = node.args[:1] if node.prim in SAME_SHAPE else node.args
            local.update(id(a) for a in operands if isinstance(a, ir.Value))
    out.update(local & here)


def _element(op: ir.Op, ranks: _Ranks) -> bool:
    """Does the write ``y[idx] = v`` name one element (an integer index per
    axis of ``y``)?"""
    base = ranks.of(op.args[0])
    index = op.attrs.get("index", ())
    if base is None or len(index) != base:
        return False
    for item in index:
        if item[0] != "op":
            return False
        if not ranks.integer(op.args[item[1]]):
            return False
    return True

