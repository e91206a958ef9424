"""Calls between user functions: the call graph of a differentiated function.

Contract: :func:`collect` takes a lowered function and lowers, once each,
every user function it calls directly or through other helpers (whichever
module they live in), and returns them in first-call order. Functions with a
user-registered rule are not lowered: their :class:`Pair` names the user's
own ``fwd``/``bwd``, imported by the generated module. Recursion, direct or
mutual, raises :class:`~s2s_ad.errors.SourceError` at the call that closes
the cycle. :func:`pairs` gives every callee its ``NAME_fwd``/``NAME_bwd``
names, unique in the generated module.

Before → after, for ``def f(x): return sq(x) + sq(2 * x)``::

    collect(f) == [sq]           # one pair, used at both call sites
    pairs(...)  == {sq: Pair("sq_fwd", "sq_bwd")}
"""

from __future__ import annotations

from dataclasses import dataclass, field

from s2s_ad.frontend import lowering as frontend, source
from s2s_ad import ir
from s2s_ad.errors import SourceError
from s2s_ad.names import Namer
from s2s_ad.rules import user as user_rules


@dataclass(frozen=True)
class Pair:
    """The module-level names of a callee's forward and backward functions,
    and the import lines a user rule needs."""

    fwd: str
    bwd: str
    imports: tuple[str, ...] = ()
    outputs: int | None = None
    """How many items the function returns, when it returns a tuple."""


@dataclass
class CallGraph:
    main: ir.Function
    callees: list[ir.Function] = field(default_factory=list)
    """Lowered helpers, in first-call order."""
    rules: list = field(default_factory=list)
    """User rules (:class:`~s2s_ad.rules.user.UserRule`) reached, in first-call order."""
    sources: dict = field(default_factory=dict)
    """Python function -> its :class:`~s2s_ad.source.Source`."""
    lowered: dict = field(default_factory=dict)
    """Python function -> its lowered :class:`~s2s_ad.ir.Function`."""


def collect(func: ir.Function, src: source.Source) -> CallGraph:
    graph = CallGraph(func, sources={src.fn: src}, lowered={src.fn: func})
    seen_rules: set[int] = set()
    inplace: dict = {}
    """function -> the augmented assignments that would write into an array
    given to it (its own, then its callees'; see s2s_ad.frontend.aliasing)."""

    def visit(f: ir.Function, fn, stack: list) -> None:
        problems = list(f.inplace)
        for op in ir.walk(f.body):
            if not isinstance(op, ir.Op) or op.callee is None:
                continue
            target = op.callee.fn
            if op.callee.rule is not None:
                if op.out.kind == "tuple":
                    raise _error(op, graph.sources[fn], f"`{target.__name__}` has a user rule; "
                                 "it must return one number")
                if id(target) not in seen_rules:
                    seen_rules.add(id(target))
                    graph.rules.append(op.callee.rule)
                continue
            if target in stack:
                cycle = " → ".join(g.__name__ for g in stack[stack.index(target):] + [target])
                caller = graph.sources[fn]
                raise SourceError(f"recursive call ({cycle}): s2s-ad differentiates "
                                  "non-recursive calls only; rewrite the recursion as a loop",
                                  op.loc.file, op.loc.line, op.loc.col, caller.line(op.loc.line))
            if target not in graph.lowered:
                callee_src = source.locate(target)
                graph.sources[target] = callee_src
                lowered = frontend.lower(callee_src)
                graph.lowered[target] = lowered
                graph.callees.append(lowered)
                visit(lowered, target, stack + [target])
            _check_shape(op, graph.lowered[target], graph.sources[fn])
            if inplace.get(target):
                if any(isinstance(a, ir.Value) and a.kind == "array" for a in op.args):
                    raise _passes_array(op, graph.sources[fn], inplace[target][0])
                problems += inplace[target]
            # A function lowered earlier was fully walked then (depth-first),
            # so any cycle through it would already have been found.

        inplace[fn] = problems

    visit(func, src.fn, [src.fn])
    return graph


def _passes_array(op: ir.Op, src: source.Source, problem: SourceError) -> SourceError:
    """``problem`` (located in the callee), raised because ``op`` passes an array."""
    return SourceError(f"{problem.message}; `{op.text}` at {op.loc.file}:{op.loc.line}:"
                       f"{op.loc.col + 1} passes an array", problem.file, problem.line,
                       problem.col, problem.source_line)


def _error(op: ir.Op, src: source.Source, message: str) -> SourceError:
    return SourceError(message, op.loc.file, op.loc.line, op.loc.col, src.line(op.loc.line))


def _check_shape(op: ir.Op, callee: ir.Function, src: source.Source) -> None:
    """A call's result is used as the callee returns it: a tuple unpacked or
    indexed, a number as a number."""
    returns_tuple = callee.outputs is not None
    if returns_tuple and op.out.kind != "tuple":
        raise _error(op, src, f"`{callee.name}` returns {len(callee.outputs)} values; unpack "
                     f"them (`a, b = {callee.name}(...)`) or index the result")
    if not returns_tuple and op.out.kind == "tuple":
        raise _error(op, src, f"`{callee.name}` returns one number; it cannot be unpacked "
                     "or indexed")


def pairs(graph: CallGraph, taken: set[str]) -> dict:
    """Python function -> :class:`Pair`, with names that collide neither with
    each other nor with ``taken`` (names the module already uses)."""
    namer = Namer(reserved=taken)
    out = {}
    for f in graph.callees:
        fn = _fn_of(graph, f)
        out[fn] = Pair(namer.fresh(f"{f.name}_fwd"), namer.fresh(f"{f.name}_bwd"),
                       outputs=len(f.outputs) if f.outputs is not None else None)
    for rule in graph.rules:
        names, imports = [], {}
        for part in (rule.fwd, rule.bwd):
            module, name = user_rules.importable(part)
            alias = namer.fresh(name)
            names.append(alias)
            imports.setdefault(module, []).append(name if alias == name else f"{name} as {alias}")
        out[rule.fn] = Pair(names[0], names[1],
                            tuple(f"from {m} import {', '.join(n)}" for m, n in imports.items()))
    return out


def _fn_of(graph: CallGraph, f: ir.Function):
    for fn, g in graph.lowered.items():
        if g is f:
            return fn
    raise KeyError(f.name)


def all_names(graph: CallGraph) -> set[str]:
    """Every name any function of the graph uses (SSA values, module aliases)."""
    out: set[str] = set()
    for f in [graph.main, *graph.callees]:
        out |= set(f.names) | set(f.modules.values())
    return out
