"""NumPy rules: elementwise functions, reductions, linear algebra, shapes.

Same table style as the scalar rules. Elementwise rules give a local partial
that the reverse sweep multiplies by the output's adjoint ``g``; operands
whose shape may differ from the result's (broadcasting) get their
contribution summed back to their own shape (see ``docs/numpy.md``). Rules
marked ``adjoint=True`` give the whole contribution over ``g`` instead (a
vector-Jacobian product): a reduction's adjoint is spread back over the
reduced axes, a matrix product's is another matrix product.

Conventions where a derivative does not exist:

* ``np.abs(x)``: ``np.sign(x)``, so 0 at 0 (the smallest subgradient).
* ``np.maximum(x, y)``: the adjoint goes to ``x`` where ``x >= y``;
  ``np.minimum`` to ``x`` where ``x <= y``; ``np.clip(x, lo, hi)`` to ``x``
  where ``lo <= x <= hi``.
* ``np.max``/``np.min``: the adjoint is split evenly between the elements
  that tie for the extreme.
* ``np.sign``, comparisons and the constructors (``np.zeros``, ``np.arange``,
  ...): zero.

``@``/``np.matmul`` cover vectors, matrices and stacks of matrices;
``np.dot`` also its own contraction of N-d arrays (the last axis of ``x``
with the second-to-last of ``y``) and 0-d operands.

The helpers a generated module defines for itself (``HELPERS``) take a fast
path for plain ``np.ndarray`` operands (``x.shape``, ``x.T``,
``np.add.reduce``: the same computation without NumPy's per-call dispatch,
a few hundred nanoseconds each) and the dispatching forms (``np.shape``,
``np.transpose``, ``np.sum``) for anything else, so the same code still runs
on other array types.
"""

from __future__ import annotations

from . import Rule

POS = (0.2, 3.0)
UNIT = (-0.9, 0.9)
ANY = (-2.0, 2.0)
AXIS = (("axis", None), ("keepdims", False))


def _unary(name: str, partial: str | None, math: str = "", domain=(ANY,), notes: str = "") -> Rule:
    return Rule(f"np.{name}", f"np.{name}(x)", (partial,), "array", math, notes, domain=domain)


def _constant(name: str, forward: str, arity: int = 1) -> Rule:
    """A constructor: its result does not depend differentiably on anything."""
    return Rule(f"np.{name}", forward, (None,) * arity, "array", "constant")


# ∂out/∂x for matrix products: the generated module's matmul_adjoint helper.
# For matrices it calls np.dot with the other operand transposed (np.dot, not
# @: for operands of at most two dimensions they agree, and np.dot hands
# transposed views to BLAS where matmul may fall back to a slow loop —
# measured: X.T @ G 2x, H.T @ v 100x slower than np.dot on NumPy 2.4); it
# handles vectors and stacks of matrices too. np.dot's dot_adjoint calls it
# for operands of one or two dimensions, where np.dot and @ agree.
_MATMUL = ("matmul_adjoint(g, x, y, 0)", "matmul_adjoint(g, x, y, 1)")
_DOT = ("dot_adjoint(g, x, y, 0)", "dot_adjoint(g, x, y, 1)")

