"""The symbolic check, path by path.

Contract: :func:`check_symbolic` runs the original function and the
generated code on sympy symbols with every comparison decided at a point
(:mod:`s2s_ad.verify_sympy`). A run records the decisions it took: its
*path*. The check runs at the sample point (``at``, or 0.5, 0.7, ... per
parameter) and, when that run decided any comparison, at ``explore`` seeded
random points too (each coordinate in ±[0.1, 0.9] or ±[1.1, 3]); a random
point where the function raises or is not finite in float64, where a
comparison cannot be decided, or whose run does not finish in its part of
the time (a loop that never ends there), is skipped. Each distinct path found is then
compared on its own (:func:`s2s_ad.verify_proof.compare`), within an equal
share of what is left of the symbolic budget, so one slow path does not
take the whole of it. The verdict lists every path: where it was found, its
decisions, and each partial derivative's result there. Paths no point took
are not covered, and the verdict says how many points were tried.
"""

from __future__ import annotations

import math
import random
import time

import sympy

from s2s_ad import api, verify_trees
from s2s_ad.emit import module as emit
from s2s_ad.verdict import ParamResult, PathResult, Verdict
from s2s_ad.verify_proof import compare
from s2s_ad.verify_sympy import (_Branches, _deadline, _OutOfTime, _run_generated,
                                 _run_original, _Symbolic, _tangents, describe)

EXPLORE = 16
"""Random points whose branch decisions :func:`s2s_ad.check` explores."""

EXPLORE_SHARE = 0.4
"""The part of the symbolic budget that exploring may take."""

SYMBOLIC_SHARE = 0.8
"""The part of a path's share that its exact steps and ``simplify`` may take;
the 50-digit comparison needs the rest."""


class _Run:
    """One symbolic run: the point, the decisions taken, both sides."""

    def __init__(self, point: dict, found: str, decisions: list[tuple], original, generated):
        self.point = point
        self.found = found
        self.decisions = decisions
        self.original = original
        self.generated = generated


