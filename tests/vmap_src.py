"""Bodies mapped with ``jax.vmap``, one per batching rule of
s2s_ad/frontend/jax_batching.py and one per operation that keeps the loop
over rows. tests/test_vmap_batching.py differentiates them and compares with
central differences of these functions run by JAX (float64) where it is
installed, by tests/jax_standin.py (a loop over rows) otherwise, and with
s2s-ad's own per-row loop."""

try:
    import jax
    import jax.numpy as jnp
    from jax.scipy.special import logsumexp

    jax.config.update("jax_enable_x64", True)
except ImportError:
    from jax_standin import jax
    from jax_standin import numpy as jnp
    logsumexp = jax.scipy.special.logsumexp


def weights():
    """An unbatched array the mapped bodies read (through a closure)."""
    return jnp.reshape(jnp.linspace(-1.0, 1.0, 12), (3, 4))


def _scale(u, s):
    return u * s + jnp.tanh(u)


def _scaled_sum(u, s):
    return jnp.sum(_scale(u, s) ** 2)


# -- vectorised -------------------------------------------------------------------

def elementwise(a, b):
    """Scalar rows (1-d mapped arrays): arithmetic, ufuncs, comparisons,
    ``where``, ``abs``, ``clip``, a closure's array of higher rank."""
    W = weights()
    w = jnp.cos(b)

    def body(u, v):
        mixed = jnp.exp(u) * v - 2.0 * jnp.maximum(u, 0.3) / (1.0 + v ** 2) + abs(u)
        picked = jnp.where(u > v, u * v, jnp.logaddexp(u, v)) + jnp.clip(v, -0.5, 0.5)
        return (mixed + picked) * w - jnp.sign(v) * jnp.arctan2(u, 2.0)

    return jnp.sum(jnp.sin(jax.vmap(body)(a, b[:a.shape[0]])) * W)


def mixed_ranks(a, m):
    """A scalar row times a matrix row, and a vector row against an unbatched matrix."""
    W = weights()
    def body(s, x):
        return s * x + s - 0.5 * jnp.expm1(x * 0.1) * W

    return jnp.sum(jnp.cos(jax.vmap(body)(a, m)))


def reductions(t):
    """Rows of rank 2: every reduction, function and method, axis None, k, -1,
    a tuple, keepdims with an axis."""
    def body(x):
        out = jnp.sum(x) + jnp.sum(x, axis=0) * jnp.mean(x, axis=-1)[0]
        out = out + jnp.prod(x, axis=1)[0] + jnp.max(x, axis=1)[1] - jnp.min(x)
        out = out + jnp.var(x, axis=0, ddof=1) + jnp.std(x) + logsumexp(x, axis=-1)[0]
        out = out + x.sum(axis=0) * x.mean() + jnp.sum(x ** 2, axis=1, keepdims=True)[0]
        return out + jnp.amax(x, axis=0) - jnp.amin(x, axis=-1)[2]

    return jnp.sum(jax.vmap(body)(t) ** 2)


def cumulative(t):
    """``cumsum``/``cumprod`` along an axis and without one (NumPy flattens the row)."""
    def body(x):
        flat = jnp.cumsum(x) * 0.1 + jnp.cumprod(0.5 * x)
        along = jnp.cumsum(x, axis=1) + jnp.cumprod(x, axis=-1) - jnp.cumsum(x, 0)
        return jnp.sum(flat * flat) + jnp.sum(along ** 2, axis=0)

    return jnp.sum(jax.vmap(body)(t))


def filled(x, nodes):
    """``jnp.full(m, t).at[0].set(1)``, ``cumprod``: least squares as GradBench writes it."""
    m = x.shape[0]

    def body(t):
        powers = jnp.cumprod(jnp.full(m, t).at[0].set(1.0))
        extra = jnp.full((2, m), t * t).at[1, 0].add(t)
        return (jnp.sign(t) - jnp.sum(x * powers)) ** 2 + jnp.sum(extra * x)

    return jnp.sum(jax.vmap(body)(nodes)) / 2.0


def updates(a, b):
    """``.at[...]`` on a batched row with an unbatched value, on a fresh
    unbatched array with a batched value, and ``add``/``multiply``."""
    W = weights()
    def body(u, s):
        y = u.at[0].set(W[0]).at[1:].multiply(s)
        z = jnp.zeros(3).at[1].set(s * s).at[2].add(jnp.sum(u))
        return jnp.sum(y * y) + z * u[0, :3]

    return jnp.sum(jnp.sin(jax.vmap(body)(a, b)))


def indexing(t):
    """``x[i]``, slices, ``None``, ``x.shape``, ``x.ndim``, ``len`` of a row."""
    def body(x):
        first = x[1] * x[0, 2] + x[:, 0] * x.shape[1] + x.ndim
        return first * len(x) + jnp.sum(x[1:, ::2]) + jnp.sum(x[None] * 2.0, axis=1)[0, 0]

    return jnp.sum(jnp.tanh(jax.vmap(body)(t)))


def rolled(t, v):
    """``roll`` without an axis (flattened) and along axes; a 1-d mapped array."""
    def body(x, s):
        out = jnp.roll(x, 1) * jnp.roll(x, -2, axis=1) + jnp.roll(x, shift=1, axis=0)
        return jnp.sum(out * s) + jnp.roll(x, 2)[0, 0] * s

    return jnp.sum(jnp.sin(jax.vmap(body)(t, v)))


