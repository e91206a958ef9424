"""The GradBench objectives of examples/gradbench: s2s-ad's gradient (one
vector-Jacobian product with a cotangent of ones for ba and ht, whose evals
ask for Jacobians) against the function itself and, where JAX is installed,
``jax.jit(jax.grad(...))`` of the same objective written with ``jax.numpy``
(compiled once, before timing). lstm also against a hand-written gradient
(benchmarks/hand_lstm.py). det (expansion by minors, three styles) against
``jax.jit(jax.grad(...))`` of the same function, its module's ``np`` read as
``jax.numpy``, where JAX traces it (ℓ is static)."""

import os
import sys
import types

import numpy as np

from hand_lstm import lstm_objective_grad
from harness import Workload
from jax_ports import ports

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(ROOT, "examples"), os.path.join(ROOT, "tests")]

from examples_gradbench import (ba_args, det_args, gmm_args, ht_args, kmeans_args,  # noqa: E402
                                llsq_args, lse_args, lstm_args, ode_args)
from gradbench import det, gmm, kmeans, llsq, lse, lstm, ode  # noqa: E402
from jax_agreement import ba_total, ht_total  # noqa: E402


def _jax_contender(name, args, wrt):
    """jax.jit(jax.grad) of the objective written with jax.numpy
    (benchmarks/jax_ports.py), and jax.jit of the objective itself (JAX's
    own forward, so that its gradient/forward ratio is measured in the same
    run as s2s-ad's), or {} when JAX is not installed."""
    fn = ports().get(name)
    if fn is None:
        return {}
    import jax
    import jax.numpy as jnp
    static = [i for i, a in enumerate(args) if isinstance(a, int)]
    g = jax.jit(jax.grad(fn, argnums=wrt), static_argnums=static)
    f = jax.jit(fn, static_argnums=static)
    jargs = [a if isinstance(a, int) else jnp.asarray(a) for a in args]
    jax.block_until_ready(g(*jargs))  # compiled before timing
    jax.block_until_ready(f(*jargs))
    return {"jax (jit)": lambda: jax.block_until_ready(g(*jargs)),
            "jax (jit) forward": lambda: jax.block_until_ready(f(*jargs))}


def _jax_same(fn, args, wrt):
    """jax.jit(jax.grad) of ``fn`` itself, every function of its module read
    with ``np`` bound to ``jax.numpy``, and jax.jit of ``fn`` so read; {} where
    JAX is not installed or cannot trace it."""
    if not ports():  # (JAX installed, float64 enabled)
        return {}
    import jax
    import jax.numpy as jnp
    module = sys.modules[fn.__module__]
    space = dict(vars(module), np=jnp)
    for name, f in vars(module).items():
        if isinstance(f, types.FunctionType) and f.__module__ == module.__name__:
            space[name] = types.FunctionType(f.__code__, space, name, f.__defaults__)
    static = [i for i, a in enumerate(args) if isinstance(a, int)]
    g = jax.jit(jax.grad(space[fn.__name__], argnums=wrt), static_argnums=static)
    f = jax.jit(space[fn.__name__], static_argnums=static)
    jargs = [a if isinstance(a, int) else jnp.asarray(a) for a in args]
    try:
        jax.block_until_ready(g(*jargs))  # compiled before timing
        jax.block_until_ready(f(*jargs))
    except Exception:  # (indexing JAX refuses, a NumPy function it lacks)
        return {}
    return {"jax (jit)": lambda: jax.block_until_ready(g(*jargs)),
            "jax (jit) forward": lambda: jax.block_until_ready(f(*jargs))}


RNG = np.random.default_rng(0)
GMM = gmm_args(RNG, 1000, 20, 50)
GMM_SMALL = gmm_args(RNG, 100, 5, 10)
LSE = lse_args(RNG, 1000)
ODE = ode_args(RNG, 10, 100)
LSTM = lstm_args(RNG, 2, 14, 100)
BA = ba_args(RNG, 10, 100, 300)
HT = ht_args(RNG, 500, 100)
KMEANS = kmeans_args(RNG, 1000, 50, 8)
LLSQ = llsq_args(RNG, 16, 256)
DET6 = det_args(RNG, 6)
DET7 = det_args(RNG, 7)

WORKLOADS = [
    Workload("gmm n=1000 d=20 k=50", gmm.gmm_objective, None, GMM, wrt=(0, 1, 2),
             others=_jax_contender("gmm", GMM, (0, 1, 2))),
    Workload("gmm n=100 d=5 k=10", gmm.gmm_objective, None, GMM_SMALL, wrt=(0, 1, 2),
             others=_jax_contender("gmm", GMM_SMALL, (0, 1, 2))),
    Workload("lse n=1000", lse.logsumexp, None, LSE, wrt=0, others=_jax_contender("lse", LSE, 0)),
    Workload("ode n=10 s=100", ode.ode_last, None, ODE, wrt=0,
             others=_jax_contender("ode", ODE, 0)),
    Workload("lstm l=2 b=14 c=100", lstm.lstm_objective, lstm_objective_grad, LSTM, wrt=(0, 1),
             others=_jax_contender("lstm", LSTM, (0, 1))),
    Workload("ba 10 cams 100 pts 300 obs (vjp)", ba_total, None, BA, wrt=(0, 1, 2),
             others=_jax_contender("ba", BA, (0, 1, 2))),
    Workload("ht 500 verts 100 pts (vjp)", ht_total, None, HT, wrt=0,
             others=_jax_contender("ht", HT, 0)),
    Workload("kmeans n=1000 k=50 d=8", kmeans.kmeans_cost, None, KMEANS, wrt=(0, 1),
             others=_jax_contender("kmeans", KMEANS, (0, 1))),
    Workload("llsq m=16 n=256", llsq.llsq_objective, None, LLSQ, wrt=0,
             others=_jax_contender("llsq", LLSQ, 0)),
    Workload("det ell=6 np.delete minors", det.det_minors, None, DET6, wrt=0,
             others=_jax_same(det.det_minors, DET6, 0)),
    Workload("det ell=6 m[1:][:, keep]", det.det_kept, None, DET6, wrt=0,
             others=_jax_same(det.det_kept, DET6, 0)),
    Workload("det ell=6 flat list indices", det.det_flat, None, DET6, wrt=0,
             others=_jax_same(det.det_flat, DET6, 0)),
    # (no JAX contender at ell=7: XLA compiles the 5,040 unrolled products for minutes)
    Workload("det ell=7 flat list indices", det.det_flat, None, DET7, wrt=0),
]
