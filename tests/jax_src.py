"""JAX-flavoured objectives, written for this repository in the idiom of
GradBench's JAX tools: ``jax.numpy`` as the NumPy API, ``jax.scipy.special``,
``.at[...]`` updates, ``jax.vmap``, ``jax.lax.scan`` and ``fori_loop``.
tests/test_jax_numpy.py differentiates them with s2s-ad (the generated code
calls NumPy, never JAX) and compares with central differences of these
functions themselves, run by JAX where it is installed (float64) and by the
stand-in of tests/jax_standin.py otherwise."""

import math
import os
from functools import partial

try:
    if os.environ.get("S2S_JAX_STANDIN"):
        raise ImportError("the stand-in was asked for")
    import jax
    import jax.numpy as jnp
    from jax import numpy as jnp_too
    from jax.scipy.special import gammaln, logsumexp, multigammaln

    jax.config.update("jax_enable_x64", True)
    REAL_JAX = True
except ImportError:
    from jax_standin import jax
    from jax_standin import numpy as jnp
    from jax_standin import numpy as jnp_too
    gammaln, logsumexp = jax.scipy.special.gammaln, jax.scipy.special.logsumexp
    multigammaln = jax.scipy.special.multigammaln
    REAL_JAX = False


def log_sum_exp(v):
    top = jnp.max(v)
    return top + jnp.log(jnp.sum(jnp.exp(v - top)))


def activations(x, y):
    """jax.nn's activations, normalisers and one_hot."""
    a = jnp.sum(jax.nn.softplus(x * y) + jax.nn.relu(x) * y + jax.nn.log_sigmoid(x))
    b = jnp.sum(jax.nn.log_softmax(x * y, axis=1)) + jnp.sum(jax.nn.softmax(x) * y)
    c = jnp.sum(jax.nn.gelu(x) * y) + jnp.sum(jax.nn.gelu(y, approximate=False))
    d = jnp.sum(jax.nn.silu(x * y) + jax.nn.elu(x) + jax.nn.leaky_relu(y, 0.1))
    e = jnp.sum(jax.nn.sigmoid(x) * y * y) + jax.nn.logsumexp(x)
    f = jnp.sum(jax.nn.one_hot(1, x.shape[1]) * x)
    return a + b + c + d + e + f


def read_then_scanned(x, c):
    """x read element by element, then a fori_loop and a scan starting from x
    (the elements' adjoints were assigned over the whole use's: wrong before)."""
    acc = 0.0
    for k in range(3):
        acc += x[k] * c[k]
    y = jax.lax.fori_loop(0, 2, lambda i, v: v * c, x)

    def step(carry, t):
        carry = carry * c + t
        return carry, carry
    last, ys = jax.lax.scan(step, x, jnp.ones((2, 3)))
    return acc + jnp.sum(y) + jnp.sum(last) + jnp.sum(ys)


def nn_in_generator(x):
    """jax.nn inside a generator expression: refused, located (read in statements)."""
    return sum(jnp.sum(jax.nn.sigmoid(r)) for r in [x, 2.0 * x])


def stopped(x, y):
    """jax.lax.stop_gradient: y's value, no derivative through it."""
    return jnp.sum(jax.nn.sigmoid(x) * jax.lax.stop_gradient(y * y)) + jnp.sum(x * y)


def spread_cost(points, centers):
    """k-means: each point's squared distance to its nearest center."""
    def sq_dists(p, c):
        across = jnp.sum(p * p, axis=1)[:, None] + jnp.sum(c * c, axis=1)[None, :]
        return across - 2.0 * jnp.matmul(c, p.T).T

    nearest = jnp.min(sq_dists(points, centers), axis=1)
    return nearest.sum()


