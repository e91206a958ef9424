"""``check(..., order=2)``: second derivatives against ``sympy.diff``.

Contract: :func:`check_second` checks every entry of the Hessian s2s-ad
computes (:func:`s2s_ad.hvp`: the generated gradient of the forward-mode
module, reverse over forward) against ``sympy.diff(original, x, y)``. That
module runs on sympy symbols once per ``wrt`` parameter with a unit tangent
there (a column of the Hessian), the original function runs on the same
symbols, and each entry is compared like a first derivative
(:func:`s2s_ad.verify_proof.compare`: exact steps, ``simplify``, then
50-digit random points, which the verdict calls numeric). Both ``∂²f/∂x∂y``
and ``∂²f/∂y∂x`` are checked. Loops and branches of numbers are run as the
module runs them (comparisons decided at the sample point); where the module
cannot be made (a primitive without a forward rule, a user rule), the check
is refused with that reason.
"""

from __future__ import annotations

import inspect
import random
import time

import sympy

from s2s_ad import api
from s2s_ad.cache import generated
from s2s_ad.emit import module as emit
from s2s_ad.errors import S2SError
from s2s_ad.frontend import source as source_mod
from s2s_ad.verdict import Verdict
from s2s_ad.verify_proof import compare
from s2s_ad.verify_sympy import (_Branches, _deadline, _run_generated, _run_original,
                                 _Symbolic, describe)


def check_second(fn, wrt, args, at, points, seed, deadline) -> Verdict:
    """The verdict over the Hessian's entries (module docstring); symbolic
    work ends by ``deadline`` (``time.monotonic()``)."""
    args = dict(args or {})
    func = api.lower(fn)
    values, _ = api.resolve_wrt(func, wrt)
    for v in values:
        if v.var in args:
            raise api.WrtError(f"{v.var} is given a concrete value in args; it cannot also be "
                               "differentiated")
    names = [p.value.var for p in func.params]
    if any(p.items is not None for p in func.params):
        raise S2SError(f"check --order 2: {func.name} takes a list; second derivatives are "
                       "checked for functions of numbers (docs/forward.md)")
    wrt_names = tuple(v.var for v in values)
    try:
        forward = generated(fn, list(wrt_names), "jvp", None)
        forward = getattr(forward, "__wrapped__", forward)
        functions, gsrc, graph = api.program(forward, wrt_names, output=1)
    except S2SError as exc:
        first = str(exc).splitlines()[0]
        raise S2SError(f"check --order 2 runs the module s2s_ad.hvp makes for {func.name} (the "
                       f"gradient of its forward-mode module), which cannot be made: {first} "
                       "(docs/forward.md)") from None
    code = functions[0]
    text = emit.module(functions, gsrc.file)
    tangent_names = list(inspect.signature(forward).parameters)[-len(values):]

    symbols = {n: sympy.Symbol(n, real=True) for n in names if n not in args}
    point = {sym: sympy.Float((at or {}).get(n, 0.5 + 0.2 * i))
             for i, (n, sym) in enumerate(symbols.items())}
    branches = _Branches(point)
    symbolic = _Symbolic()
    symbolic.branches = branches
    call_args = {n: args.get(n, symbols.get(n)) for n in names}
    with _deadline(None if deadline is None else max(1e-3, deadline - time.monotonic())):
        original = _run_original(source_mod.locate(fn), symbolic, call_args)
        columns = []
        for j in range(len(values)):
            seeds = {t: sympy.Integer(int(k == j)) for k, t in enumerate(tangent_names)}
            column = _run_generated(text, code.name, functions, symbolic, graph,
                                    {**call_args, **seeds})
            columns.append(column if isinstance(column, (tuple, list)) else (column,))
    rng = random.Random(seed)
    results = []
    left = len(values) ** 2
    for i, vi in enumerate(values):
        for j, vj in enumerate(values):
            now = time.monotonic()
            share = None if deadline is None else now + max(0.0, deadline - now) / left
            left -= 1
            expected = sympy.diff(original, symbols[vi.var], symbols[vj.var])
            results.append(compare(f"{vi.var},{vj.var}", expected,
                                   sympy.sympify(columns[j][i]), symbols, point,
                                   bool(branches.decided), rng, points, share))
    notes = [f"second derivatives: the gradient of the forward-mode module (s2s_ad.hvp's "
             f"module) was run once per parameter with a unit tangent there, each column of "
             f"the Hessian compared with sympy.diff of {func.name} twice"]
    if branches.decided:
        at_text = ", ".join(f"{k}={float(v):.6g}" for k, v in point.items())
        notes.append(f"comparisons were decided at {at_text} "
                     f"({'; '.join(describe(d) for d in dict.fromkeys(branches.decided))})")
    if args:
        notes.append("checked with " + ", ".join(f"{k}={v}" for k, v in args.items()))
    return Verdict(func.name, results, notes, order=2)