NUMPY_RULES = [
    # Python operators on arrays, where the scalar rule's template is not elementwise
    Rule("array.pow", "x ** y", ("np.where(y == 0, 0.0, y * x ** (y - 1))",
                                 "np.where(x == 0, 0.0, out * np.log(x))"), "array",
         "∂/∂x = y·x^(y-1), ∂/∂y = x^y·ln x", "as for scalars: 0 where y = 0 (x**0 is 1) "
         "and where x = 0 (0**y is 0)", domain=(POS, ANY), broadcast=True),
    Rule("array.abs", "abs(x)", ("np.sign(x)",), "array", "sign x", "np.sign: 0 at 0"),
    Rule("matmul", "x @ y", _MATMUL, "array", "∂/∂x = g·yᵀ, ∂/∂y = xᵀ·g", adjoint=True),
    # elementwise functions
    _unary("exp", "out", "eˣ"),
    _unary("log", "1 / x", "1/x", (POS,)),
    _unary("log1p", "1 / (1 + x)", "1/(1+x)", (UNIT,)),
    _unary("expm1", "out + 1", "eˣ"),
    _unary("sqrt", "1 / (2 * out)", "1/(2√x)", (POS,)),
    _unary("sin", "np.cos(x)", "cos x"),
    _unary("cos", "-np.sin(x)", "-sin x"),
    _unary("tan", "1 + out * out", "1 + tan² x", (UNIT,)),
    _unary("tanh", "1 - out * out", "1 - tanh² x"),
    _unary("arctan", "1 / (1 + x * x)", "1/(1+x²)"),
    _unary("sinh", "np.cosh(x)", "cosh x"),
    _unary("cosh", "np.sinh(x)", "sinh x"),
    _unary("abs", "np.sign(x)", "sign x", notes="np.sign: 0 at 0"),
    _unary("square", "2 * x", "2x"),
    _unary("negative", "-1", "-1"),
    _unary("sign", None, "zero almost everywhere"),
    Rule("np.power", "np.power(x, y)", ("y * np.power(x, y - 1)", "out * np.log(x)"), "array",
         "∂/∂x = y·x^(y-1), ∂/∂y = x^y·ln x", domain=(POS, ANY), broadcast=True),
    Rule("np.maximum", "np.maximum(x, y)", ("x >= y", "x < y"), "array",
         "1 to the larger operand", "at a tie the first operand gets the adjoint", broadcast=True),
    Rule("np.minimum", "np.minimum(x, y)", ("x <= y", "x > y"), "array",
         "1 to the smaller operand", "at a tie the first operand gets the adjoint", broadcast=True),
    Rule("np.where", "np.where(x0, x1, x2)",
         (None, "np.where(x0, g, 0.0)", "np.where(x0, 0.0, g)"), "array",
         "the adjoint goes to the operand the condition picked", adjoint=True, broadcast=True),
    Rule("np.clip", "np.clip(x0, x1, x2)",
         ("(x0 >= x1) & (x0 <= x2)", "(x0 < x1) & (x1 <= x2)", "(x0 > x2) | (x1 > x2)"),
         "array", "1 to x inside [lo, hi], else to the bound",
         "at a bound x gets the adjoint; with lo > hi the result is hi (NumPy's rule)",
         domain=(ANY, (-3.0, -2.5), (2.5, 3.0)), broadcast=True),
    # reductions; keep(g) restores the reduced axes so g broadcasts against x
    Rule("np.sum", "np.sum(x, axis=axis, keepdims=keepdims)",
         ("spread(keep(g), x)",), "array", "1 for each summed element",
         adjoint=True, attrs=AXIS),
    Rule("np.mean", "np.mean(x, axis=axis, keepdims=keepdims)",
         ("spread(keep(g) * (1 / reduced_size(x)), x)",), "array",
         "1/n for each averaged element", adjoint=True, attrs=AXIS),
    Rule("np.prod", "np.prod(x, axis=axis, keepdims=keepdims)",
         ("keep(g) * others_product(x, axis)",), "array",
         "the product of the other elements (exact at zeros; no division)",
         adjoint=True, attrs=AXIS),
    Rule("np.cumsum", "np.cumsum(x, axis=axis)", ("cumsum_adjoint(g, x, axis)",), "array",
         "each element to every later partial sum: g summed from the end",
         adjoint=True, attrs=(("axis", None),)),
    Rule("np.max", "np.max(x, axis=axis, keepdims=keepdims)",
         ("extreme_adjoint(keep(g), x, keep(out), axis)",), "array",
         "1 to the largest element", "ties split the adjoint evenly", adjoint=True, attrs=AXIS),
    Rule("np.min", "np.min(x, axis=axis, keepdims=keepdims)",
         ("extreme_adjoint(keep(g), x, keep(out), axis)",), "array",
         "1 to the smallest element", "ties split the adjoint evenly", adjoint=True, attrs=AXIS),
    # linear algebra
    Rule("np.dot", "np.dot(x, y)", _DOT, "array", "∂/∂x = g·yᵀ, ∂/∂y = xᵀ·g", adjoint=True),
    Rule("np.matmul", "np.matmul(x, y)", _MATMUL, "array", "∂/∂x = g·yᵀ, ∂/∂y = xᵀ·g",
         adjoint=True),
    Rule("np.outer", "np.outer(x, y)",
         ("np.reshape(g @ np.ravel(y), np.shape(x))", "np.reshape(np.ravel(x) @ g, np.shape(y))"),
         "array", "∂/∂x = g·y, ∂/∂y = gᵀ·x", adjoint=True),
    # shapes: the adjoint moves g back to x's layout
    Rule("np.transpose", "np.transpose(x, axes=axes)",
         ("np.transpose(g, axes=inverse_axes)",), "array", "transpose back", adjoint=True,
         attrs=(("axes", None), ("inverse_axes", None))),
    Rule("np.reshape", "np.reshape(x, y)", ("np.reshape(g, np.shape(x))", None), "array",
         "reshape back", adjoint=True),
    Rule("np.ravel", "np.ravel(x)", ("np.reshape(g, np.shape(x))",), "array", "reshape back",
         adjoint=True),
    Rule("np.squeeze", "np.squeeze(x, axis=axis)", ("np.reshape(g, np.shape(x))",), "array",
         "reshape back", adjoint=True, attrs=(("axis", None),)),
    Rule("np.expand_dims", "np.expand_dims(x, axis)", ("np.reshape(g, np.shape(x))",), "array",
         "reshape back", adjoint=True, attrs=(("axis", 0),)),
    Rule("np.copy", "np.copy(x)", ("g",), "array", "1", adjoint=True),
    Rule("np.concatenate", "np.concatenate(args, axis=axis)", ("concatenate",), "array",
         "each operand gets its slice of g", adjoint=True, attrs=(("axis", 0),), variadic=True),
    Rule("np.stack", "np.stack(args, axis=axis)", ("np.take(g, i, axis=axis)",), "array",
         "each operand gets its slice of g", adjoint=True, attrs=(("axis", 0),), variadic=True),
    # shape queries and constructors: no derivative
    Rule("shape", "np.shape(x)", (None,), "int"),
    Rule("len", "len(x)", (None,), "int"),
    Rule("np.ndim", "np.ndim(x)", (None,), "int"),
    Rule("np.size", "np.size(x)", (None,), "int"),
    Rule("tuple", "args", (None,), "int", variadic=True),
    Rule("index_array", "np.array(args)", (None,), "array", "a list of indices",
         variadic=True),
    _constant("zeros", "np.zeros(x)"),
    _constant("ones", "np.ones(x)"),
    _constant("zeros_like", "np.zeros_like(x)"),
    _constant("ones_like", "np.ones_like(x)"),
    _constant("full", "np.full(x, y)", 2),
    _constant("full_like", "np.full_like(x, y)", 2),
    Rule("np.arange", "np.arange(*args)", (None,), "array", "constant", variadic=True),
    Rule("np.linspace", "np.linspace(*args)", (None,), "array", "constant", variadic=True),
    # indexing: the adjoint scatters g back (see s2s_ad/reverse/arrays.py)
    Rule("array.getitem", "x[index]", ("scatter", None), "array", "g scattered back to the indexed elements",
         adjoint=True, attrs=(("index", ()),), variadic=True),
    Rule("array.setitem", "assign(x, index, y)", ("scatter_zero", "gather", None), "array",
         "the old value's assigned elements get no adjoint", adjoint=True,
         attrs=(("index", ()),), variadic=True),
]

