"""Calls between user functions: the call graph of a differentiated function.

Contract: :func:`collect` takes a lowered function and lowers, once each,
every user function it calls directly or through other helpers (whichever
module they live in), and returns them in first-call order. Functions with a
user-registered rule are not lowered: their :class:`Pair` names the user's
own ``fwd``/``bwd``, imported by the generated module. A recursive function
(directly or mutually) is lowered once: its pair calls itself, each call
keeping its own tape; a cycle of calls made on every path (no base case)
raises :class:`~s2s_ad.errors.SourceError` at the call that closes it. :func:`pairs` gives every callee its ``NAME_fwd``/``NAME_bwd``
names, unique in the generated module.

Before → after, for ``def f(x): return sq(x) + sq(2 * x)``::

    collect(f) == [sq]           # one pair, used at both call sites
    pairs(...)  == {sq: Pair("sq_fwd", "sq_bwd")}
"""

from __future__ import annotations

from dataclasses import dataclass, field

from s2s_ad.frontend import (callees, integer_args, lowering as frontend, param_uses, passing,
                             source)
from s2s_ad import ir
from s2s_ad.errors import SourceError
from s2s_ad.names import Namer
from s2s_ad.rules import user as user_rules


STRUCTURE_DEPTH = 64
"""How deep a recursion passing a new structure at each call (a tree) may
go: a specialisation is lowered per structure."""


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
    """Lowered helpers, in first-call order: one per specialisation."""
    rules: list = field(default_factory=list)
    """User rules (:class:`~s2s_ad.rules.user.UserRule`) reached, in first-call order."""
    sources: dict = field(default_factory=dict)
    """Python function -> its :class:`~s2s_ad.source.Source`."""
    lowered: dict = field(default_factory=dict)
    """Specialisation key ``(function, parameter kinds)`` (see :func:`key`) ->
    its lowered :class:`~s2s_ad.ir.Function`."""


def key(fn, func: ir.Function) -> tuple:
    """The specialisation ``func`` (a lowering of ``fn``) is: the function and
    the kinds of its parameters. Two call sites whose argument kinds lower
    ``fn`` to the same parameter kinds share one forward/backward pair."""
    kinds = tuple(("static", func.statics[p.value.var]) if p.value.var in func.statics
                  else p.value.kind for p in func.params)
    # structures passed whole: one kind per leaf above, and their specs (a
    # dict and a list of two numbers have the same leaves, not the same code)
    return fn, kinds + ((("passed", func.passed),) if func.passed else ())


def collect(func: ir.Function, src: source.Source) -> CallGraph:
    """The call graph of ``func``: every user function it reaches, lowered
    once per specialisation. A helper's parameters that receive an array at
    a call site are arrays in its lowering (which is then NumPy code, even
    when the helper never names NumPy); the others are lowered as the
    helper's source says. So a helper called with arrays at one site and
    with numbers at another gets two pairs. ``op.callee.kinds`` records
    which specialisation each call uses."""
    graph = CallGraph(func, sources={src.fn: src})
    seen_rules: set[int] = set()
    by_arrays: dict = {}
    """(function, parameters receiving arrays) -> specialisation key."""

    def visit(f: ir.Function, fn, stack: list, always: list, made: list) -> None:
        # stack: the functions being lowered, outermost first; made: the
        # specialisation (`fixed` below) each was lowered for
        top = {id(op) for op in f.body.ops}
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
            arrays = passing.array_arguments(op)
            given = passing.static_arguments(op)
            fixed = (target, arrays, tuple(given.items()), op.callee.passed)
            if fixed in made and all(always[made.index(fixed) + 1:] + [id(op) in top]):
                # Recursion is differentiated as it runs (a pair calling
                # itself, a tape per call); a cycle of calls made on every
                # path never returns. A call passing another structure (a
                # tree's branch, `walk(node[0])`) is another specialisation:
                # lowered for it, down to the leaves, where the structure
                # decides the base case (`isinstance(node, float)`).
                at = made.index(fixed)
                cycle = " → ".join(g.__name__ for g in stack[at:] + [target])
                caller = graph.sources[fn]
                raise SourceError(f"recursive call ({cycle}) made on every path: the recursion "
                                  "never ends (no branch returns without it); give it a base "
                                  "case (`if n == 0: return ...`)",
                                  op.loc.file, op.loc.line, op.loc.col, caller.line(op.loc.line))
            if target in stack and fixed not in made and fixed[3]:
                # a structure passed to an enclosing function again: another
                # specialisation, which must receive a part of it
                last = len(stack) - 1 - stack[::-1].index(target)
                before = made[last][3] if made[last][1] is not None else ()
                if stack.count(target) >= STRUCTURE_DEPTH or (
                        before and passing.spec_size(fixed[3]) >= passing.spec_size(before)):
                    caller = graph.sources[fn]
                    raise SourceError(
                        f"`{target.__name__}` calls itself with a structure no smaller than "
                        "the one it was given: code is generated for each structure a "
                        "recursion passes, so each call must pass a part of it (`node[0]`, "
                        f"`tree['children'][i]`), at most {STRUCTURE_DEPTH} deep; pass "
                        "numbers or arrays otherwise", op.loc.file, op.loc.line,
                        op.loc.col, caller.line(op.loc.line))
            if target not in graph.sources:
                try:
                    graph.sources[target] = source.locate_helper(target)
                except SourceError as exc:
                    if exc.line > 0:
                        raise
                    raise _error(op, graph.sources[fn], exc.message) from None
            closure_data = [n for n in graph.sources[target].captured
                            if n not in graph.sources[target].module_data]
            if closure_data:
                held = ", ".join(f"`{n}`" for n in closure_data)
                raise _error(op, graph.sources[fn], f"`{target.__name__}` is a closure that "
                             f"captures data ({held}) of the function that made it; captured "
                             "data are passed to the function you differentiate only: define "
                             f"`{target.__name__}` inside it, or make {held} parameters")
            spec = by_arrays.get(fixed)
            if spec is None:
                # lowered with the caller, if it could be, for the same arguments
                lowered = op.callee.lowered if op.callee.lowered_for == fixed else None
                if lowered is None:
                    try:
                        lowered = _lower_for(op, graph.sources[target], arrays,
                                             graph.sources[fn], given)
                    except param_uses.SequenceParameter as exc:
                        raise callees.passed_on(op, f.params, fn, exc,
                                                graph.sources[fn]) from None
                spec = key(target, lowered)
                by_arrays[fixed] = spec
                if spec not in graph.lowered:
                    graph.lowered[spec] = lowered
                    graph.callees.append(lowered)
                    try:
                        visit(lowered, target, stack + [target], always + [id(op) in top],
                              made + [fixed])
                    except param_uses.SequenceParameter as exc:
                        raise callees.passed_on(op, f.params, fn, exc,
                                                graph.sources[fn]) from None
            op.callee.kinds = spec[1]
            if not passing.same_shape(graph.lowered[spec].returns, op.callee.returns):
                raise _error(op, graph.sources[fn], f"`{target.__name__}` returns a dict, a "
                             "NamedTuple, a dataclass or nested tuples, which its caller reads "
                             "only when it is not recursive; return a flat tuple of numbers")
            _check_shape(op, graph.lowered[spec], graph.sources[fn])
            # A function lowered earlier was fully walked then (depth-first),
            # so any cycle through it would already have been found.

    visit(func, src.fn, [src.fn], [True], [(src.fn, None)])
    integer_args.propagate(graph)
    return graph