def mixture_loss(alphas, means, logdiag, lower, x):
    """Negative log-likelihood of a Gaussian mixture with Cholesky-factored
    precisions, the factors written entry by entry with ``.at[...].set``."""
    k, d = means.shape
    factors = jnp.zeros((k, d, d))
    c = 0
    for i in range(d):
        factors = factors.at[:, i, i].set(jnp.exp(logdiag[:, i]))
        for j in range(i):
            factors = factors.at[:, i, j].set(lower[:, c])
            c += 1
    centred = x[:, None, :] - means[None, :, :]
    z = jnp.einsum("kij,nkj->nki", factors, centred)
    inner = alphas + jnp.sum(logdiag, axis=1) - 0.5 * jnp.sum(z ** 2, axis=2)
    fit = jnp.sum(jax.scipy.special.logsumexp(inner, axis=1)) - x.shape[0] * logsumexp(alphas)
    prior = jnp.sum(gammaln(jnp.exp(alphas) + 1.0)) + 0.5 * jnp.sum(lower ** 2)
    return prior - fit


def wishart_penalty(*, k, p, logdiag, lower, gamma, m):
    """The log of a Wishart prior on the k precision matrices, up to what
    does not depend on them."""
    dof = p + m + 1
    squares = jnp.sum(jnp.exp(logdiag) ** 2, axis=1) + jnp.sum(lower ** 2, axis=1)
    spread = jnp.sum(0.5 * gamma * gamma * squares - m * jnp.sum(logdiag, axis=1))
    scale = dof * p * jnp.log(gamma / math.sqrt(2.0))
    return k * (scale - multigammaln(0.5 * dof, p)) - spread


