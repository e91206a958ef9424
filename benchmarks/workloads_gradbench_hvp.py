"""Hessian-vector products of GradBench objectives: ``s2s_ad.hvp`` against
s2s-ad's own gradient of the same objective (how many gradients one product
costs) and, where JAX is installed, ``jax.jit(jax.jvp(jax.grad))`` of the
objective written with ``jax.numpy`` (benchmarks/jax_ports.py; compiled
before timing), all timed interleaved in one run. ``report()`` prints the
table (run.py calls it).

kmeans is GradBench's Newton step: its eval asks for the gradient with
respect to the centers and the Hessian's diagonal, which for this cost (each
center's block ``2·count·I``) is one product with a direction of ones. gmm's
product is along a random direction in (alphas, means, icf).

Each product is checked before it is timed against JAX's (an independent
implementation) and against central differences of s2s-ad's gradient along
the same direction."""

import os
import sys

import numpy as np

from harness import interleaved_times
from jax_ports import ports

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(ROOT, "examples"), os.path.join(ROOT, "tests")]

from examples_gradbench import gmm_args, kmeans_args  # noqa: E402
from gradbench import gmm, kmeans  # noqa: E402

WORKLOADS: list = []


def _cases():
    rng = np.random.default_rng(0)
    out = []
    for label, args in (("kmeans n=1000 k=50 d=8", kmeans_args(rng, 1000, 50, 8)),
                        ("kmeans n=100 k=10 d=4", kmeans_args(rng, 100, 10, 4))):
        out.append((label, "kmeans", kmeans.kmeans_cost, args, (1,),
                    (np.ones_like(args[1]),)))
    for label, args in (("gmm n=1000 d=20 k=50", gmm_args(rng, 1000, 20, 50)),
                        ("gmm n=100 d=5 k=10", gmm_args(rng, 100, 5, 10))):
        out.append((label, "gmm", gmm.gmm_objective, args, (0, 1, 2),
                    tuple(rng.normal(size=np.shape(args[k])) for k in (0, 1, 2))))
    return out


def _jax_hvp(name: str, args: list, wrt: tuple):
    """``jax.jit`` of ``jax.jvp(jax.grad(objective))`` along a direction,
    as a function of NumPy arrays (None without JAX)."""
    fn = ports().get(name)
    if fn is None:
        return None
    import jax
    import jax.numpy as jnp
    jargs = [a if isinstance(a, int) else jnp.asarray(a) for a in args]

    @jax.jit
    def hvp(primals, tangents):
        def gradient(*p):
            full = list(jargs)
            for k, v in zip(wrt, p):
                full[k] = v
            return jax.grad(fn, argnums=wrt)(*full)
        return jax.jvp(gradient, primals, tangents)[1]

    def call(v):
        out = hvp(tuple(jargs[k] for k in wrt), tuple(jnp.asarray(d) for d in v))
        return jax.block_until_ready(out)
    return call


def _max_rel(a, b) -> float:
    return max(float(np.max(np.abs(np.asarray(x) - np.asarray(y))))
               / max(1.0, float(np.max(np.abs(np.asarray(y))))) for x, y in zip(a, b))


def _along(g, args, wrt, v, h=1e-6) -> list:
    up, down = list(args), list(args)
    for k, d in zip(wrt, v):
        up[k], down[k] = args[k] + h * d, args[k] - h * d
    gu, gd = g(*up), g(*down)
    gu, gd = (gu, gd) if isinstance(gu, tuple) else ((gu,), (gd,))
    return [(a - b) / (2 * h) for a, b in zip(gu, gd)]


def rows(budget: float = 1.0) -> list[dict]:
    import s2s_ad

    out = []
    for label, name, fn, args, wrt, v in _cases():
        w = wrt[0] if len(wrt) == 1 else wrt
        hvp = s2s_ad.hvp(fn, wrt=w)
        grad = s2s_ad.grad(fn, wrt=w)
        direction = v[0] if len(v) == 1 else v
        got = hvp(*args, direction)
        got = got if isinstance(got, tuple) else (got,)
        row = {"name": label, "fd": _max_rel(got, _along(grad, args, wrt, v))}
        calls = {"forward": lambda: fn(*args), "hvp": lambda: hvp(*args, direction),
                 "grad": lambda: grad(*args)}
        jax_hvp = _jax_hvp(name, args, wrt)
        if jax_hvp is not None:
            row["jax agree"] = _max_rel(got, jax_hvp(v))  # compiled here, not timed
            calls["jax"] = lambda: jax_hvp(v)
        row.update(interleaved_times(calls, budget))
        out.append(row)
    return out


def report(budget: float = 1.0) -> str:
    lines = [f"{'workload (HVP)':<24}{'forward':>10}{'grad':>11}{'hvp':>11}{'hvp/grad':>9}"
             f"{'jax jvp(grad)':>15}{'hvp/jax':>9}{'vs jax':>8}{'vs fd':>8}"]
    for r in rows(budget):
        jax = (f"{_t(r['jax']):>15}{r['hvp'] / r['jax']:>8.2f}x{r['jax agree']:>8.0e}"
               if "jax" in r else f"{'-':>15}{'-':>9}{'-':>8}")
        lines.append(f"{r['name']:<24}{_t(r['forward']):>10}{_t(r['grad']):>11}"
                     f"{_t(r['hvp']):>11}{r['hvp'] / r['grad']:>8.2f}x{jax}{r['fd']:>8.0e}")
    lines.append("(hvp: s2s_ad.hvp; grad: s2s_ad.grad of the same objective; jax: "
                 "jax.jit(jax.jvp(jax.grad)), below 1 s2s-ad is faster; vs jax / vs fd: "
                 "largest relative difference from JAX's product and from central "
                 "differences of the gradient)")
    return "\n".join(lines)


def _t(seconds: float) -> str:
    return f"{seconds * 1e6:.1f} µs" if seconds < 1e-3 else f"{seconds * 1e3:.2f} ms"
