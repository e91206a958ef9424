"""Analyses the reverse transform relies on.

* **activity**: a value is *active* when it depends on a ``wrt`` parameter
  through differentiable operands (``varied``) and the result depends on it
  (``useful``). Only active values get adjoints; integers, constants and
  values that don't reach the output never do. Through loops both are fixed
  points: a carried value is varied when its initial or its next value is.
* **scopes**: :func:`scopes` — for each value, the region that defines it and
  the innermost loop around that region (None outside loops). The reverse
  sweep reads a value defined inside a loop from the tape (or recomputes it);
  one defined outside every loop is still alive.
* **shapes**: :func:`shape_classes` — values known to share a shape, so
  that no un-broadcasting is needed between them.
* **to-be-recorded**: :func:`needed_forward` — which forward ops the reverse
  sweep needs (the values it reads, and what computes them).

>>> from s2s_ad import ir
"""

from __future__ import annotations

import linecache
from dataclasses import dataclass

from s2s_ad import ir
from s2s_ad.errors import SourceError
from s2s_ad.rules import RULES
from s2s_ad.rules.numpy import BROADCASTING, SAME_SHAPE


def differentiable(op: ir.Op) -> list[bool]:
    """Per operand: may the op's result have a non-zero derivative with
    respect to it? A call to a user function is assumed to, for every operand
    (its own backward pass returns zeros where it does not)."""
    if op.callee is not None:
        return [True] * len(op.args)
    if op.prim == "item":
        return [True, False]
    rule = RULES[op.prim]
    # (an operand whose derivative is refused counts: reaching it is refused)
    return [rule.flows(i) or rule.refusal(i) is not None for i in range(len(op.args))]


def refuse_reached(op: ir.Op, active) -> None:
    """Refuse, located, an op whose operand of a refused derivative
    (:attr:`s2s_ad.rules.Rule.refused`) is active (``active(a)``)."""
    rule = RULES.get(op.prim) if op.callee is None else None
    for i, why in rule.refused if rule is not None else ():
        if i < len(op.args) and active(op.args[i]):
            raise SourceError(f"`{op.text}`: {why}", op.loc.file, op.loc.line, op.loc.col,
                              linecache.getline(op.loc.file, op.loc.line).rstrip("\n"))


def _differentiable(kind: str) -> bool:
    return kind in ir.DIFFERENTIABLE | {"tuple", "list"}


def varied(func: ir.Function, wrt: list[ir.Value]) -> set[int]:
    """ids of values that depend differentiably on ``wrt``."""
    out = {id(v) for v in wrt}

    def is_v(a) -> bool:
        return isinstance(a, ir.Value) and id(a) in out

    def region(r: ir.Region) -> None:
        for node in r.ops:
            if isinstance(node, ir.Op):
                if not _differentiable(node.out.kind):
                    continue
                if any(is_v(a) and d for a, d in zip(node.args, differentiable(node))):
                    out.add(id(node.out))
            elif isinstance(node, ir.If):
                region(node.then)
                region(node.orelse)
                for o, a, b in zip(node.outs, node.then.yields, node.orelse.yields):
                    if _differentiable(o.kind) and (is_v(a) or is_v(b)):
                        out.add(id(o))
            else:
                while True:
                    before = len(out)
                    for c, init, y in zip(node.carried, node.inits, node.body.yields):
                        if _differentiable(c.kind) and (is_v(init) or is_v(y)):
                            out.add(id(c))
                    for r2 in node.regions:
                        region(r2)
                    if len(out) == before:
                        break
                for o, c in zip(node.outs, node.carried):
                    if id(c) in out:
                        out.add(id(o))

    region(func.body)
    return out


