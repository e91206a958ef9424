"""Second derivatives: the Hessian-vector product of the MLP loss against a
hand-written one (Pearlmutter's R-operator on the hand-written gradient) and
the loss itself, and the Hessian of a 10-parameter scalar function against
sympy's lambdified Hessian. ``report()`` prints the table (run.py calls it).

Every contender is checked against another before it is timed: a benchmark
of a wrong second derivative would mean nothing."""

import os
import sys

import numpy as np

from harness import interleaved_times

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "examples"))

from mlp import mlp_loss  # noqa: E402
from workloads_arrays import _mlp_args  # noqa: E402
from workloads_scalar import rosenbrock10  # noqa: E402

WORKLOADS: list = []


def mlp_hvp_hand(W1, b1, W2, b2, X, Y, V1, v1, V2, v2):
    """H·(V1, v1, V2, v2) of mlp_loss: the gradient (as mlp_hand) and its
    directional derivative along V, written by hand."""
    A = X @ W1 + b1
    H = np.tanh(A)
    P = H @ W2 + b2
    S = 1.0 - H * H
    gP = (2.0 / P.size) * (P - Y)
    gH = np.dot(gP, W2.T)
    dA = X @ V1 + v1
    dH = S * dA
    dP = dH @ W2 + H @ V2 + v2
    dgP = (2.0 / P.size) * dP
    dgW2 = np.dot(dH.T, gP) + np.dot(H.T, dgP)
    dgb2 = dgP.sum(axis=0)
    dgH = np.dot(dgP, W2.T) + np.dot(gP, V2.T)
    dgA = dgH * S - gH * (2.0 * H * dH)
    return np.dot(X.T, dgA), dgA.sum(axis=0), dgW2, dgb2


def mlp_loss_dict(params, X, Y):
    """mlp_loss with its parameters in a dict (a structure parameter)."""
    H = np.tanh(X @ params["W1"] + params["b1"])
    P = H @ params["W2"] + params["b2"]
    return np.mean((P - Y) ** 2)


def _jax_hvp():
    """``jax.jit`` of ``jax.jvp(jax.grad(loss))`` for mlp_loss written with
    ``jax.numpy`` (float64), as a function of NumPy arrays returning NumPy
    arrays (the transfer is timed with it); None where JAX is not installed."""
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return None
    jax.config.update("jax_enable_x64", True)

    def loss(params, X, Y):
        W1, b1, W2, b2 = params
        H = jnp.tanh(X @ W1 + b1)
        P = H @ W2 + b2
        return jnp.mean((P - Y) ** 2)

    @jax.jit
    def hvp(params, X, Y, v):
        return jax.jvp(lambda p: jax.grad(loss)(p, X, Y), (params,), (v,))[1]

    def call(W1, b1, W2, b2, X, Y, v):
        out = hvp((W1, b1, W2, b2), X, Y, v)
        return tuple(np.asarray(o) for o in out)
    return call


def _max_rel(a, b) -> float:
    return max(float(np.max(np.abs(np.asarray(x) - np.asarray(y))))
               / max(1.0, float(np.max(np.abs(np.asarray(y))))) for x, y in zip(a, b))


def _hvp_rows(budget: float) -> list[dict]:
    import s2s_ad

    rows = []
    jax_hvp = _jax_hvp()
    for label, shape in (("MLP loss HVP, 64x10-32-1", (64, 10, 32)),
                         ("MLP loss HVP, 256x64-128-1", (256, 64, 128))):
        args = _mlp_args(*shape)
        rng = np.random.default_rng(1)
        v = tuple(rng.normal(size=np.shape(a)) for a in args[:4])
        hvp = s2s_ad.hvp(mlp_loss, wrt=("W1", "b1", "W2", "b2"))
        got = hvp(*args, v)
        hand = mlp_hvp_hand(*args, *v)
        row = {"name": label, "agree": _max_rel(got, hand)}
        calls = {"forward": lambda: mlp_loss(*args), "s2s-ad": lambda: hvp(*args, v),
                 "hand": lambda: mlp_hvp_hand(*args, *v)}
        if jax_hvp is not None:
            jv = tuple(v)
            row["jax agree"] = _max_rel(jax_hvp(*args, jv), hand)  # compiled here, not timed
            calls["jax"] = lambda: jax_hvp(*args, jv)
        row.update(interleaved_times(calls, budget))
        rows.append(row)
    # the same product with the parameters in a dict: hvp's direction and
    # result are dicts; the reference is the positional product above
    args = _mlp_args(64, 10, 32)
    rng = np.random.default_rng(1)
    v = tuple(rng.normal(size=np.shape(a)) for a in args[:4])
    keys = ("W1", "b1", "W2", "b2")
    params, direction = dict(zip(keys, args[:4])), dict(zip(keys, v))
    positional = s2s_ad.hvp(mlp_loss, wrt=keys)
    in_dict = s2s_ad.hvp(mlp_loss_dict, wrt="params")
    got = in_dict(params, *args[4:], direction)
    row = {"name": "MLP HVP, params dict, 64x10-32-1", "reference": "positional s2s_ad.hvp",
           "agree": _max_rel([got[k] for k in keys], positional(*args, v))}
    row.update(interleaved_times({"forward": lambda: mlp_loss_dict(params, *args[4:]),
                                  "s2s-ad": lambda: in_dict(params, *args[4:], direction),
                                  "hand": lambda: positional(*args, v)}, budget))
    rows.append(row)
    return rows


