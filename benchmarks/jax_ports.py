"""The GradBench objectives of examples/gradbench written with ``jax.numpy``:
the contenders of ``benchmarks/workloads_gradbench.py`` and the independent
reference of ``benchmarks/jax_agreement.py``. Written for this repository
from the objectives' definitions (the same mathematics as the NumPy
examples, in JAX's idiom: ``.at[].set``, ``lax.scan``, ``fori_loop``).

:func:`ports` returns {} when JAX is not installed (it is not a dependency).
"""

import numpy as np


def ports() -> dict:
    """name -> the objective as a JAX function of the same arguments (with
    x64 enabled), or {} without JAX."""
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

    def j_kmeans(points, centers):
        d = jnp.sum(points ** 2, axis=1)[None, :] + jnp.sum(centers ** 2, axis=1)[:, None] \
            - 2 * centers @ points.T
        return jnp.sum(jnp.min(d, axis=0))

    def j_llsq(x, n):
        t = -1.0 + 2.0 * jnp.arange(n) / (n - 1.0)
        powers = t[:, None] ** jnp.arange(x.shape[0])[None, :]
        return jnp.sum((jnp.sign(t) - powers @ x) ** 2) / 2.0

    return {"gmm": j_gmm, "lse": j_lse, "ode": j_ode, "lstm": j_lstm, "ba": j_ba,
            "kmeans": j_kmeans, "llsq": j_llsq}