def check_symbolic(fn, wrt, args, at, points, seed, output, lengths, deadline,
                   forward: bool = False, explore: int = EXPLORE,
                   end: float | None = None) -> Verdict:
    """The verdict of the symbolic check (module docstring). Symbolic work
    ends by ``deadline`` (``time.monotonic()``), or raises
    :class:`~s2s_ad.verify_sympy._OutOfTime` if the first run cannot; the
    50-digit comparisons share what is left until ``end``, and a partial
    derivative whose comparison runs out of its share is compared with
    central differences at its path's point instead (not in forward mode)."""
    args = dict(args or {})
    if forward:
        functions, src, graph = api.jvp_program(fn, wrt, lengths=lengths)
    else:
        functions, src, graph = api.program(fn, wrt, tuple_result=True, output=output,
                                            lengths=lengths, runtime_lists=False)
    func = graph.main
    if forward and func.result is None and output is None:
        raise api.OutputError(f"{func.name} returns {len(func.outputs)} values; pass output=K "
                              "(--output K) to choose the one to check")
    values, _ = api.resolve_wrt(func, wrt)
    for v in values:
        if v.var in args:
            raise api.WrtError(f"{v.var} is given a concrete value in args; it cannot also be "
                               "differentiated")
    code = functions[0]
    text = emit.module(functions, src.file)
    symbolic = _Symbolic()

    names = [p.value.var for p in func.params]
    # A list parameter gets one symbol per item, named "xs[0]", ... here; a
    # structure parameter one per leaf, named by its path ("p.w").
    trees = verify_trees.specs(lengths)
    shapes = {p.value.var: p for p in func.params if p.items is not None and p.value.var not in trees}
    symbols = {}
    for n in names:
        if n in args:
            continue
        if n in trees:
            for leaf in verify_trees.leaf_names(trees[n], n):
                symbols[leaf] = sympy.Symbol(leaf, real=True)
        elif n in shapes:
            for i in range(len(shapes[n].items)):
                symbols[f"{n}[{i}]"] = sympy.Symbol(f"{n}_{i}", real=True)
        else:
            symbols[n] = sympy.Symbol(n, real=True)
    call_args = {}
    for n in names:
        if n in trees and n not in args:
            call_args[n] = verify_trees.build(
                trees[n], [symbols[leaf] for leaf in verify_trees.leaf_names(trees[n], n)])
        elif n in shapes and n not in args:
            items = [symbols[f"{n}[{i}]"] for i in range(len(shapes[n].items))]
            call_args[n] = items if shapes[n].value.kind == "list" else tuple(items)
        else:
            call_args[n] = args.get(n, symbols.get(n))
    branches = _Branches({})
    symbolic.branches = branches

    def run(point: dict, found: str) -> _Run:
        branches.point = point
        branches.decided = []
        original = _run_original(src, symbolic, call_args)
        if output is not None:
            original = sympy.sympify(list(original)[output])
        if forward:
            generated = _tangents(text, code, values, shapes, output, functions, symbolic,
                                  graph, call_args)
        else:
            generated = _run_generated(text, code.name, functions, symbolic, graph,
                                       {**call_args, code.seed: sympy.Integer(1)})
        return _Run(point, found, list(dict.fromkeys(branches.decided)), original, generated)

    at = verify_trees.expand_at(at, trees)
    sample = {sym: sympy.Float((at or {}).get(n, 0.5 + 0.2 * i))
              for i, (n, sym) in enumerate(symbols.items())}
    with _deadline(None if deadline is None else max(1e-3, deadline - time.monotonic())):
        first = run(sample, "the given point" if at else "the sample point")
    paths = {tuple(first.decisions): first}
    tried, skipped, slow, cut = 0, 0, 0, False
    if first.decisions and explore:
        rng = random.Random(seed)
        until = (None if deadline is None
                 else time.monotonic() + EXPLORE_SHARE * max(0.0, deadline - time.monotonic()))
        for k in range(explore):
            point = {sym: sympy.Float(_draw(rng)) for sym in symbols.values()}
            if until is not None and time.monotonic() >= until:
                cut = True
                break
            tried += 1
            # A loop may run forever at some points: one point may take a
            # quarter of what is left of the share, or its even part if more.
            limit = None
            if until is not None:
                rest = until - time.monotonic()
                limit = max(1e-3, rest / 4, rest / (explore - k))
            try:
                with _deadline(limit):
                    if not _finite_at(fn, names, shapes, args, symbols, point, output, trees):
                        skipped += 1
                        continue
                    r = run(point, f"random point {k + 1}")
            except _OutOfTime:
                slow += 1
                continue
            except (ArithmeticError, RecursionError, TypeError, ValueError, IndexError):
                skipped += 1  # a comparison not real there, or outside the domain
                continue
            paths.setdefault(tuple(r.decisions), r)

    rng = random.Random(seed)
    found = list(paths.values())
    items = sum(len(_pairs(v, shapes, g, trees)) for v, g in zip(values, first.generated))
    left = items * len(found)
    results = []
    for r in found:
        path_results = []
        floats = _Float64(fn, values, names, shapes, args, symbols, r.point, output, lengths,
                          trees)
        for v, got in zip(values, r.generated):
            for name, g in _pairs(v, shapes, got, trees):
                now = time.monotonic()
                share = (None if deadline is None
                         else now + SYMBOLIC_SHARE * max(0.0, deadline - now) / left)
                numeric = None if end is None else max(0.05, (end - now) / left)
                left -= 1
                path_results.append(_compare_item(
                    name, r, symbols, g, rng, points, share, numeric,
                    None if forward else floats))
        results.append(PathResult(_fmt_point(symbols, r.point), r.found,
                                  [describe(d) for d in r.decisions], path_results))

    notes = []
    if forward:
        notes.append(f"forward mode: {code.name} was run once per parameter, with a unit "
                     "tangent there and zero elsewhere, and each tangent compared")
    if first.decisions:
        where = ("the given point" if at else "the sample point")
        if explore:
            where += f" and {tried} random point{'s' * (tried != 1)} (seed {seed}"
            if skipped:
                where += f"; {skipped} outside the function's domain, skipped"
            if slow:
                where += (f"; {slow} where the run did not finish in its part of the time "
                          "budget, skipped")
            where += ")"
            if cut:
                where += f", of {explore}: exploring ran out of its share of the time budget"
        notes.append(f"comparisons were decided at {where}; {len(found)} distinct "
                     f"path{'s' * (len(found) != 1)} found, each checked on its own; a path "
                     "no point took is not covered (--at/--explore to look further)")
    if args:
        notes.append("checked with " + ", ".join(f"{k}={v}" for k, v in args.items()))
    rules = [r.describe() for r in graph.rules]
    if rules:
        notes.append("the gradient rests on user derivative rules, taken as given (each "
                     "appears above as an undefined derivative D<i>_<name>): " + "; ".join(rules))
    return Verdict.of_paths(func.name, results, notes, rules)


def _compare_item(name, r: _Run, symbols, g, rng, points, share, numeric, floats):
    """One partial derivative on one path: ``sympy.diff``, the exact steps
    and simplify until ``share`` (:func:`s2s_ad.verify_proof.compare`), the
    50-digit comparison within ``numeric`` seconds more, then (when
    ``floats`` is given) central differences at the path's point. Forward
    mode (no ``floats``) has no fallback and runs in the whole budget."""
    within = None
    if floats is not None and numeric is not None:
        within = numeric + (0.0 if share is None else max(0.0, share - time.monotonic()))
    try:
        with _deadline(within):
            expected = sympy.diff(r.original, symbols[name])
            return compare(name, expected, sympy.sympify(g), symbols, r.point,
                           bool(r.decisions), rng, points, share)
    except (_OutOfTime, RecursionError):
        if floats is None:
            raise
    return floats.compare(name, g)


