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

    # ht: where each finger's 4 angles go in the pose parameters (row, column):
    # theta[6:] fills, per finger f, (5+4f, 0), (5+4f, 1), (6+4f, 0), (7+4f, 0)
    finger_rows = np.array([5 + 4 * f + r for f in range(5) for r in (0, 0, 1, 2)])
    finger_cols = np.array([c for _ in range(5) for c in (0, 1, 0, 0)])

    def rotation_xzy(a):
        """Rz(a[1]) @ Ry(a[2]) @ Rx(a[0])."""
        cx, sx = jnp.cos(a[0]), jnp.sin(a[0])
        cy, sy = jnp.cos(a[2]), jnp.sin(a[2])
        cz, sz = jnp.cos(a[1]), jnp.sin(a[1])
        one, zero = jnp.ones_like(cx), jnp.zeros_like(cx)
        rx = jnp.array([[one, zero, zero], [zero, cx, -sx], [zero, sx, cx]])
        ry = jnp.array([[cy, zero, -sy], [zero, one, zero], [sy, zero, cy]])
        rz = jnp.array([[cz, -sz, zero], [sz, cz, zero], [zero, zero, one]])
        return rz @ ry @ rx

    def rodrigues(w):
        n = jnp.sqrt(jnp.sum(w ** 2))
        safe = jnp.where(n < 0.0001, 1.0, n)
        k = w / safe
        kx = jnp.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
        r = jnp.cos(n) * jnp.eye(3) + jnp.sin(n) * kx + (1 - jnp.cos(n)) * jnp.outer(k, k)
        return jnp.where(n < 0.0001, jnp.eye(3), r)

    def j_ht(theta, parents, base_relatives, inverse_base_absolutes, base_positions, weights,
             points, correspondences):
        nbones = base_relatives.shape[0]
        pose = jnp.zeros((nbones + 3, 3)).at[0].set(theta[0:3]).at[1].set(1.0) \
            .at[2].set(theta[3:6]).at[finger_rows, finger_cols].set(theta[6:])
        local = jax.vmap(rotation_xzy)(pose[3:])
        posed = base_relatives.at[:, :, :3].set(
            jnp.einsum("bij,bjk->bik", base_relatives[:, :, :3], local))
        absolutes = jnp.zeros_like(posed)
        for i in range(nbones):  # parents come before their children
            p = parents[i]
            above = jnp.where(p < 0, jnp.eye(4), absolutes[jnp.maximum(p, 0)])
            absolutes = absolutes.at[i].set(above @ posed[i])
        transforms = absolutes @ inverse_base_absolutes
        moved = jnp.einsum("bij,vj->vbi", transforms, base_positions)
        blended = jnp.sum(moved * weights[:, :, None], axis=1)[:, :3]
        vertices = blended @ (rodrigues(pose[0]) * pose[1]).T + pose[2]
        return jnp.sum(points - vertices[correspondences])

    return {"gmm": j_gmm, "lse": j_lse, "ode": j_ode, "lstm": j_lstm, "ba": j_ba,
            "kmeans": j_kmeans, "llsq": j_llsq, "ht": j_ht}