def useful(func: ir.Function) -> set[int]:
    """ids of values the result depends on differentiably."""
    results = func.outputs if func.result is None and func.outputs else [func.result]
    out = {id(r) for r in results if isinstance(r, ir.Value)}

    def add(a) -> None:
        if isinstance(a, ir.Value):
            out.add(id(a))

    def region(r: ir.Region) -> None:
        for node in reversed(r.ops):
            if isinstance(node, ir.Op):
                if id(node.out) not in out:
                    continue
                for a, d in zip(node.args, differentiable(node)):
                    if d:
                        add(a)
            elif isinstance(node, ir.If):
                for o, a, b in zip(node.outs, node.then.yields, node.orelse.yields):
                    if id(o) in out:
                        add(a)
                        add(b)
                region(node.then)
                region(node.orelse)
            else:
                while True:
                    before = len(out)
                    for o, c, init, y in zip(node.outs, node.carried, node.inits, node.body.yields):
                        if id(o) in out or id(c) in out:
                            add(c)
                            add(y)
                            add(init)
                    region(node.body)
                    if len(out) == before:
                        break

    region(func.body)
    return out


def active(func: ir.Function, wrt: list[ir.Value]) -> set[int]:
    """Varied and useful. (The reverse sweep also leaves out the shifts that
    cancel, :func:`s2s_ad.reverse.shifts.cancelled`.)"""
    return varied(func, wrt) & useful(func)


@dataclass
class Scope:
    region: ir.Region
    loop: object
    """The innermost For/While whose body (or a branch inside it) defines the
    value; None outside loops."""
    node: object = None
    """The node that defines the value (None for parameters and loop indices)."""


def scopes(func: ir.Function) -> dict[int, Scope]:
    """For every value: where it is defined (see the module docstring)."""
    out: dict[int, Scope] = {}
    for p in func.params:
        out[id(p.value)] = Scope(func.body, None)

    def region(r: ir.Region, loop) -> None:
        for node in r.ops:
            for v in ir.defined(node):
                out[id(v)] = Scope(r, loop, node)
            if isinstance(node, ir.If):
                region(node.then, loop)
                region(node.orelse, loop)
            elif isinstance(node, (ir.For, ir.While)):
                if isinstance(node, ir.For):
                    out[id(node.index)] = Scope(node.body, node)
                for c in node.carried:
                    out[id(c)] = Scope(node.body, node)
                for r2 in node.regions:
                    region(r2, node)

    region(func.body, None)
    return out


def uses(func: ir.Function) -> dict[int, int]:
    """How many times each value is read (ops, yields, structured operands)."""
    count: dict[int, int] = {}

    def use(a) -> None:
        if isinstance(a, ir.Value):
            count[id(a)] = count.get(id(a), 0) + 1

    def region(r: ir.Region) -> None:
        for node in r.ops:
            for a in ir.operands(node):
                use(a)
            if not isinstance(node, ir.Op):
                for r2 in node.regions:
                    region(r2)
        for y in r.yields:
            use(y)

    region(func.body)
    # a function returning several items (a pair's tuple, before an output is
    # chosen) reads each of them: a shift returned this way does not cancel
    for r in func.outputs if func.result is None and func.outputs else [func.result]:
        use(r)
    return count


def needed_forward(func: ir.Function, read: set[int]) -> list[ir.Op]:
    """The top-level forward ops that compute the values in ``read`` (ids), in
    order (straight-line functions)."""
    need = set(read)
    keep = []
    for op in reversed(func.body.ops):
        if id(op.out) in need:
            keep.append(op)
            need.update(id(a) for a in op.args if isinstance(a, ir.Value))
    keep.reverse()
    return keep


def effects(region: ir.Region) -> set[int]:
    """ids of the nodes of ``region`` (nested ones included) that every
    forward pass runs whatever the reverse sweep reads: ``check`` ops (an
    ``assert``, ``if c: raise``), ``print`` ops, calls to helpers holding one, and the
    branches and loops around them."""
    out: set[int] = set()
    for node in region.ops:
        if isinstance(node, ir.Op):
            if node.prim in ir.EFFECTS or (node.callee is not None and node.callee.effects):
                out.add(id(node))
            continue
        inner = set().union(*(effects(r) for r in node.regions))
        if inner:
            out |= inner | {id(node)}
    return out