def _lower_for(op: ir.Op, callee: source.Source, arrays: frozenset,
               caller: source.Source, given: dict) -> ir.Function:
    passed = dict(op.callee.passed)
    """The callee of ``op`` lowered for the kinds of its arguments (and the
    static values it is given). Where the arrays change how a helper that
    never names NumPy is lowered, a refusal in it says which call passed them."""
    if not arrays or frontend.names_numpy(callee):
        return frontend.lower(callee, arrays=arrays, statics=given, passed=passed, helper=True)
    try:
        return frontend.lower(callee, arrays=arrays, statics=given, passed=passed, helper=True)
    except param_uses.SequenceParameter:
        raise
    except SourceError as problem:
        raise _passes_array(op, problem, arrays) from None


def _passes_array(op: ir.Op, problem: SourceError, arrays: frozenset) -> SourceError:
    """``problem`` (located in the callee), raised because ``op`` passes an array."""
    what = ", ".join(f"`{n}`" for n in sorted(arrays))
    return SourceError(f"{problem.message}; `{op.text}` at {op.loc.file}:{op.loc.line}:"
                       f"{op.loc.col + 1} passes an array (to {what})", problem.file,
                       problem.line, problem.col, problem.source_line)


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
        result = callee.result
        if isinstance(result, ir.Value) and result.kind == "list":
            raise _error(op, src, f"`{callee.name}` returns a list of any length; it cannot be "
                         "unpacked (its length is known only when the code runs): bind it to "
                         f"a name and index it (`xs = {callee.name}(...); xs[0]`)")
        if isinstance(result, ir.Value) and result.kind == "array":
            raise _error(op, src, f"`{callee.name}` returns one array, not a tuple; unpacking "
                         "a helper's array result is not supported: index it "
                         f"(`r = {callee.name}(...); a, b = r[0], r[1]`)")
        raise _error(op, src, f"`{callee.name}` returns one number; it cannot be unpacked "
                     "or indexed")


def pairs(graph: CallGraph, taken: set[str]) -> dict:
    """Specialisation key (:func:`key`; ``(function, None)`` for a user rule)
    -> :class:`Pair`, with names that collide neither with each other nor
    with ``taken`` (names the module already uses)."""
    namer = Namer(reserved=taken)
    out = {}
    for spec, f in graph.lowered.items():
        out[spec] = Pair(namer.fresh(f"{f.name}_fwd"), namer.fresh(f"{f.name}_bwd"),
                         outputs=len(f.outputs) if f.outputs is not None else None)
    for rule in graph.rules:
        names, imports = [], {}
        for part in (rule.fwd, rule.bwd):
            module, name = user_rules.importable(part)
            alias = namer.fresh(name)
            names.append(alias)
            imports.setdefault(module, []).append(name if alias == name else f"{name} as {alias}")
        out[(rule.fn, None)] = Pair(names[0], names[1],
                                    tuple(f"from {m} import {', '.join(n)}"
                                          for m, n in imports.items()))
    return out


def specialisation(graph: CallGraph, lowered: ir.Function) -> tuple:
    """The key under which ``lowered`` (one of ``graph.callees``) is kept."""
    return next(k for k, f in graph.lowered.items() if f is lowered)


def all_names(graph: CallGraph) -> set[str]:
    """Every name any function of the graph uses (SSA values, module aliases)."""
    out: set[str] = set()
    for f in [graph.main, *graph.callees]:
        out |= set(f.names) | set(f.modules.values())
    return out