def _hessian_row(budget: float) -> dict:
    import sympy
    import s2s_ad
    from s2s_ad.emit import loader
    from s2s_ad.hessian_module import hessian_module

    x = [0.1 * k - 0.3 for k in range(10)]
    syms = sympy.symbols("x0:10")
    H = sympy.hessian(rosenbrock10(*syms), syms)
    reference = sympy.lambdify(syms, H.tolist(), "math")
    full = s2s_ad.hessian(rosenbrock10, wrt=tuple(f"x{k}" for k in range(10)))
    module = loader.load(hessian_module(rosenbrock10)[0], "hessian_rosenbrock10")
    generated = module.hessian_rosenbrock10
    want = np.array(reference(*x), dtype=float)
    row = {"name": "Hessian, rosenbrock 10 floats",
           "agree": max(_max_rel([np.array(full(*x), dtype=float)], [want]),
                        _max_rel([np.array(generated(*x), dtype=float)], [want]))}
    row.update(interleaved_times({"forward": lambda: rosenbrock10(*x),
                                  "s2s-ad": lambda: full(*x),
                                  "module": lambda: generated(*x),
                                  "sympy": lambda: reference(*x)}, budget))
    return row


def report(budget: float = 1.0) -> str:
    lines = [f"{'workload (second order)':<32}{'forward':>10}{'s2s-ad':>11}{'/fwd':>8}"
             f"{'reference':>11}{'s2s/ref':>9}{'agree':>9}"]
    for r in _hvp_rows(budget):
        lines.append(f"{r['name']:<32}{_t(r['forward']):>10}{_t(r['s2s-ad']):>11}"
                     f"{r['s2s-ad'] / r['forward']:>7.2f}x{_t(r['hand']):>11}"
                     f"{r['s2s-ad'] / r['hand']:>8.2f}x{r['agree']:>9.0e}   (reference: "
                     f"{r.get('reference', 'hand-written HVP')})")
        if "jax" in r:
            lines.append(f"{'  jax.jit(jax.jvp(jax.grad))':<32}{'':>10}{_t(r['jax']):>11}"
                         f"{r['jax'] / r['forward']:>7.2f}x{'':>11}"
                         f"{r['s2s-ad'] / r['jax']:>8.2f}x{r['jax agree']:>9.0e}   (s2s-ad / "
                         f"JAX's jit-compiled HVP: below 1 s2s-ad is faster)")
    r = _hessian_row(budget)
    for key, what in (("s2s-ad", "s2s_ad.hessian"), ("module", "s2s-ad hessian module")):
        lines.append(f"{r['name'] + ' (' + what + ')':<32}"[:32] + f"{_t(r['forward']):>10}"
                     f"{_t(r[key]):>11}{r[key] / r['forward']:>7.2f}x{_t(r['sympy']):>11}"
                     f"{r[key] / r['sympy']:>8.2f}x{r['agree']:>9.0e}   "
                     f"({what}; reference: sympy.lambdify of sympy.hessian)")
    return "\n".join(lines)


def _t(seconds: float) -> str:
    return f"{seconds * 1e6:.1f} µs" if seconds < 1e-3 else f"{seconds * 1e3:.2f} ms"
