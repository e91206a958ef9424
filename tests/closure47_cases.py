"""Second derivatives of every example and GradBench objective, by eight
routes, each against central differences (float64) of a first derivative.

For ``f`` differentiated with respect to ``wrt`` at ``args``, a random
direction ``v`` (shaped like the gradient) and ``g = grad(f, wrt)``:

* ``hvp``: ``s2s_ad.hvp(f, wrt)(*args, v)`` against central differences of
  ``g`` along ``v``;
* ``jvp_grad``: the tangent of ``s2s_ad.jvp(g, wrt)`` along ``v``, the same;
* ``grad_jvp``: ``s2s_ad.grad`` of the tangent of ``s2s_ad.jvp(f, wrt)``
  along ``v`` (``output=1``), the same;
* ``jacfwd``, ``jacrev``: the Jacobian of ``g`` (the Hessian) by
  ``s2s_ad.jacfwd``/``jacrev``, times ``v``, the same;
* ``grad_probe``: ``s2s_ad.grad`` of ``probe(*args) = Σ |g(*args)|²`` (a
  function of yours calling ``g``), its product with ``v`` against central
  differences of ``probe`` along ``v``;
* ``file_jvp``: the module ``s2s-ad grad FILE:f --wrt ... -o g.py`` writes
  (the command's ``main``), imported from its file (its gradient equal to
  ``g``'s), its JVP along ``v`` against central differences of it;
* ``file_probe``: ``s2s_ad.grad`` of a probe module importing ``g.py``'s
  gradient, ``Σ |grad_f(*args)|²``, against central differences of it
  along ``v``.

``g`` itself is checked against central differences of ``f`` along ``v``.
Nothing here compares s2s-ad with itself alone: every derivative meets
differences of the function one order below it.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import os
import sys
import types

import numpy as np

import s2s_ad
from tests.examples_gradbench import (ba_args, gmm_args, ht_args, kmeans_args, llsq_args,
                                      lse_args, lstm_args, ode_args)
from tests.modules import import_source

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if os.path.join(ROOT, "examples") not in sys.path:
    sys.path.insert(0, os.path.join(ROOT, "examples"))

ROUTES = ("hvp", "jvp_grad", "grad_jvp", "jacfwd", "jacrev", "grad_probe", "file_jvp",
          "file_probe")

# ba and ht return arrays: a loss of numbers made of them (their gradients are
# what GradBench asks for, as Jacobian-vector products of these)
LOSSES = '''
import numpy as np
from gradbench.ba import ba_objective
from gradbench.ht import hand_objective


def ba_loss(cams, X, w, obs, feats, c1, c2):
    r, we = ba_objective(cams, X, w, obs, feats)
    return np.sum(r * c1) + np.sum(we * c2)


def ht_loss(theta, parents, base_relatives, inverse_base_absolutes, base_positions, weights,
            points, correspondences, c):
    return np.sum(hand_objective(theta, parents, base_relatives, inverse_base_absolutes,
                                 base_positions, weights, points, correspondences) * c)
'''


def _ba(rng):
    return ba_args(rng, 3, 5, 8) + [rng.normal(size=(8, 2)), rng.normal(size=8)]


def _ht(rng):
    args = ht_args(rng, 12, 6)
    from gradbench.ht import hand_objective
    return args + [rng.normal(size=np.shape(hand_objective(*args)))]


def _points(rng):
    blobs = np.array([[0.0, 0.0], [3.0, 0.5], [1.0, 3.0]])
    P = np.concatenate([b + 0.4 * rng.normal(size=(5, 2)) for b in blobs])
    return [blobs + rng.normal(scale=0.3, size=blobs.shape), P]


# name -> (module, function, arguments (from a Generator), wrt (parameter names))
CASES = {
    "seed_ggml": ("examples.seed_ggml", "f", lambda r: [0.7, 1.3], ("a", "x")),
    "gaussian_nll": ("examples.gaussian_nll", "nll", lambda r: [1.0, 0.2, 0.1],
                     ("x", "mu", "log_sigma")),
    "black_scholes": ("examples.black_scholes", "call_price",
                      lambda r: [1.0, 0.95, 0.5, 0.03, 0.2], ("s", "k", "t", "r", "sigma")),
    "logistic_map": ("examples.logistic_map", "logistic", lambda r: [0.3, 3.2, 5], ("x", "r")),
    "newton": ("examples.newton", "cube_root", lambda r: [2.0], ("c",)),
    "pendulum": ("examples.pendulum", "energy_after_step",
                 lambda r: [0.4, -0.2, 1.3, 0.1, 0.05],
                 ("theta", "omega", "length", "damping", "dt")),
    "piecewise": ("examples.piecewise", "piecewise", lambda r: [1.5, 2.0], ("x", "a")),
    "rosenbrock": ("examples.rosenbrock", "rosenbrock4", lambda r: [0.1, 0.2, 0.3, 0.4],
                   ("x0", "x1", "x2", "x3")),
    "saddle": ("examples.saddle", "f", lambda r: [0.3, -0.2, 0.5, 0.1], ("x1", "x2", "y1", "y2")),
    "horner": ("examples.horner", "horner", lambda r: [list(r.normal(size=4)), 0.7], ("x",)),
    "kmeans": ("examples.kmeans", "kmeans_cost", _points, ("C",)),
    "mlp": ("examples.mlp", "mlp_loss",
            lambda r: [r.normal(size=(3, 4)), r.normal(size=4), r.normal(size=(4, 2)),
                       r.normal(size=2), r.normal(size=(5, 3)), r.normal(size=(5, 2))],
            ("W1", "b1", "W2", "b2")),
    "softmax_xent": ("examples.softmax_xent", "softmax_xent",
                     lambda r: [r.normal(size=(3, 4)), r.normal(size=(5, 3)),
                                np.eye(4)[r.integers(0, 4, 5)]], ("W",)),
    "spring_chain": ("examples.spring_chain", "energy", lambda r: [r.normal(scale=0.3, size=8)],
                     ("y",)),
    "tied_net": ("examples.tied_weights", "net",
                 lambda r: [r.normal(size=(4, 3)), r.normal(size=(2, 4)), r.normal(size=3),
                            r.normal(size=2)], ("W", "V")),
    "tied": ("examples.tied_weights", "tied",
             lambda r: [r.normal(size=(4, 3)), r.normal(size=3), r.normal(size=3)], ("W",)),
    "gb_gmm": ("gradbench.gmm", "gmm_objective", lambda r: gmm_args(r, 5, 3, 2),
               ("alphas", "means", "icf")),
    "gb_kmeans": ("gradbench.kmeans", "kmeans_cost", lambda r: kmeans_args(r, 12, 4, 3),
                  ("centers",)),
    "gb_llsq": ("gradbench.llsq", "llsq_objective", lambda r: llsq_args(r, 5, 9), ("x",)),
    "gb_lse": ("gradbench.lse", "logsumexp", lambda r: lse_args(r, 9), ("x",)),
    "gb_ode": ("gradbench.ode", "ode_last", lambda r: ode_args(r, 4, 3), ("x",)),
    "gb_lstm": ("gradbench.lstm", "lstm_objective", lambda r: lstm_args(r, 2, 3, 4),
                ("main_params", "extra_params")),
    "gb_ba": (None, "ba_loss", _ba, ("cams", "X", "w")),
    "gb_ht": (None, "ht_loss", _ht, ("theta",)),
}


def function(name: str, folder):
    """The function of case ``name`` (ba's and ht's losses written to
    ``folder``, as s2s-ad reads source)."""
    module, fn = CASES[name][:2]
    if module is None:
        return getattr(_losses(folder), fn)
    __import__(module)
    return getattr(sys.modules[module], fn)


def _losses(folder):
    return import_source(str(folder), LOSSES, "closure47_losses")


def _wrt_arg(wrt: tuple):
    return wrt[0] if len(wrt) == 1 else wrt


def _items(g) -> list:
    return list(g) if isinstance(g, tuple) else [g]


def _shifted(fn, args: list, index: list, v: list, s: float):
    moved = list(args)
    for k, d in zip(index, v):
        moved[k] = (np.asarray(args[k], dtype=float) + s * d if np.ndim(d)
                    else float(args[k]) + s * d)
    return fn(*moved)


def _along(fn, args, index, v, h: float) -> list:
    """Central differences of each output of ``fn`` along ``v``."""
    up, down = _shifted(fn, args, index, v, h), _shifted(fn, args, index, v, -h)
    return [(np.asarray(a, dtype=float) - np.asarray(b, dtype=float)) / (2 * h)
            for a, b in zip(_items(up), _items(down))]


def _dot(a: list, b: list) -> float:
    return sum(float(np.sum(np.asarray(x, dtype=float) * np.asarray(y, dtype=float)))
               for x, y in zip(a, b))


def _close(got: list, want: list, what: str, rtol: float = 1e-5) -> None:
    assert len(got) == len(want), (what, len(got), len(want))
    scale = max([1.0] + [float(np.max(np.abs(w))) for w in want])
    for a, b in zip(got, want):
        assert np.shape(a) == np.shape(b), (what, np.shape(a), np.shape(b))
        np.testing.assert_allclose(np.asarray(a, dtype=float), b, rtol=rtol, atol=rtol * scale,
                                   err_msg=what)


def _probe_text(header: str, called: str, names: list, wrt: tuple, arrays: set) -> str:
    outs = [f"g_{w}" for w in wrt]
    terms = [f"np.sum({o} * {o})" if w in arrays else f"{o} * {o}" for o, w in zip(outs, wrt)]
    lhs = ", ".join(outs) + ("," if len(outs) == 1 and len(wrt) > 1 else "")
    return (f"import numpy as np\n{header}\n\n\n"
            f"def probe({', '.join(names)}):\n"
            f"    {lhs} = {called}({', '.join(names)})\n"
            f"    return {' + '.join(terms)}\n")


def check(name: str, routes, folder) -> None:
    """Every route of ``routes`` on case ``name`` (module docstring)."""
    fn = function(name, folder)
    rng = np.random.default_rng(sum(map(ord, name)))
    args = CASES[name][2](rng)
    wrt = CASES[name][3]
    names = list(inspect.signature(fn).parameters)
    index = [names.index(w) for w in wrt]
    arrays = {w for w, k in zip(wrt, index) if np.ndim(args[k])}
    v = [rng.uniform(-1.0, 1.0, np.shape(args[k])) if np.ndim(args[k])
         else float(rng.uniform(-1.0, 1.0)) for k in index]
    scale = max([1.0] + [float(np.max(np.abs(np.asarray(args[k], dtype=float)))) for k in index])
    h = 1e-5 * scale
    g = s2s_ad.grad(fn, wrt=_wrt_arg(wrt))
    first = _items(g(*args))
    with np.errstate(all="ignore"):
        df = _along(fn, args, index, v, 0.1 * h)[0]
    assert np.isclose(_dot(first, v), float(df), rtol=1e-5, atol=1e-7), (name, "first")
    hv = _along(g, args, index, v, h)  # H·v, the reference of every route
    if "hvp" in routes:
        got = s2s_ad.hvp(fn, wrt=_wrt_arg(wrt))(*args, v[0] if len(v) == 1 else tuple(v))
        _close(_items(got), hv, f"{name}: hvp")
    if "jvp_grad" in routes:
        forward = s2s_ad.jvp(g, wrt=_wrt_arg(wrt))
        value, tangent = forward(*args, **dict(zip(_tangents(forward, wrt), v)))
        _close(_items(value), first, f"{name}: jvp(grad) value", rtol=1e-12)
        _close(_items(tangent), hv, f"{name}: jvp(grad)")
    if "grad_jvp" in routes:
        forward = s2s_ad.jvp(fn, wrt=list(wrt))
        got = s2s_ad.grad(forward, wrt=_wrt_arg(wrt), output=1)(
            *args, **dict(zip(_tangents(forward, wrt), v)))
        _close(_items(got), hv, f"{name}: grad(jvp, output=1)")
    for route in ("jacfwd", "jacrev"):
        if route in routes:
            # by parameter, then (several of them) by item of the gradient
            J = getattr(s2s_ad, route)(g, wrt=_wrt_arg(wrt))(*args)
            J = [[J]] if len(wrt) == 1 else [list(blocks) for blocks in J]
            got = [sum(np.tensordot(np.asarray(J[j][i], dtype=float), d, axes=np.ndim(d))
                       for j, d in enumerate(v)) for i in range(len(wrt))]
            _close(got, hv, f"{name}: {route}(grad)")
    label = f"c47_{name}"
    if "grad_probe" in routes:
        holder = types.ModuleType(f"{label}_of")  # (ba's and ht's losses: in no module)
        holder.fn = fn
        sys.modules[f"{label}_of"] = holder
        try:
            text = _probe_text(f"import s2s_ad\nfrom {label}_of import fn\n"
                               f"gf = s2s_ad.grad(fn, wrt={_wrt_arg(wrt)!r})",
                               "gf", names, wrt, arrays)
            probe = import_source(str(folder), text, f"{label}_probe").probe
            _check_probe(probe, args, index, wrt, v, h, f"{name}: grad of a probe of grad")
        finally:
            sys.modules.pop(f"{label}_of", None)
    if "file_jvp" in routes or "file_probe" in routes:
        from s2s_ad import cli
        out = os.path.join(str(folder), f"{label}_grad.py")
        argv = ["grad", f"{inspect.getsourcefile(fn)}:{fn.__name__}", "--wrt",
                ",".join(wrt), "-o", out]
        if any(isinstance(a, list) for a in args):
            argv += ["--length", ",".join(f"{n}={len(a)}" for n, a in zip(names, args)
                                          if isinstance(a, list))]
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            assert cli.main(argv) == 0, argv
        with open(out, encoding="utf-8") as f:
            text = f.read()
        gfile = getattr(import_source(str(folder), text, f"{label}_grad_again"),
                        f"grad_{fn.__name__}")
        _close(_items(gfile(*args)), first, f"{name}: the file's gradient", rtol=1e-10)
        hvf = _along(gfile, args, index, v, h)
        if "file_jvp" in routes:
            forward = s2s_ad.jvp(gfile, wrt=_wrt_arg(wrt))
            _, tangent = forward(*args, **dict(zip(_tangents(forward, wrt), v)))
            _close(_items(tangent), hvf, f"{name}: jvp of the gradient file")
        if "file_probe" in routes:
            sys.path.insert(0, str(folder))
            try:
                text = _probe_text(f"from {label}_grad import grad_{fn.__name__}",
                                   f"grad_{fn.__name__}", names, wrt, arrays)
                probe = import_source(str(folder), text, f"{label}_file_probe").probe
                _check_probe(probe, args, index, wrt, v, h,
                             f"{name}: grad of a probe of the gradient file")
            finally:
                sys.path.remove(str(folder))
                sys.modules.pop(f"{label}_grad", None)


def _tangents(forward, wrt: tuple) -> list:
    """The tangent keywords of a JVP: its last parameters where it shows
    them, else ``d`` + each name (a derivative the API made, ``**kwargs``)."""
    params = list(inspect.signature(forward).parameters.values())
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return [f"d{w}" for w in wrt]
    return [p.name for p in params[-len(wrt):]]


def _check_probe(probe, args, index, wrt, v, h, what: str) -> None:
    """``grad(probe)·v`` against central differences of ``probe`` along
    ``v`` (at two steps: they must agree with each other first)."""
    got = _items(s2s_ad.grad(probe, wrt=_wrt_arg(wrt))(*args))
    want = float(_along(probe, args, index, v, h)[0])
    again = float(_along(probe, args, index, v, 0.5 * h)[0])
    assert np.isclose(want, again, rtol=1e-6, atol=1e-8), (what, want, again)
    assert np.isclose(_dot(got, v), want, rtol=1e-5, atol=1e-6 * max(1.0, abs(want))), \
        (what, _dot(got, v), want)