def prune(region: ir.Region, live: set[int], inside: set[int], kept: set[int],
          dead: set[int] | None = None) -> None:
    """Add to ``kept`` the ids of the nodes of ``region`` (nested ones
    included) the forward pass must run, given ``live`` (ids of values needed
    later or by the reverse sweep; updated with what the kept nodes read) and
    ``inside`` (ids of structured nodes holding values the reverse sweep
    reads). A kept branch keeps all its yields; a kept loop, given ``dead``,
    only the carried values something reads (see :func:`_prune_loop`), the
    ids of the others added to ``dead``."""
    for node in reversed(region.ops):
        if not (any(id(v) in live for v in ir.defined(node)) or id(node) in inside):
            continue
        kept.add(id(node))
        if dead is not None and isinstance(node, (ir.For, ir.While)) and not node.checkpoint:
            _prune_loop(node, live, inside, kept, dead)
            continue
        live.update(id(a) for a in ir.operands(node) if isinstance(a, ir.Value))
        if not isinstance(node, ir.Op):
            for r in reversed(node.regions):
                live.update(id(y) for y in r.yields if isinstance(y, ir.Value))
                # (a checkpointed loop's body is written again to be recomputed: whole)
                prune(r, live, inside, kept,
                      None if getattr(node, "checkpoint", 0) else dead)


def _prune_loop(node, live: set[int], inside: set[int], kept: set[int], dead: set[int]) -> None:
    """Prune a kept loop's regions keeping only the carried values read after
    the loop, by the reverse sweep, or by what the loop's kept code computes
    from them: ``total += np.sum(ygold * ynorm)`` of a function returning
    ``-total / count`` is not run by the forward pass of its gradient, which
    never reads ``total``. The others (and the code computing only them) are
    left out, their ids added to ``dead``; found again until no more carried
    value is read (one may be read only to compute another)."""
    n = len(node.carried)
    alive = {k for k in range(n)
             if id(node.outs[k]) in live or id(node.carried[k]) in live}
    while True:
        for r in reversed(node.regions):
            live.update(id(y) for k, y in enumerate(r.yields)
                        if isinstance(y, ir.Value) and (r is not node.body or k >= n or k in alive))
            prune(r, live, inside, kept, dead)
        more = {k for k in range(n) if id(node.carried[k]) in live} - alive
        if not more:
            break
        alive |= more
    # (a loop inside another is pruned again on each of the outer loop's rounds,
    # with as much live as before or more: its last round decides)
    for k, c in enumerate(node.carried):
        if k in alive:
            dead.discard(id(c))
        else:
            dead.add(id(c))
    reads = ir.operands(node)  # the range's bounds (or the sequence), then the inits
    reads = reads[:len(reads) - n] + [node.inits[k] for k in sorted(alive)]
    live.update(id(a) for a in reads if isinstance(a, ir.Value))


# -- shapes -------------------------------------------------------------------

def scalar(a: ir.Operand) -> bool:
    """Known to be a scalar (never broadcast against); ``int`` values are
    lengths and indices (integer arrays come from NumPy calls: ``array``)."""
    return isinstance(a, ir.Const) or a.kind in ("float", "int")


REDUCING = frozenset(f"np.{r}" for r in ("sum", "mean", "prod", "max", "min"))