VIEWS = frozenset({"array.getitem", "np.transpose", "np.reshape", "np.ravel", "np.squeeze",
                   "np.expand_dims"})
"""Primitives whose result may share memory with their first operand."""

BROADCASTING = frozenset({"add", "sub", "mul", "div", "pow", "mod", "floordiv"})
"""Python operators that broadcast when an operand is an array."""

SAME_SHAPE = frozenset({"neg", "pos", "abs", "array.abs", "np.copy", "np.zeros_like",
                        "np.ones_like", "np.full_like", "array.setitem"}
                       | {f"np.{n}" for n in ("exp", "log", "log1p", "expm1", "sqrt", "sin",
                                              "cos", "tan", "tanh", "arctan", "sinh", "cosh",
                                              "abs", "square", "negative", "sign")})
"""Primitives whose result has the shape of their first operand."""

HELPERS = {
    "unbroadcast": '''
def unbroadcast(g, x):
    """g summed over the axes along which x was broadcast, so it has x's shape."""
    scalar = (int, float, np.generic)  # shape (), as np.shape says, without asking it
    shape = x.shape if type(x) is np.ndarray else () if isinstance(x, scalar) else np.shape(x)
    g_shape = g.shape if type(g) is np.ndarray else () if isinstance(g, scalar) else np.shape(g)
    if g_shape == shape:
        return g
    lead = len(g_shape) - len(shape)
    axes = (0,) if lead == 1 else tuple(range(lead))
    if g_shape[lead:] == shape:
        return add_over(g, axes)
    axes += tuple(lead + i for i, n in enumerate(shape) if n == 1 and g_shape[lead + i] != 1)
    d = add_over(g, axes)
    return d.reshape(shape) if type(d) is np.ndarray else np.reshape(d, shape)
''',
    "add_over": '''
def add_over(g, axes, _ones={}):
    """np.add.reduce(g, axis=axes), axes a tuple. One axis of a float64 matrix: a
    product with a vector of ones, which BLAS computes several times faster than
    NumPy sums short rows (the vectors are kept in _ones by length, read-only)."""
    if type(g) is not np.ndarray:
        return np.sum(g, axis=axes)
    if len(axes) == 1 and g.ndim == 2 and g.dtype.char == "d":
        axis = axes[0]
        n = g.shape[axis]
        ones = _ones.get(n)
        if ones is None:
            ones = np.ones(n)
            ones.flags.writeable = False
            if len(_ones) < 64:
                _ones[n] = ones
        return np.dot(ones, g) if axis == 0 else np.dot(g, ones)
    return np.add.reduce(g, axis=axes)
''',
    "spread": '''
def spread(g, x):
    """np.zeros_like(x) + g (g broadcast to x's shape, in the dtype of the sum)
    without adding the zeros."""
    if type(x) is not np.ndarray or x.ndim == 0:
        out = np.zeros_like(x) + g
        if np.shape(out) != np.shape(x):  # g keeps an axis a number has not: np.sum(s, axis=0)
            out = np.reshape(out, np.shape(x))[()]
        return out
    out = np.empty_like(x, dtype=np.result_type(x, g))
    out[...] = g
    return out
''',
    "extreme_adjoint": '''
def extreme_adjoint(g, x, m, axis):
    """The adjoint of m = np.max(x, axis, keepdims=True) (or np.min) with
    respect to x: g split evenly between the elements equal to m."""
    at = x == m
    arrays = type(at) is np.ndarray and type(m) is np.ndarray
    # Every slice has at least one element equal to its extreme unless that is nan,
    # so as many elements as slices, and no nan, means no ties: nothing to split.
    if arrays and np.count_nonzero(at) == m.size and not np.isnan(np.add.reduce(m, axis=None)):
        return np.multiply(g, at, dtype=np.result_type(g, x))
    add = np.add.reduce if type(at) is np.ndarray else np.sum  # np.sum without dispatch
    return g / add(at, axis=axis, keepdims=True, dtype=np.result_type(x)) * at
''',
    "matmul_adjoint": '''
def matmul_adjoint(g, x, y, i):
    """The adjoint of x @ y with respect to x (i = 0) or y (i = 1). Matrices:
    np.dot with the other operand transposed; vectors and stacks of matrices
    (whose leading axes broadcast): matmul."""
    arrays = type(x) is np.ndarray and type(y) is np.ndarray
    nx, ny = (x.ndim, y.ndim) if arrays else (np.ndim(x), np.ndim(y))
    if i == 0 and ny == 2 and 1 <= nx <= 2:
        return np.dot(g, y.T if arrays else np.transpose(y))
    if i == 1 and nx == 2 and 1 <= ny <= 2:
        return np.dot(x.T if arrays else np.transpose(x), g)
    if arrays and nx == ny == 1:  # vector·vector: g is a scalar
        return np.multiply(g, y if i == 0 else x)
    if arrays and nx + ny == 3 and (nx, ny)[i] == 2:  # the matrix of matrix·vector: an outer product
        return np.multiply.outer(g, y) if i == 0 else np.multiply.outer(x, g)
    x2 = np.expand_dims(x, -2) if nx == 1 else x
    y2 = np.expand_dims(y, -1) if ny == 1 else y
    g2 = np.expand_dims(g, -1) if ny == 1 else g
    g2 = np.expand_dims(g2, -2) if nx == 1 else g2
    if i == 0:
        d = np.matmul(g2, np.swapaxes(y2, -1, -2))
        return unbroadcast(d[..., 0, :] if nx == 1 else d, x)
    d = np.matmul(np.swapaxes(x2, -1, -2), g2)
    return unbroadcast(d[..., 0] if ny == 1 else d, y)
''',
    "dot_adjoint": '''
def dot_adjoint(g, x, y, i):
    """The adjoint of np.dot(x, y) with respect to x (i = 0) or y (i = 1): that
    of x @ y for vectors and matrices, a product's for a 0-d operand. For more
    dimensions np.dot contracts x's last axis with y's second-to-last (its only
    one for a vector), and g's axes are x's other axes, then y's other axes."""
    nx, ny = np.ndim(x), np.ndim(y)
    if 1 <= nx <= 2 and 1 <= ny <= 2:
        return matmul_adjoint(g, x, y, i)
    if nx == 0 or ny == 0:
        return unbroadcast(np.multiply(g, y if i == 0 else x), x if i == 0 else y)
    c = max(ny - 2, 0)  # the contracted axis of y
    if i == 0:  # g's last ny - 1 axes against y's other axes
        rest = [k for k in range(ny) if k != c]
        return np.tensordot(g, y, axes=(list(range(nx - 1, np.ndim(g))), rest))
    # x's other (leading) axes against g's first nx - 1 axes; the contracted axis comes first
    d = np.tensordot(x, g, axes=(list(range(nx - 1)), list(range(nx - 1))))
    return np.moveaxis(d, 0, c)
''',
    "cumsum_adjoint": '''
def cumsum_adjoint(g, x, axis):
    """The adjoint of np.cumsum(x, axis): x[i] feeds every partial sum from i
    on, so its adjoint is the sum of g from the end back to i (over the
    flattened array when axis is None)."""
    if axis is None:
        return np.reshape(np.flip(np.cumsum(np.flip(np.ravel(g)))), np.shape(x))
    return np.flip(np.cumsum(np.flip(g, axis), axis), axis)
''',
    "others_product": '''
def others_product(x, axis):
    """The product of the other elements along axis (all axes when None), for
    each element: exclusive products from both sides, so zeros are exact."""
    if axis is None:
        return np.reshape(others_product(np.ravel(x), 0), np.shape(x))
    x = np.moveaxis(x, axis, -1)
    ones = np.ones_like(x[..., :1])
    left = np.cumprod(np.concatenate([ones, x[..., :-1]], axis=-1), axis=-1)
    right = np.flip(np.cumprod(np.flip(np.concatenate([x[..., 1:], ones], axis=-1), -1),
                               axis=-1), -1)
    return np.moveaxis(left * right, -1, axis)
''',
    "assign": '''
def assign(y, index, v):
    """A copy of y with y[index] = v: inside a loop the forward pass keeps each
    version of y, for the reverse sweep."""
    y = np.copy(y)
    y[index] = v
    return y
''',
    "scatter": '''
def scatter(g, x, index):
    """Zeros shaped like x with g added at x[index] (repeated indices add up)."""
    out = np.zeros_like(x)
    np.add.at(out, index, g)
    return out
''',
    "astype_like": '''
def astype_like(g, x):
    """g in x's floating dtype: a float32 argument gets a float32 gradient even
    where the function mixed in float64 values (np.zeros(n), float64 arguments)."""
    dtype = getattr(x, "dtype", None)
    if dtype is None or dtype.kind not in "fc" or getattr(g, "dtype", None) == dtype:
        return g
    return np.asarray(g, dtype=dtype)
''',
    "zeroed": '''
def zeroed(g, index, y):
    """A copy of g with g[index] = 0: those elements were overwritten. g may
    still be a number (an adjoint that started at 0.0, or the seed): then
    it stands for an array of y's shape."""
    g = np.zeros_like(y, dtype=np.result_type(y, g)) + g
    g[index] = 0.0
    return g
''',
    "gather": '''
def gather(g, index, y):
    """g[index], where g may still be a number standing for an array of y's
    shape (an adjoint that started at 0.0, or the seed)."""
    if np.shape(g) != np.shape(y):
        g = np.zeros_like(y, dtype=np.result_type(y, g)) + g
    return g[index]
''',
}
"""Functions a generated module defines for itself when its code calls them."""
