"""Writes into an array written in place whose elements nothing touched
before: their reverse need not zero the elements' adjoint.

Contract: :func:`fresh` returns the ids of the writes ``y[i] = v`` of one
family (:mod:`s2s_ad.reverse.inplace`) after whose reverse no statement of the
reverse sweep reads ``dy[i]``. The reverse of a write reads the element's
adjoint (``dv = dy[i]``) and zeroes it (``dy[i] = 0.0``): the zero is what
the reverse of an earlier op reading or writing that element must see (the
value it read was overwritten). Statements that run after the write's
reverse are the reverses of the ops the forward pass ran before the write; if
none of them touches element ``i``, the zero is never read and is not
written.

A write qualifies when, with ``i`` the index of a ``for`` loop inside no
other loop (constant start ``s`` ≥ 0, constant step ``S`` > 0), it is
``y[i + c]`` (``0 ≤ c < S``; ``y[i]`` and ``y[i + 1]`` of a loop stepping
by 2 each write their own elements) inside that loop, the array was made by
``np.zeros``, ``np.ones``, ``np.zeros_like`` or ``np.ones_like`` (whose
reverse reads no adjoint), and every other read or write of the array is

* after the loop; or
* before it, at a constant index ``k`` with ``0 ≤ k < s``; or
* inside it, at ``i + e`` with ``s + e ≥ 0`` (never wrapping to the end of
  the array), where ``e - c`` is not a multiple ``m·S`` with ``m ≥ 0``
  (no element the write writes, in the same or a later iteration:
  ``e < c``, or between multiples of the step), or ``e = c`` after the write
  in the loop's body.

Any other use of the array before the write (``np.sum(y)``, ``y * w``, a
slice, an index computed otherwise) keeps the zero.

The same order of writes lets the reverse sweep read an element again
instead of taping it (:func:`settled`): a read ``t = y[i - c]`` (``c ≥ 1``,
``s - c ≥ 0``) in such a loop, where every write into the array is before
the loop or is ``y[i] = ...`` in it, reads an element no later write
changes, so at the read's reverse the buffer still holds ``t``.

Before → after, for ``y[0] = x[0]; for i in range(1, n): y[i] = y[i - 1] * a + x[i]``::

    t5 = t5_tape.pop()           t5 = y[t4]
    dt8 = dy[i]                  dt8 = dy[i]
    dy[i] = 0.0
    dx[i] += dt8                 dx[i] += dt8
"""

from __future__ import annotations

from s2s_ad import ir
from s2s_ad.reverse.analysis import differentiable, uses
from s2s_ad.rules.numpy import DTYPE_ONLY

ROOTS = frozenset({"np.zeros", "np.ones", "np.zeros_like", "np.ones_like",
                   "array.zeros_as", "array.ones_as"})
"""Constructors whose reverse reads no adjoint."""


def fresh(func: ir.Function, root: ir.Op | None, members: set[int],
          writes: list[ir.Op]) -> set[int]:
    """ids of the writes among ``writes`` whose reverse need not zero the
    elements they wrote (see the module docstring)."""
    if root is None or root.prim not in ROOTS:
        return set()
    places = _places(func.body)
    uses = [n for n in ir.walk(func.body) if isinstance(n, ir.Op) and n is not root
            and n.prim not in DTYPE_ONLY and (id(n.out) in members or any(isinstance(a, ir.Value) and id(a) in members
                                    for a in n.args))]
    out = set()
    for w in writes:
        loop = places[id(w)][1]
        if not _index_loop(loop, places):
            continue
        c = _offset(w, loop)
        if c is None or not 0 <= c < loop.step.value:
            continue
        start = loop.start.value
        if all(_harmless(p, w, loop, start, places) for p in uses if p is not w):
            out.add(id(w))
    return out


def settled(func: ir.Function, members: set[int], writes: list[ir.Op]) -> set[int]:
    """ids of the reads ``y[i - c]`` of the family whose element no write
    after them changes (see the module docstring)."""
    places = _places(func.body)
    out = set()
    for node in ir.walk(func.body):
        if not (isinstance(node, ir.Op) and node.prim == "array.getitem"
                and isinstance(node.args[0], ir.Value) and id(node.args[0]) in members):
            continue
        loop = places[id(node)][1]
        if not _index_loop(loop, places):
            continue
        c = _offset(node, loop)
        if c is None or c >= 0 or loop.start.value + c < 0:
            continue
        if all(places[id(w)][0] < places[id(loop)][0]
               or (places[id(w)][1] is loop and _offset(w, loop) == 0) for w in writes):
            out.add(id(node))
    return out