def shape_classes(func: ir.Function, zero_d: frozenset | set = frozenset()) -> dict[int, object]:
    """id(value) -> a token shared by values known to have the same shape:
    elementwise functions of a value, and elementwise operations between
    values of one class (or with scalars), keep its shape. Between two such
    values no broadcasting can happen, so no un-broadcasting is needed.

    A reduction of a value of class C that keeps its axes (``keepdims=True``,
    or ``axis=None``) has C's shape with length-1 axes, so it broadcasts
    against C without changing the shape: ``Z - np.max(Z, axis=1,
    keepdims=True)`` has Z's shape, and the same reduction of another value of
    Z's class has the maximum's shape.

    Inside loops and branches the same rules hold, op by op. A loop's
    carried value has its initial value's class where the body's next value
    then has it too (by induction every iteration starts with the initial
    value's shape: ``y = y * a + x`` over arrays of one class); otherwise,
    and for the loop's results, a class of its own. A branch's result has
    the class both arms' values share, if they share one.

    ``zero_d`` holds the ids of values known to be 0-d
    (:func:`s2s_ad.reverse.ranks.zero_d`): they broadcast against any shape
    without changing it, as a number does (``h / 2 * k`` has ``k``'s class)."""
    classes: dict[int, object] = {}
    reduced: dict[tuple, object] = {}
    """(id of C, axis, keepdims) -> the token of those reductions of class C."""
    within: dict[int, object] = {}
    """id(token of a reduction) -> the token C it broadcasts into."""
    for p in func.params:
        classes[id(p.value)] = p.value

    def op_class(op: ir.Op) -> None:
        rule = RULES.get(op.prim)
        arrays = [a for a in op.args if isinstance(a, ir.Value) and not scalar(a)
                  and id(a) not in zero_d]
        for a in arrays:  # a value no op here defines (a loop's index, say): its own class
            classes.setdefault(id(a), a)
        token = None
        if op.prim in SAME_SHAPE and op.args and isinstance(op.args[0], ir.Value):
            token = classes.get(id(op.args[0]))
        elif op.prim in REDUCING and arrays and arrays[0] is op.args[0]:
            axis, keepdims = op.attrs.get("axis"), bool(op.attrs.get("keepdims"))
            c = classes.get(id(arrays[0]))
            if c is not None and (keepdims or axis is None):
                token = reduced.setdefault((id(c), axis, keepdims), op.out)
                within[id(token)] = c
        elif rule is not None and (op.prim in BROADCASTING or rule.broadcast) and arrays:
            tokens = [classes.get(id(a)) for a in arrays]
            if all(t is not None for t in tokens):
                kinds = {id(t) for t in tokens}
                if len(kinds) == 1:
                    token = tokens[0]
                else:  # values of class C and reductions of C keeping their axes
                    bases = {id(within.get(id(t), t)) for t in tokens}
                    full = [t for t in tokens if id(t) not in within]
                    if len(bases) == 1 and full:
                        token = full[0]
        classes[id(op.out)] = token if token is not None else op.out

    def of(a: ir.Operand):
        return classes.get(id(a)) if isinstance(a, ir.Value) and not scalar(a) else None

    def region(r: ir.Region) -> None:
        for node in r.ops:
            if isinstance(node, ir.Op):
                op_class(node)
            elif isinstance(node, ir.If):
                region(node.then)
                region(node.orelse)
                for o, a, b in zip(node.outs, node.then.yields, node.orelse.yields):
                    ca, cb = of(a), of(b)
                    classes[id(o)] = ca if ca is not None and ca is cb else o
            else:
                loop(node)

    failed: set[int] = set()
    """ids of the loops whose carried values change class: tried once (a loop
    inside another is classified again in the outer loop's second pass)."""

    def loop(node) -> None:
        if id(node) not in failed:
            # first as if every carried array kept its initial value's class
            saved = (dict(classes), dict(reduced), dict(within))
            starts = [of(i) if c.kind == "array" else None
                      for c, i in zip(node.carried, node.inits)]
            for c, t in zip(node.carried, starts):
                classes[id(c)] = t if t is not None else c
            for r in node.regions:
                region(r)
            if all(c.kind != "array" or t is not None and of(y) is t
                   for c, t, y in zip(node.carried, starts, node.body.yields)):
                for o, t in zip(node.outs, starts):
                    classes[id(o)] = t if t is not None else o
                return
            failed.add(id(node))
            classes.clear(), reduced.clear(), within.clear()
            classes.update(saved[0]), reduced.update(saved[1]), within.update(saved[2])
        for c in node.carried:
            classes[id(c)] = c
        for r in node.regions:
            region(r)
        for o in node.outs:
            classes[id(o)] = o

    region(func.body)
    return classes