def contracted(t, u):
    """``einsum`` with a batched and an unbatched operand, and two batched ones."""
    W = weights()
    def body(x, y):
        return jnp.einsum("ij,j->i", x, W[0]) + jnp.einsum("ij,i->j", x, y)[0]

    return jnp.sum(jnp.cos(jax.vmap(body)(t, u)))


def helpers(t, s):
    """Calls of functions of the same module (a helper calling a helper) and
    of a nested function, with ``in_axes=(0, None)``."""
    def inner(x, c):
        return _scaled_sum(x, c) + jnp.sum(_scale(x, 0.5))

    def body(x, c):
        k = inner(x, c)
        return _scale(x, k * 0.1) * c

    return jnp.sum(jax.vmap(body, in_axes=(0, None))(t, s) ** 2)


def like_and_copy(t):
    def body(x):
        return jnp.zeros_like(x) + jnp.ones_like(x) * x + jnp.copy(x) * 2.0

    return jnp.sum(jax.vmap(body)(t) ** 3)


def outputs(t):
    """A tuple written out: a batched item, an unbatched one (the same for
    every row), a scalar per row."""
    W = weights()
    rows, same, sums = jax.vmap(lambda x: (jnp.sin(x), W, jnp.sum(x * x)))(t)
    return jnp.sum(rows * rows) + jnp.sum(same[:, 0, :] * t[:, :1]) + jnp.sum(sums ** 2)


def ufunc_itself(t):
    """``jax.vmap(jnp.sin)``: a NumPy function mapped directly."""
    return jnp.sum(jax.vmap(jnp.sin)(t) * t)


def ode_like(x, y):
    """GradBench's ode right-hand side: a factory-free ``vmap`` of three mapped arrays."""
    def component(i, xi, yi):
        return jnp.where(i == 0, xi, xi * yi)

    rhs = jax.vmap(component)(jnp.arange(x.shape[0]), x, jnp.roll(y, 1))
    return jnp.sum(rhs * rhs * y)


def row_views(t):
    """Rows of the mapped argument returned as they are: the stacked result is
    a new array (a copy), never a view of the caller's."""
    rows, firsts = jax.vmap(lambda x: (x[1:], x))(t)
    return jnp.sum(rows * rows) + jnp.sum(jnp.sin(firsts))


# -- the loop over rows kept ------------------------------------------------------

def matmul_by_matrix(t):
    W = weights()
    return jnp.sum(jax.vmap(lambda x: x @ W)(t) ** 2)


def keeps_ellipsis(t):
    return jnp.sum(jax.vmap(lambda x: x[..., 0] * 2.0)(t) ** 2)


def gather_by_row_index(t, table):
    def body(x, i):
        return jnp.sum(x * table[i])

    return jnp.sum(jax.vmap(body)(t, jnp.arange(t.shape[0]) % 2) ** 2)


def branch_on_shape(t):
    def body(x):
        if x.shape[0] > 2:
            x = x * 2.0
        return jnp.sum(jnp.sin(x))

    return jnp.sum(jax.vmap(body)(t) ** 2)


def keeps_loop(t):
    def body(x):
        acc = 0.0
        for k in range(3):
            acc = acc + jnp.sum(x * k)
        return acc * acc

    return jnp.sum(jax.vmap(body)(t))


def keeps_keepdims(t):
    return jnp.sum(jax.vmap(lambda x: jnp.sum(x, keepdims=True) * x)(t) ** 2)


def keeps_transpose(t):
    W = weights()
    return jnp.sum(jax.vmap(lambda x: x.T * W.T)(t) ** 2)


def dot_by_matrix(t):
    W = weights()
    return jnp.sum(jax.vmap(lambda x: jnp.dot(x, W))(t) ** 2)


# -- positions ----------------------------------------------------------------------

def in_helper(t, a, b):
    return 0.01 * reductions(t) + elementwise(a, b)


def helper_of_helper(t, a, b):
    return in_helper(t, a, b) * 0.5 + cumulative(t)


def in_loop(t, n: int):
    total = 0.0
    for r in range(n):
        total = total + rolled(t * (r + 1.0), t[:, 0, 0]) + matmul_by_matrix(t[:, :, 0])
    return total


def in_branch(t, flag: int):
    if flag > 0:
        out = indexing(t)
    else:
        out = contracted(t, t[:, :, 0])
    return out


# -- rows with fewer axes than the body reads: JAX raises, and so does s2s-ad ------

def scalar_row_indexed(t):
    """``x[0]`` of a row of a 1-d mapped array (a 0-d row): JAX raises
    IndexError; with the batch axis last, it would pick the first row."""
    def body(x):
        return x[0] * x + 1.0
    return jnp.sum(jax.vmap(body)(t))


def scalar_row_len(t):
    def body(x):
        return x * len(x)
    return jnp.sum(jax.vmap(body)(t))


def scalar_row_written(t):
    def body(x):
        p = jnp.zeros_like(x)
        p = p.at[0].set(1.0)
        return x * p
    return jnp.sum(jax.vmap(body)(t))


def scalar_row_in_helper(t, n: int):
    total = 0.0
    for k in range(n):
        if k >= 0:
            total = total + scalar_row_indexed(t * (k + 1.0))
    return total
