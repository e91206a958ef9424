"""Verification of array functions: a numeric check, never a proof.

Contract: :func:`check` runs the generated gradient of a function that uses
NumPy at random inputs of the shapes the caller gives and compares it,
element by element, with central differences of the *original* function
(float64). The verdict is ``agrees`` (every element within 1e-6 of the
finite difference, relative to the gradient's scale) or ``mismatch``; it
says that it rests on finite differences. sympy does not run NumPy code, so
nothing here is called proved. A parameter that is an array and has no shape
is refused with a message naming it.

    s2s-ad check examples/mlp.py:mlp_loss --shape W1=4x5,b1=5,W2=5x2,b2=2,X=3x4,Y=3x2
"""

from __future__ import annotations

import numpy as np

from s2s_ad import api
from s2s_ad.frontend import lowering as frontend, source
from s2s_ad.verdict import ParamResult, Verdict
from s2s_ad.errors import S2SError

TOLERANCE = 1e-6
FULL_LIMIT = 64
"""Arrays with at most this many elements are checked element by element;
larger ones at this many random elements plus one random direction."""


def parse_shape(text: str) -> tuple[int, ...]:
    """``"3x4"`` → (3, 4); ``"5"`` → (5,); ``""``, ``"()"`` or ``"scalar"`` → ()."""
    text = text.strip()
    if text in ("", "()", "scalar"):
        return ()
    try:
        return tuple(int(n) for n in text.lower().split("x"))
    except ValueError:
        raise S2SError(f"a shape is written like 3x4 or 5, not {text!r}") from None


def check(fn, wrt=None, *, shapes: dict, args: dict | None = None, points: int = 3,
          seed: int = 0, reason: str | None = None, positive: bool = False):
    """Compare the generated gradient with central differences at random inputs.

    ``reason`` replaces the default note (that NumPy code cannot be proved)
    when another cause sends a function here; ``positive`` draws every input
    from [0.2, 2] (the region of the symbolic check's sample point) instead of
    alternating with standard normal draws."""
    args = dict(args or {})
    # A parameter given a shape receives an array (one that is not a number):
    # lowered as one even where fn's source never names NumPy.
    func = api.lower(fn, arrays=[n for n, shape in shapes.items() if shape != ()])
    values, _ = api.resolve_wrt(func, wrt)
    params = {p.value.var: p for p in func.params}
    for name in shapes:
        if name not in params:
            raise S2SError(f"shapes {name!r} (--shape {name}): {func.name} has no parameter "
                           f"{name!r} (parameters: {', '.join(params)})")
    missing = [n for n, p in params.items() if n not in shapes and n not in args
               and p.value.kind == "array" and not p.has_default]
    if missing:
        raise S2SError(f"{func.name} uses NumPy, which sympy cannot prove; the numeric check "
                       "needs the shape of each array parameter: give shapes={"
                       + ", ".join(f"{n!r}: (...)" for n in missing) + "} (on the command "
                       "line --shape " + ",".join(f"{n}=..." for n in missing)
                       + "; e.g. 3x4, 5, or scalar)")
    grad = api.grad(fn, wrt=[v.var for v in values])
    rng = np.random.default_rng(seed)
    worst = {v.var: 0.0 for v in values}
    bad: dict[str, str] = {}
    checked = 0
    for attempt in range(20 * points):
        if checked == points:
            break
        call = _inputs(params, shapes, args, rng, positive=positive or attempt % 2 == 1)
        with np.errstate(all="ignore"):
            f0 = fn(**call)
        if not np.all(np.isfinite(f0)):
            continue
        got = grad(**call)
        checked += 1
        for v, g in zip(values, got):
            if v.var in bad:
                continue
            x = call[v.var]
            if np.shape(g) != np.shape(x):
                bad[v.var] = f"the gradient has shape {np.shape(g)}, the argument {np.shape(x)}"
                continue
            err, where = _compare(fn, call, v.var, np.asarray(g, dtype=float), rng)
            worst[v.var] = max(worst[v.var], err)
            if err > TOLERANCE:
                bad[v.var] = where
    if checked == 0:
        raise S2SError(f"no random input of the given shapes gave {func.name} a finite value")
    results = []
    for v in values:
        if v.var in bad:
            results.append(ParamResult(v.var, "mismatch", "central differences", "generated",
                                       bad[v.var]))
        else:
            results.append(ParamResult(v.var, "agrees", None, None,
                                       f"with central differences at {checked} random "
                                       f"point(s) (largest relative difference "
                                       f"{worst[v.var]:.1e})"))
    shape_text = ", ".join(f"{n}: {'x'.join(map(str, s)) or 'scalar'}" for n, s in shapes.items())
    what = "uses NumPy" if frontend.names_numpy(source.locate(fn)) else "is given arrays"
    notes = [reason or f"{func.name} {what}: sympy cannot run it, so this is a numeric "
             f"check (central differences of the original function in float64), not a proof; "
             f"shapes {shape_text}"]
    if args:
        notes.append("checked with " + ", ".join(f"{k}={v}" for k, v in args.items()))
    return Verdict(func.name, results, notes)


def _inputs(params: dict, shapes: dict, args: dict, rng, positive: bool) -> dict:
    call = {}
    for name, p in params.items():
        if name in args:
            call[name] = args[name]
        elif name in shapes:
            shape = shapes[name]
            x = rng.uniform(0.2, 2.0, shape) if positive else rng.normal(0.0, 1.0, shape)
            call[name] = float(x) if shape == () else x
        elif p.has_default:
            call[name] = p.default
        else:
            call[name] = float(rng.uniform(0.2, 2.0) if positive else rng.normal())
    return call


def _compare(fn, call: dict, name: str, g: np.ndarray, rng) -> tuple[float, str]:
    """Largest relative difference between ``g`` and central differences of
    ``fn`` in ``name``, and where it is."""
    x = np.asarray(call[name], dtype=float)
    scale = max(1.0, float(np.max(np.abs(g))) if g.size else 1.0)
    h = 1e-6 * max(1.0, float(np.max(np.abs(x))) if x.size else 1.0)

    def f_at(xv):
        c = dict(call)
        c[name] = float(xv) if x.shape == () else xv
        with np.errstate(all="ignore"):
            return float(np.sum(fn(**c)))

    def along(d):
        return (f_at(x + h * d) - f_at(x - h * d)) / (2 * h)

    worst, where = 0.0, ""
    idx = list(np.ndindex(*x.shape))
    if len(idx) > FULL_LIMIT:
        idx = [idx[i] for i in rng.choice(len(idx), FULL_LIMIT, replace=False)]
    for k in idx:
        d = np.zeros_like(x)
        d[k] = 1.0
        fd = along(d)
        err = abs(fd - g[k]) / scale
        if err > worst:
            worst, where = err, (f"at element {k}: central difference {fd:.10g}, generated "
                                 f"{g[k]:.10g}")
    d = rng.normal(size=x.shape)
    fd = along(d)
    got = float(np.sum(g * d))
    err = abs(fd - got) / (scale * max(1.0, float(np.sum(np.abs(d)))))
    if err > worst:
        worst, where = err, f"along a random direction: central difference {fd:.10g}, " \
                            f"generated {got:.10g}"
    return worst, where