def packed_mixture(*, d, k, x, alphas, means, logdiag, lower, gamma, m):
    """A Gaussian mixture whose precision factors have ``lower`` packed below
    the diagonal column by column: the positions are integer arrays made from
    ``d`` (``jnp.repeat`` with ``total_repeat_length``, a comprehension over
    ``range(d - 1)``), the factors one ``.at[:, rows, cols].set``."""
    n = x.shape[0]
    counts = jnp.arange(d - 1, 0, -1)
    cols = jnp.repeat(jnp.arange(d - 1), counts, total_repeat_length=d * (d - 1) // 2)
    rows = jnp.concatenate([jnp.arange(j + 1, d) for j in range(d - 1)])
    factors = jnp.zeros((k, d, d), dtype=lower.dtype).at[:, rows, cols].set(lower)
    centred = x[:, None, :] - means[None, ...]
    z = jnp.exp(logdiag) * centred + jnp.einsum("kij,nkj->nki", factors, centred)
    inner = alphas + jnp.sum(logdiag, axis=1) - 0.5 * jnp.sum(z ** 2, axis=2)
    fit = jnp.sum(logsumexp(inner, axis=1)) - n * logsumexp(alphas, axis=0)
    prior = wishart_penalty(k=k, p=d, logdiag=logdiag, lower=lower, gamma=gamma, m=m)
    return -fit - prior


def packed_mixture_twice(*, d, k, x, alphas, means, logdiag, lower):
    """The mixture as a helper called with keywords, once per prior weight."""
    total = 0.0
    for m in range(2):
        total = total + packed_mixture(d=d, k=k, x=x, alphas=alphas, means=means,
                                       logdiag=logdiag, lower=lower, gamma=1.0 + m, m=m)
    return total


def packed_add(lower, d: int):
    """``.at[rows, cols].add`` by index arrays made from ints."""
    rows, cols = jnp.tril_indices(d, -1)
    tri = jnp.zeros((d, d)).at[rows, cols].add(lower)
    return jnp.sum(jnp.tanh(tri @ tri.T))


def _node(i, n):
    return -1.0 + 2.0 * i / (n - 1.0)


def poly_fit(x, n: int):
    """Least squares of a polynomial against sign(t) at n nodes, one node per
    row of ``jax.vmap``."""
    m = x.shape[0]

    def residual(i):
        t = _node(i, n)
        powers = jnp.cumprod(jnp.full(m, t).at[0].set(1.0))
        return (jnp.sign(t) - jnp.sum(x * powers)) ** 2

    return 0.5 * jnp.sum(jax.vmap(residual)(jnp.arange(n)))


def chain_rhs(y, x):
    """dy_i/dt = x_i * y_(i-1), with y_(-1) = 1."""
    shifted = jnp.roll(y, 1).at[0].set(1.0)
    return x * shifted


def rk4_last(x, steps: int):
    """Classic Runge-Kutta for ``chain_rhs`` from y = 0 to t = 1, the steps a
    ``jax.lax.scan`` whose stacked outputs are the trajectory."""
    h = 1.0 / steps

    def step(y, _):
        k1 = chain_rhs(y, x)
        k2 = chain_rhs(y + 0.5 * h * k1, x)
        k3 = chain_rhs(y + 0.5 * h * k2, x)
        k4 = chain_rhs(y + h * k3, x)
        y_next = y + h / 6.0 * (k1 + 2.0 * k2 + 2.0 * k3 + k4)
        return y_next, y_next

    _, path = jax.lax.scan(step, jnp.zeros_like(x), None, length=steps)
    return path[-1][-1] + 0.1 * jnp.sum(path[0])


def make_rhs(x):
    """A factory: the right-hand side it returns closes over ``x``."""
    def rhs(y):
        def component(i, xi, yi):
            return jnp.where(i == 0, xi, xi * yi)

        return jax.vmap(component)(jnp.arange(x.shape[0]), x, jnp.roll(y, 1))

    return rhs


def euler_path(f, y0, h, steps):
    """The solver calls the function it is given inside the scanned body."""
    def body(y, _):
        y_next = y + h * f(y)
        return y_next, y_next

    _, path = jax.lax.scan(body, y0, None, length=steps)
    return path[-1]


def factory_ode(x, steps: int):
    rhs = make_rhs(x)
    y = euler_path(rhs, jnp.ones_like(x), 0.1, steps)
    return jnp.sum(y * y)


def relax(x, n: int):
    """``jax.lax.fori_loop`` with a lambda body."""
    y = jax.lax.fori_loop(0, n, lambda i, y: 0.5 * y + jnp.sin(x * (i + 1.0)), x)
    return jnp.sum(y * y)


def scan_over_rows(w, xs):
    """``jax.lax.scan`` over the rows of ``xs`` (a carried sum and stacked outputs)."""
    def cell(h, row):
        h = jnp.tanh(w * h + row)
        return h, h * h

    last, outs = jax.lax.scan(cell, jnp.zeros_like(w), xs)
    return jnp.sum(last) + jnp.sum(outs)


def scan_no_outputs(w, xs):
    def cell(h, row):
        return jnp.sin(h * w) + row, None

    last, _ = jax.lax.scan(cell, w, xs)
    return jnp.sum(last ** 2)


def mapped_pairs(a, b, s):
    """``jax.vmap`` of a lambda with ``in_axes=(0, 0, None)``."""
    rows = jax.vmap(lambda u, v, t: jnp.sum(u * v) * t + u, in_axes=(0, 0, None))(a, b, s)
    return jnp.sum(jnp.sin(rows))


def updates(x, v):
    """``.at[...]`` add, multiply, subtract, get; ``+=`` rebinding (JAX arrays
    are never changed in place: ``same`` keeps its value)."""
    y = jnp.sin(x)
    same = y
    y += 1.0
    z = y.at[1:3].add(v).at[0].multiply(x[2]).at[-1].subtract(2.0 * v[0])
    same = same.at[0].set(x[3] * same[1])
    return jnp.sum(z * same) + z.at[2].get() ** 2 + jnp.sum(y)


soft_max_sum = lambda z: jnp.sum(jnp.exp(z) / jnp.sum(jnp.exp(z)) * z)  # noqa: E731


def other_spelling(x):
    """``from jax import numpy as jnp_too``: the same module."""
    return jnp_too.sum(jnp_too.exp(x) * x)


def smooth_in_place(x):
    """``x = x.at[i].set(...)`` on a parameter in a loop (JAX never changes
    the caller's array)."""
    for i in range(1, x.shape[0]):
        x = x.at[i].set(0.5 * x[i - 1] + jnp.sin(x[i]))
    return jnp.sum(x ** 2)


def lstm_like_scan(w, xs):
    """A tuple carry and tuple outputs, as recurrent cells in JAX are written."""
    def cell(carry, row):
        h, c = carry
        c = jnp.tanh(c * w + row)
        h = 0.5 * h + c
        return (h, c), (h, c * c)

    (h, c), (hs, cs) = jax.lax.scan(cell, (jnp.zeros_like(w), jnp.ones_like(w)), xs)
    return jnp.sum(h * c) + jnp.sum(hs) + jnp.sum(jnp.sin(cs))


def swap_loop(x, n: int):
    def body(i, pair):
        a, b = pair
        return b, 0.5 * a + jnp.sin(b)

    a, b = jax.lax.fori_loop(0, n, body, (x, 2.0 * x))
    return jnp.sum(a * b)


def mapped_pairs_out(a):
    rows, sums = jax.vmap(lambda u: (u * u, jnp.sum(u)))(a)
    return jnp.sum(rows) + jnp.sum(jnp.sin(sums))


def objectives_as_helpers(points, centers, x):
    return spread_cost(points, centers) + poly_fit(x, 5) + rk4_last(x, 4)


def helper_of_helper(x):
    return objectives_as_helpers(x[:3, None] * x[None, :2], x[None, :2] * x[:2, None], x)


def in_a_loop(x, reps: int):
    total = 0.0
    for r in range(reps):
        total = total + poly_fit(x * (r + 1.0), 4) + relax(x, r + 1)
    return total


def in_a_branch(x, flag: int):
    if flag > 0:
        out = rk4_last(x, 3)
    else:
        out = log_sum_exp(x)
    return out


# -- refused ----------------------------------------------------------------

@partial(jax.jit, static_argnums=[1])
def compiled(x, n):
    return jnp.sum(x ** n)


def uses_random(x):
    noise = jax.random.normal(0, x.shape)
    return jnp.sum(x * noise)


def vmap_in_comprehension(x):
    return sum([jnp.sum(jax.vmap(jnp.sin)(x)) for _ in range(2)])


def at_in_loop_aliased(x):
    y = jnp.zeros(3)
    total = 0.0
    for i in range(3):
        old = y
        y = y.at[i].set(x[i] * 2.0)
        total = total + jnp.sum(old * x)
    return total + jnp.sum(y)


def at_repeated_add(x):
    idx = jnp.array([0, 0, 1])
    return jnp.sum(jnp.zeros(3).at[idx].add(x[:3]) ** 2)


def at_repeated_positions(x, d: int):
    """Index arrays made from ints that repeat a position: ``.add`` would add
    them up where NumPy's write keeps the last, so the generated code stops."""
    idx = jnp.repeat(jnp.arange(d), 2)
    return jnp.sum(jnp.zeros(d).at[idx].add(x[: 2 * d]) ** 2)


def repeat_padded(x, d: int):
    """``total_repeat_length`` longer than the repeat: JAX pads, NumPy cannot."""
    idx = jnp.repeat(jnp.arange(d), 2, total_repeat_length=2 * d + 1)
    return jnp.sum(x[idx] ** 2)


def repeat_total_along_axis(x, d: int):
    idx = jnp.repeat(jnp.arange(d), 2, axis=0, total_repeat_length=2 * d)
    return jnp.sum(x[idx] ** 2)


def at_min(x):
    return jnp.sum(x.at[0].min(0.0))


def in_axes_one(x):
    return jnp.sum(jax.vmap(jnp.sin, in_axes=1)(x))
