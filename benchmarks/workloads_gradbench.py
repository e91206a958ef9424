"""The GradBench objectives of examples/gradbench: s2s-ad's gradient (one
vector-Jacobian product with a cotangent of ones for ba and ht, whose evals
ask for Jacobians) against the function itself and, where JAX is installed,
``jax.jit(jax.grad(...))`` of the same objective written with ``jax.numpy``
(compiled once, before timing). No hand-written gradients."""

import os
import sys

import numpy as np

from harness import Workload

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(ROOT, "examples"), os.path.join(ROOT, "tests")]

from examples_gradbench import (ba_args, gmm_args, ht_args, lse_args, lstm_args,  # noqa: E402
                                ode_args)
from gradbench import ba, gmm, ht, lse, lstm, ode  # noqa: E402


def ba_total(cams, X, w, obs, feats):
    """Every output of ba_objective summed: its gradient is the
    vector-Jacobian product with a cotangent of ones."""
    reproj_err, w_err = ba.ba_objective(cams, X, w, obs, feats)
    return np.sum(reproj_err) + np.sum(w_err)


def ht_total(theta, parents, base_relatives, inverse_base_absolutes, base_positions, weights,
             points, correspondences):
    return np.sum(ht.hand_objective(theta, parents, base_relatives, inverse_base_absolutes,
                                    base_positions, weights, points, correspondences))


def _jax_contender(name, args, wrt):
    """jax.jit(jax.grad) of the objective written with jax.numpy, or {} when
    JAX is not installed."""
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return {}
    jax.config.update("jax_enable_x64", True)
    from jax.scipy.special import logsumexp

    def j_gmm(alphas, means, icf, x, gamma, m):
        n, d = x.shape
        k = alphas.shape[0]
        q = icf[:, :d]
        cols, rows = np.triu_indices(d, 1)
        Ls = jnp.zeros((k, d, d)).at[:, rows, cols].set(icf[:, d:])
        xc = x[:, None, :] - means[None, :, :]
        Lx = jnp.exp(q) * xc + jnp.einsum("kij,nkj->nki", Ls, xc)
        inner = alphas + jnp.sum(q, axis=1) - 0.5 * jnp.sum(Lx ** 2, axis=2)
        nn = d + m + 1
        prior = jnp.sum(0.5 * gamma * gamma * (jnp.sum(jnp.exp(q) ** 2, axis=1)
                                               + jnp.sum(icf[:, d:] ** 2, axis=1))
                        - m * jnp.sum(q, axis=1))
        return jnp.sum(logsumexp(inner, axis=1)) - n * logsumexp(alphas) + prior

    def j_lse(x):
        m = jnp.max(x)
        return jnp.log(jnp.sum(jnp.exp(x - m))) + m

    def j_ode(x, s):
        def rhs(y):
            return (x * jnp.roll(y, 1)).at[0].set(x[0])
        h = 2.0 / s

        def step(_, y):
            k1 = rhs(y)
            k2 = rhs(y + h / 2 * k1)
            k3 = rhs(y + h / 2 * k2)
            k4 = rhs(y + h * k3)
            return y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        return jax.lax.fori_loop(0, s, step, jnp.zeros_like(x))[-1]

    def j_lstm(main_params, extra_params, state, sequence):
        b = state.shape[1]

        def sig(v):
            return 1.0 / (1.0 + jnp.exp(-v))

        def step(carry, pair):
            state, total = carry
            inp, gold = pair
            x = inp * extra_params[0]
            new = []
            for i in range(0, state.shape[0], 2):
                gates = jnp.concatenate((x, state[i], x, state[i])) * main_params[i] \
                    + main_params[i + 1]
                cell = state[i + 1] * sig(gates[:b]) + sig(gates[b:2 * b]) \
                    * jnp.tanh(gates[3 * b:])
                hidden = sig(gates[2 * b:3 * b]) * jnp.tanh(cell)
                new += [hidden, cell]
                x = hidden
            ypred = x * extra_params[1] + extra_params[2]
            ynorm = ypred - jnp.log(jnp.sum(jnp.exp(ypred)) + 2)
            return (jnp.stack(new), total + jnp.sum(gold * ynorm)), None

        (_, total), _ = jax.lax.scan(step, (state, 0.0), (sequence[:-1], sequence[1:]))
        return -total / ((sequence.shape[0] - 1) * b)

    def j_ba(cams, X, w, obs, feats):
        c, p = cams[obs[:, 0]], X[obs[:, 1]]
        rot, Xc = c[:, 0:3], p - c[:, 3:6]
        theta = jnp.sqrt(jnp.sum(rot ** 2, axis=1, keepdims=True))
        wv = rot / theta
        cos, sin = jnp.cos(theta), jnp.sin(theta)
        Xr = Xc * cos + jnp.cross(wv, Xc) * sin + wv * jnp.sum(wv * Xc, axis=1, keepdims=True) \
            * (1 - cos)
        proj = Xr[:, 0:2] / Xr[:, 2:3]
        rsq = jnp.sum(proj ** 2, axis=1, keepdims=True)
        dist = proj * (1.0 + c[:, 9:10] * rsq + c[:, 10:11] * rsq * rsq)
        err = w[:, None] * (dist * c[:, 6:7] + c[:, 7:9] - feats)
        return jnp.sum(err) + jnp.sum(1.0 - w ** 2)

    fn = {"gmm": j_gmm, "lse": j_lse, "ode": j_ode, "lstm": j_lstm, "ba": j_ba}.get(name)
    if fn is None:
        return {}
    static = [i for i, a in enumerate(args) if isinstance(a, int)]
    g = jax.jit(jax.grad(fn, argnums=wrt), static_argnums=static)
    jargs = [a if isinstance(a, int) else jnp.asarray(a) for a in args]
    jax.block_until_ready(g(*jargs))  # compiled before timing
    return {"jax (jit)": lambda: jax.block_until_ready(g(*jargs))}


RNG = np.random.default_rng(0)
GMM = gmm_args(RNG, 1000, 20, 50)
GMM_SMALL = gmm_args(RNG, 100, 5, 10)
LSE = lse_args(RNG, 1000)
ODE = ode_args(RNG, 10, 100)
LSTM = lstm_args(RNG, 2, 14, 100)
BA = ba_args(RNG, 10, 100, 300)
HT = ht_args(RNG, 500, 100)

WORKLOADS = [
    Workload("gmm n=1000 d=20 k=50", gmm.gmm_objective, None, GMM, wrt=(0, 1, 2),
             others=_jax_contender("gmm", GMM, (0, 1, 2))),
    Workload("gmm n=100 d=5 k=10", gmm.gmm_objective, None, GMM_SMALL, wrt=(0, 1, 2),
             others=_jax_contender("gmm", GMM_SMALL, (0, 1, 2))),
    Workload("lse n=1000", lse.logsumexp, None, LSE, wrt=0, others=_jax_contender("lse", LSE, 0)),
    Workload("ode n=10 s=100", ode.ode_last, None, ODE, wrt=0,
             others=_jax_contender("ode", ODE, 0)),
    Workload("lstm l=2 b=14 c=100", lstm.lstm_objective, None, LSTM, wrt=(0, 1),
             others=_jax_contender("lstm", LSTM, (0, 1))),
    Workload("ba 10 cams 100 pts 300 obs (vjp)", ba_total, None, BA, wrt=(0, 1, 2),
             others=_jax_contender("ba", BA, (0, 1, 2))),
    Workload("ht 500 verts 100 pts (vjp)", ht_total, None, HT, wrt=0),
]