def read_once(func: ir.Function, x: ir.Value) -> set[int]:
    """ids of the reads of ``x`` (an array parameter whose adjoint the sweep
    adds into in place) that are each the only read of their elements, when
    every use of ``x`` with a derivative is one of them: ``x[i + c]`` in one
    ``for`` loop inside no other loop over ``range(s, n, step)`` (``s`` ≥ 0
    and ``step`` > 0 constants), with ``0 ≤ c < step`` and no two reads at one
    ``c``. No two iterations then read one element (``i + c`` steps over
    ``s + c``, ``s + c + step``, ...), nor two reads in one iteration, so each
    element's adjoint gets one contribution, into zeros: the reverse sweep
    assigns it (``dx[i + 1] = g``) instead of adding it (``dx[i + 1] += g``),
    which reads the elements first. Else the empty set.

    Before → after, for ``for i in range(0, n, 2): h = x[i] * x[i + 1]``::

        dx[t2] += dt3                  dx[t2] = dt3
        dx[i] += dt1                   dx[i] = dt1
    """
    places = _places(func.body)
    reads, as_args = [], 0
    for n in ir.walk(func.body):
        if isinstance(n, ir.Op) and any(a is x for a in n.args):
            as_args += sum(a is x for a in n.args)
            flows = differentiable(n)
            if any(a is x and flows[k] for k, a in enumerate(n.args)):
                reads.append(n)
    # a use that is no operation's argument (a loop's start value, a yield, the
    # result: `y = x` carried into a loop, its adjoint added into dx before the
    # reverse sweep reaches the indexed loop) gets contributions the reads do not count
    if not reads or uses(func).get(id(x), 0) > as_args:
        return set()
    loop = places[id(reads[0])][1]
    if not _index_loop(loop, places):
        return set()
    offsets = set()
    for n in reads:
        if n.prim != "array.getitem" or n.callee is not None or n.args[0] is not x \
                or any(a is x for a in n.args[1:]) or places[id(n)][1] is not loop:
            return set()
        c = _offset(n, loop)
        if c is None or not 0 <= c < loop.step.value or c in offsets:
            return set()
        offsets.add(c)
    return {id(n) for n in reads}


def _places(body: ir.Region) -> dict[int, tuple[int, object, frozenset]]:
    """id(node) -> (its place in program order, the innermost loop around
    it or None, the ids of every loop around it)."""
    out: dict[int, tuple[int, object, frozenset]] = {}

    def walk(r: ir.Region, loop, loops: frozenset) -> None:
        for node in r.ops:
            out[id(node)] = (len(out), loop, loops)
            if not isinstance(node, ir.Op):
                is_loop = isinstance(node, (ir.For, ir.While))
                for r2 in node.regions:
                    walk(r2, node if is_loop else loop, loops | {id(node)} if is_loop else loops)
            if isinstance(node, (ir.For, ir.While)):
                out[("end", id(node))] = (len(out), loop, loops)

    walk(body, None, frozenset())
    return out


def _index_loop(loop, places) -> bool:
    """A ``for`` loop inside no other loop (it runs once at most) over
    ``range(s, n, step)``, ``s`` ≥ 0 and ``step`` > 0 constants."""
    return (isinstance(loop, ir.For) and not places[id(loop)][2] and loop.seq is None
            and isinstance(loop.start, ir.Const) and type(loop.start.value) is int
            and loop.start.value >= 0
            and isinstance(loop.step, ir.Const) and type(loop.step.value) is int
            and loop.step.value > 0)


def _offset(op: ir.Op, loop: ir.For) -> int | None:
    """``c`` when ``op`` reads or writes ``y[i + c]``, ``i`` the loop's index."""
    index = op.attrs.get("index", ())
    if op.prim not in ("array.getitem", "array.setitem") or len(index) != 1 \
            or index[0][0] != "op":
        return None
    a = op.args[index[0][1]]
    if a is loop.index:
        return 0
    producer = _producer(loop, a)
    if producer is None or producer.callee is not None or len(producer.args) != 2:
        return None
    x, y = producer.args
    if producer.prim == "sub" and x is loop.index and _int(y):
        return -y.value
    if producer.prim == "add" and x is loop.index and _int(y):
        return y.value
    if producer.prim == "add" and y is loop.index and _int(x):
        return x.value
    return None


def _producer(loop: ir.For, a) -> ir.Op | None:
    if not isinstance(a, ir.Value):
        return None
    for node in ir.walk(loop.body):
        if isinstance(node, ir.Op) and node.out is a:
            return node
    return None


def _int(a) -> bool:
    return isinstance(a, ir.Const) and type(a.value) is int


def _harmless(p: ir.Op, w: ir.Op, loop: ir.For, start: int, places) -> bool:
    """Does ``p``'s reverse leave ``dy[i]`` unread after ``w``'s reverse?"""
    where, _, loops = places[id(p)]
    if id(loop) not in loops:
        if where > places[("end", id(loop))][0]:
            return True  # after the loop: its reverse runs before the loop's
        index = p.attrs.get("index", ())
        if p.prim not in ("array.getitem", "array.setitem") or len(index) != 1 \
                or index[0][0] != "op":
            return False
        k = p.args[index[0][1]]
        return _int(k) and 0 <= k.value < start
    c = _offset(p, loop)
    if c is None or start + c < 0:  # a negative index wraps: any element
        return False
    # p touches i_p + c, w writes i_w + c_w: the same element when
    # i_w - i_p = c - c_w, a multiple of the step, and p ran first if that
    # multiple is positive, or zero with p before w in the body
    d = c - _offset(w, loop)
    if d == 0:
        return where > places[id(w)][0]
    return d < 0 or d % loop.step.value != 0
