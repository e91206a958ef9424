"""s2s-ad's gradients of the GradBench objectives against ``jax.grad`` of the
JAX ports (benchmarks/jax_ports.py) on the same inputs, in float64.

GradBench publishes no reference gradients: its evals generate their inputs
(seeded NumPy random numbers, or ADBench's data files for ba and ht) and
check each tool's output against its hand-written C++ tool run on the same
input. So the independent reference here is JAX, a different AD system run
on code written separately from the NumPy examples. Needs JAX (``pip install
jax jaxlib``; not a dependency)::

    python benchmarks/jax_agreement.py

prints, per objective and size, the largest difference between the two
gradients relative to the largest element of JAX's.
"""

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path[:0] = [HERE, os.path.join(ROOT, "examples"), os.path.join(ROOT, "tests")]

import s2s_ad  # noqa: E402
from examples_gradbench import (ba_args, gmm_args, ht_args, kmeans_args, llsq_args,  # noqa: E402
                                lse_args, lstm_args, ode_args)
from gradbench import ba, gmm, ht, kmeans, llsq, lse, lstm, ode  # noqa: E402
from jax_ports import ports  # noqa: E402


def ba_total(cams, X, w, obs, feats):
    """Every output of ba_objective summed: its gradient is the
    vector-Jacobian product with a cotangent of ones."""
    reproj_err, w_err = ba.ba_objective(cams, X, w, obs, feats)
    return np.sum(reproj_err) + np.sum(w_err)


def ht_total(theta, parents, base_relatives, inverse_base_absolutes, base_positions, weights,
             points, correspondences):
    """Every output of hand_objective summed: its gradient with respect to
    theta is the vector-Jacobian product with a cotangent of ones."""
    return np.sum(ht.hand_objective(theta, parents, base_relatives, inverse_base_absolutes,
                                    base_positions, weights, points, correspondences))


def cases(rng, small: bool = False):
    """(objective, size, NumPy function, arguments, wrt); ``small``: sizes a
    test runs in a second."""
    if small:
        return [
            ("gmm", "n=6 d=3 k=4", gmm.gmm_objective, gmm_args(rng, 6, 3, 4), (0, 1, 2)),
            ("lse", "n=9", lse.logsumexp, lse_args(rng, 9), (0,)),
            ("ode", "n=5 s=4", ode.ode_last, ode_args(rng, 5, 4), (0,)),
            ("ode", "n=5 s=4 (closure)", ode.ode_last_closure, ode_args(rng, 5, 4), (0,)),
            ("lstm", "l=2 b=3 c=4", lstm.lstm_objective, lstm_args(rng, 2, 3, 4), (0, 1)),
            ("ba", "3 cams 6 pts 10 obs", ba_total, ba_args(rng, 3, 6, 10), (0, 1, 2)),
            ("ht", "12 verts 7 pts", ht_total, ht_args(rng, 12, 7), (0,)),
            ("kmeans", "n=12 k=4 d=3", kmeans.kmeans_cost, kmeans_args(rng, 12, 4, 3), (0, 1)),
            ("llsq", "m=5 n=9", llsq.llsq_objective, llsq_args(rng, 5, 9), (0,)),
        ]
    return [
        ("gmm", "n=1000 d=20 k=50", gmm.gmm_objective, gmm_args(rng, 1000, 20, 50), (0, 1, 2)),
        ("gmm", "n=10 d=3 k=4", gmm.gmm_objective, gmm_args(rng, 10, 3, 4), (0, 1, 2)),
        ("lse", "n=1000", lse.logsumexp, lse_args(rng, 1000), (0,)),
        ("ode", "n=10 s=100", ode.ode_last, ode_args(rng, 10, 100), (0,)),
        ("ode", "n=20 s=10 (closure)", ode.ode_last_closure, ode_args(rng, 20, 10), (0,)),
        ("lstm", "l=2 b=14 c=100", lstm.lstm_objective, lstm_args(rng, 2, 14, 100), (0, 1)),
        ("ba", "10 cams 100 pts 300 obs", ba_total, ba_args(rng, 10, 100, 300), (0, 1, 2)),
        ("ht", "500 verts 100 pts", ht_total, ht_args(rng, 500, 100), (0,)),
        ("kmeans", "n=1000 k=50 d=8", kmeans.kmeans_cost, kmeans_args(rng, 1000, 50, 8), (0, 1)),
        ("llsq", "m=16 n=256", llsq.llsq_objective, llsq_args(rng, 16, 256), (0,)),
    ]


def agreement(seed: int = 0, small: bool = False) -> list[tuple]:
    """[(objective, size, relative difference, largest element of JAX's
    gradient)], or [] without JAX."""
    jfns = ports()
    if not jfns:
        return []
    import jax
    import jax.numpy as jnp
    out = []
    for name, size, f, args, wrt in cases(np.random.default_rng(seed), small):
        ours = s2s_ad.grad(f, wrt=wrt)(*args)
        ours = ours if isinstance(ours, tuple) else (ours,)
        static = [i for i, a in enumerate(args) if isinstance(a, int)]
        jargs = [a if isinstance(a, int) else jnp.asarray(a) for a in args]
        theirs = jax.jit(jax.grad(jfns[name], argnums=wrt), static_argnums=static)(*jargs)
        scale = max(float(np.max(np.abs(np.asarray(b)))) for b in theirs)
        assert scale > 0.0, (name, size)  # a gradient of zeros would compare nothing
        diff = max(float(np.max(np.abs(np.asarray(a) - np.asarray(b)))) for a, b in
                   zip(ours, theirs)) / scale
        out.append((name, size, diff, scale))
    return out


def main() -> None:
    rows = agreement()
    if not rows:
        print("JAX is not installed (pip install jax jaxlib): nothing to compare with")
        return
    print("| objective | size | max abs(s2s-ad − jax.grad) / max abs(jax.grad) "
          "| max abs(jax.grad) |")
    print("| --- | --- | --- | --- |")
    for name, size, diff, scale in rows:
        print(f"| {name} | {size} | {diff:.1e} | {scale:.2g} |")


if __name__ == "__main__":
    main()