class _Float64:
    """The compiled gradient against central differences of ``fn`` (float64)
    at one path's point: the last resort of a partial derivative whose
    symbolic comparison did not finish."""

    TOLERANCE = 1e-6

    def __init__(self, fn, values, names, shapes, args, symbols, point, output, lengths, trees):
        self.fn, self.values, self.output, self.lengths = fn, values, output, lengths
        self.names, self.shapes, self.args, self.symbols = names, shapes, args, symbols
        self.point, self.trees = point, trees
        self.call = _float_call(names, shapes, args, symbols, point, trees)
        self.gradient = None

    def value(self, call) -> float:
        out = self.fn(**call)
        return float(out if self.output is None else list(out)[self.output])

    def compare(self, name: str, g) -> ParamResult:
        if self.gradient is None:
            grad = api.grad(self.fn, wrt=tuple(v.var for v in self.values), output=self.output,
                            lengths=self.lengths)
            self.gradient = dict(zip((v.var for v in self.values), grad(**self.call)))
        tree = next((n for n, spec in self.trees.items()
                     if name in verify_trees.leaf_names(spec, n)), None)
        if tree is not None:
            # A leaf of a structure: its entry of the gradient's structure,
            # and the function with that leaf's symbol moved.
            leaves = verify_trees.leaf_names(self.trees[tree], tree)
            got = verify_trees.leaves_of(self.trees[tree], self.gradient[tree])[
                leaves.index(name)]
            x = float(self.point[self.symbols[name]])

            def at(shift: float) -> float:
                moved = dict(self.point)
                moved[self.symbols[name]] = x + shift
                return self.value(_float_call(self.names, self.shapes, self.args, self.symbols,
                                              moved, self.trees))
        else:
            var, _, index = name.partition("[")
            got = self.gradient[var]
            k = int(index[:-1]) if index else None
            if k is not None:
                got = got[k]
            x = self.call[var] if k is None else self.call[var][k]

            def at(shift: float) -> float:
                c = dict(self.call)
                if k is None:
                    c[var] = x + shift
                else:
                    items = list(c[var])
                    items[k] = x + shift
                    c[var] = type(self.call[var])(items)
                return self.value(c)

        h = 1e-6 * max(1.0, abs(x))
        up, down = at(h), at(-h)
        fd = (up - down) / (2 * h)
        err = abs(fd - got) / max(1.0, abs(got))
        # float64 rounding of the two values, magnified by 1/h
        noise = 1e-15 * max(abs(up), abs(down)) / h / max(1.0, abs(got))
        where = ", ".join(f"{n}={v!r}" for n, v in self.call.items())
        why = ("the 50-digit comparison ran out of its share of the time budget, so this is a "
               "numeric check, not a proof")
        if err > self.TOLERANCE + noise:
            return ParamResult(name, "mismatch", f"central differences {fd!r}", got,
                               f"at {where}: central difference {fd:.10g}, generated {got:.10g} "
                               f"({why})")
        return ParamResult(name, "agrees", None, got,
                           f"with central differences at the path's point {where} (float64; "
                           f"relative difference {err:.1e}; {why})")


def _pairs(v, shapes, got, trees) -> list:
    if v.var in trees:
        spec = trees[v.var]
        return list(zip(verify_trees.leaf_names(spec, v.var), verify_trees.leaves_of(spec, got)))
    if v.var in shapes:
        return [(f"{v.var}[{i}]", g) for i, g in enumerate(got)]
    return [(v.var, got)]


def _draw(rng: random.Random) -> float:
    lo, hi = rng.choice([(0.1, 0.9), (1.1, 3.0), (-0.9, -0.1), (-3.0, -1.1)])
    return round(rng.uniform(lo, hi), 4)


def _float_call(names, shapes, args, symbols, point, trees) -> dict:
    """The arguments of a call of the function itself at ``point``."""
    call = {}
    for n in names:
        if n in args:
            call[n] = args[n]
        elif n in trees:
            call[n] = verify_trees.build(trees[n], [float(point[symbols[leaf]]) for leaf
                                                    in verify_trees.leaf_names(trees[n], n)])
        elif n in shapes:
            items = [float(point[symbols[f"{n}[{i}]"]]) for i in range(len(shapes[n].items))]
            call[n] = items if shapes[n].value.kind == "list" else tuple(items)
        else:
            call[n] = float(point[symbols[n]])
    return call


def _finite_at(fn, names, shapes, args, symbols, point, output, trees) -> bool:
    """Whether ``fn`` runs in float64 at ``point`` and gives finite numbers."""
    try:
        value = fn(**_float_call(names, shapes, args, symbols, point, trees))
        if output is not None:
            value = list(value)[output]
        parts = value if isinstance(value, (tuple, list)) else [value]
        return all(math.isfinite(float(p)) for p in parts)
    except Exception:  # raises there: outside the domain (or not a number: let the run decide)
        return False


def _fmt_point(symbols: dict, point: dict) -> str:
    return ", ".join(f"{n}={float(point[s]):.6g}" for n, s in symbols.items())
