"""Per-call overhead: each public entry point (``grad``, ``value_and_grad``,
``jvp``, ``vjp``, ``hvp``) called as a user calls it, against the generated
function it runs called directly, timed interleaved in one run. The
difference is what the entry point adds per call: the check of the argument
kinds (numbers, lists of numbers, arrays) that picks the generated code, and
for ``vjp`` the lookup of the pair for these arguments and the closure it
returns. ``report()`` prints the table (run.py calls it).

Each row checks first that both calls give the same result."""

import os
import sys

import numpy as np

from harness import interleaved_times

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "examples"))

from mlp import mlp_loss  # noqa: E402
from workloads_arrays import _mlp_args  # noqa: E402
from workloads_loops import HORNER_ARGS, horner  # noqa: E402
from workloads_scalar import ROSEN_ARGS, rosenbrock10  # noqa: E402

WORKLOADS: list = []


def _same(a, b) -> bool:
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return bool(np.all(np.asarray(a) == np.asarray(b)))


def _rows():
    """(label, through the API, the generated function called directly)."""
    import s2s_ad
    from s2s_ad import hessians

    rows = []
    for name, fn, args, wrt in (("rosenbrock, 10 floats", rosenbrock10, ROSEN_ARGS, None),
                                ("horner, list of 100", horner, HORNER_ARGS, (0, 1))):
        g = s2s_ad.grad(fn, wrt=wrt)
        rows.append((f"grad: {name}", lambda g=g, a=args: g(*a),
                     lambda r=g.__wrapped__, a=args: r(*a)))
        vg = s2s_ad.value_and_grad(fn, wrt=wrt)
        rows.append((f"value_and_grad: {name}", lambda g=vg, a=args: g(*a),
                     lambda r=vg.__wrapped__, a=args: r(*a)))
        pair = s2s_ad.cache.generated(fn, None, "pair", None,
                                      s2s_ad.cache.shapes(fn, args, {}) or None)
        rows.append((f"vjp: {name} (its forward pass)",
                     lambda f=fn, a=args: s2s_ad.vjp(f, *a)[0],
                     lambda p=pair[0], a=args: p(*a)[0]))
    # jvp: tangents passed as a user writes them (keywords, interned names)
    j = s2s_ad.jvp(rosenbrock10)
    seeds = {sys.intern(f"dx{i}"): 0.5 for i in range(10)}
    rows.append(("jvp: rosenbrock, 10 floats", lambda j=j, k=seeds: j(*ROSEN_ARGS, **k),
                 lambda r=j.__wrapped__, k=seeds: r(*ROSEN_ARGS, **k)))
    jh = s2s_ad.jvp(horner)
    c, x = HORNER_ARGS
    dc = [0.5] * len(c)
    rows.append(("jvp: horner, list of 100", lambda: jh(c, x, dc=dc, dx=0.5),
                 lambda r=jh.__wrapped__: r(c, x, dc=dc, dx=0.5)))
    for name, fn, args, v in (
            ("rosenbrock, 10 floats", rosenbrock10, ROSEN_ARGS, (0.5,) * 10),
            ("MLP loss 64x10-32-1", mlp_loss, _mlp_args(64, 10, 32), None)):
        wrt = None if fn is rosenbrock10 else ("W1", "b1", "W2", "b2")
        if v is None:
            rng = np.random.default_rng(1)
            v = tuple(rng.normal(size=np.shape(a)) for a in args[:4])
        h = s2s_ad.hvp(fn, wrt=wrt)
        product = hessians._hvp_function(fn, wrt, args, {}, {})[2]
        # what the product calls: the gradient of the JVP module, tangents by name
        second, tangents = product.gradient, product.tangents
        kw = dict(zip(tangents, v))
        rows.append((f"hvp: {name}", lambda h=h, a=args, v=v: h(*a, v),
                     lambda s=second, a=args, k=kw: s(*a, **k)))
    return rows


def report(budget: float = 1.0) -> str:
    lines = [f"{'entry point: workload':<44}{'through API':>12}{'generated':>11}"
             f"{'overhead':>11}{'ratio':>8}"]
    for label, api, direct in _rows():
        if not _same(api(), direct()):
            lines.append(f"{label:<44}  results differ: not timed")
            continue
        # short loops, many rounds: a difference of a microsecond survives a
        # loaded machine only in its quiet moments
        t = interleaved_times({"api": api, "direct": direct}, budget, rounds=400)
        lines.append(f"{label:<44}{_t(t['api']):>12}{_t(t['direct']):>11}"
                     f"{_t(t['api'] - t['direct']):>11}{t['api'] / t['direct']:>7.2f}x")
    return "\n".join(lines)


def _t(seconds: float) -> str:
    if abs(seconds) < 1e-6:
        return f"{seconds * 1e9:.0f} ns"
    return f"{seconds * 1e6:.1f} µs" if abs(seconds) < 1e-3 else f"{seconds * 1e3:.2f} ms"
