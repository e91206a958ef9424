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


def _constant(name: str, forward: str, arity: int = 1, attrs=(("dtype", None),)) -> Rule:
    """A constructor: its result does not depend differentiably on anything.
    ``dtype`` is a float dtype's name (``"float32"``): the frontend refuses
    integer dtypes where the array could be given a value to differentiate."""
    return Rule(f"np.{name}", forward, (None,) * arity, "array", "constant", attrs=attrs)


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
    _unary("arcsin", "1 / np.sqrt(1 - x * x)", "1/√(1-x²)", (UNIT,)),
    _unary("arccos", "-1 / np.sqrt(1 - x * x)", "-1/√(1-x²)", (UNIT,)),
    _unary("arcsinh", "1 / np.sqrt(x * x + 1)", "1/√(x²+1)"),
    _unary("arctanh", "1 / (1 - x * x)", "1/(1-x²)", (UNIT,)),
    _unary("log2", "1 / (x * np.log(2))", "1/(x ln 2)", (POS,)),
    _unary("log10", "1 / (x * np.log(10))", "1/(x ln 10)", (POS,)),
    _unary("exp2", "out * np.log(2)", "2ˣ ln 2"),
    _unary("cbrt", "1 / (3 * out * out)", "1/(3∛x²)", (POS,)),
    _unary("reciprocal", "-out * out", "-1/x²", (POS,)),
    Rule("np.power", "np.power(x, y)", ("y * np.power(x, y - 1)", "out * np.log(x)"), "array",
         "∂/∂x = y·x^(y-1), ∂/∂y = x^y·ln x", domain=(POS, ANY), broadcast=True),
    Rule("np.float_power", "np.float_power(x, y)",
         ("y * np.float_power(x, y - 1)", "out * np.log(x)"), "array",
         "∂/∂x = y·x^(y-1), ∂/∂y = x^y·ln x (in float64)", domain=(POS, ANY), broadcast=True),
    Rule("np.logaddexp", "np.logaddexp(x, y)", ("np.exp(x - out)", "np.exp(y - out)"), "array",
         "∂/∂x = eˣ/(eˣ+eʸ), ∂/∂y = eʸ/(eˣ+eʸ)", broadcast=True),
    Rule("np.hypot", "np.hypot(x, y)", ("x / out", "y / out"), "array",
         "∂/∂x = x/√(x²+y²), ∂/∂y = y/√(x²+y²)", domain=(POS, POS), broadcast=True),
    Rule("np.arctan2", "np.arctan2(x, y)", ("y / (x * x + y * y)", "-x / (x * x + y * y)"),
         "array", "∂/∂x = y/(x²+y²), ∂/∂y = -x/(x²+y²)", domain=(ANY, POS), broadcast=True),
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
    # scipy.special, where scipy is installed: the generated module imports
    # scipy.special as scipy_special only when the function calls one of these
    Rule("scipy.special.gammaln", "scipy_special.gammaln(x)", ("scipy_special.psi(x)",),
         "array", "ψ(x) (digamma)", domain=(POS,)),
    Rule("scipy.special.multigammaln", "scipy_special.multigammaln(x, y)",
         ("np.sum(scipy_special.psi(np.expand_dims(x, -1) - np.arange(y) / 2), axis=-1)", None),
         "array", "Σⱼ ψ(a - j/2), j < d", "d is an int", domain=((2.0, 4.0), (1, 1))),
    Rule("scipy.special.expit", "scipy_special.expit(x)", ("out * (1 - out)",), "array",
         "σ(x)(1 - σ(x))"),
    Rule("scipy.special.erf", "scipy_special.erf(x)",
         ("(2 / np.sqrt(np.pi)) * np.exp(-(x * x))",), "array", "2/√π·e^(-x²)"),
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
    Rule("np.var", "np.var(x, axis=axis, keepdims=keepdims, ddof=ddof)",
         ("keep(g) * (2 / (reduced_size(x) - ddof)) * (x - np.mean(x, axis=axis, keepdims=True))",),
         "array", "2(x - mean)/(n - ddof) for each element", adjoint=True,
         attrs=AXIS + (("ddof", 0),)),
    Rule("np.std", "np.std(x, axis=axis, keepdims=keepdims, ddof=ddof)",
         ("keep(g) / keep(out) * (1 / (reduced_size(x) - ddof)) * "
          "(x - np.mean(x, axis=axis, keepdims=True))",),
         "array", "(x - mean)/((n - ddof)·std) for each element",
         "inf/nan where the standard deviation is 0", adjoint=True, attrs=AXIS + (("ddof", 0),)),
    Rule("np.cumprod", "np.cumprod(x, axis=axis)", ("cumprod_adjoint(g, x, out, axis)",),
         "array", "each element to every later partial product",
         "exact at zeros (no division where a slice holds a zero)",
         adjoint=True, attrs=(("axis", None),)),
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
    Rule("np.cross", "np.cross(x, y)", ("np.cross(y, g)", "np.cross(g, x)"), "array",
         "∂/∂x = y × g, ∂/∂y = g × x (3-vectors along the last axis)", adjoint=True,
         broadcast=True),
    Rule("np.inner", "np.inner(x, y)", ("inner_adjoint(g, x, y, 0)", "inner_adjoint(g, x, y, 1)"),
         "array", "∂/∂x = g·y, ∂/∂y = gᵀ·x (over the last axes)", adjoint=True),
    Rule("np.einsum", "np.einsum(subscripts, *args)", ("einsum",), "array",
         "operand k: an einsum of g with the other operands", adjoint=True,
         attrs=(("subscripts", ""), ("adjoints", ())), variadic=True),
    Rule("np.trace", "np.trace(x, offset=offset)", ("trace_adjoint(g, x, offset)",), "array",
         "g on the diagonal", adjoint=True, attrs=(("offset", 0),)),
    Rule("np.linalg.det", "np.linalg.det(x)",
         ("np.expand_dims(g * out, (-2, -1)) * np.swapaxes(np.linalg.inv(x), -1, -2)",), "array",
         "det(x)·x⁻ᵀ", "x must be invertible (the inverse is computed)", adjoint=True),
    Rule("np.linalg.inv", "np.linalg.inv(x)",
         ("-(np.swapaxes(out, -1, -2) @ g @ np.swapaxes(out, -1, -2))",), "array",
         "-x⁻ᵀ·g·x⁻ᵀ", adjoint=True),
    Rule("np.linalg.solve", "np.linalg.solve(x, y)",
         ("solve_adjoint(g, x, y, out, 0)", "solve_adjoint(g, x, y, out, 1)"), "array",
         "∂/∂b = x⁻ᵀ·g, ∂/∂a = -(x⁻ᵀ·g)·outᵀ", adjoint=True),
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
    Rule("np.swapaxes", "np.swapaxes(x, axis1, axis2)", ("np.swapaxes(g, axis1, axis2)",),
         "array", "swap back", adjoint=True, attrs=(("axis1", 0), ("axis2", 1))),
    Rule("np.moveaxis", "np.moveaxis(x, source, destination)",
         ("np.moveaxis(g, destination, source)",), "array", "move back", adjoint=True,
         attrs=(("source", 0), ("destination", 0))),
    Rule("np.flip", "np.flip(x, axis=axis)", ("np.flip(g, axis=axis)",), "array", "flip back",
         adjoint=True, attrs=(("axis", None),)),
    Rule("np.roll", "np.roll(x, shift, axis=axis)", ("np.roll(g, unshift, axis=axis)",),
         "array", "roll back", adjoint=True,
         attrs=(("shift", 0), ("axis", None), ("unshift", 0))),
    Rule("np.repeat", "np.repeat(x, repeats, axis=axis)",
         ("repeat_adjoint(g, x, repeats, axis)",), "array", "the copies' adjoints summed",
         adjoint=True, attrs=(("repeats", 1), ("axis", None))),
    Rule("np.tile", "np.tile(x, reps)", ("tile_adjoint(g, x, reps)",), "array",
         "the tiles' adjoints summed", adjoint=True, attrs=(("reps", 1),)),
    Rule("np.diag", "np.diag(x, k=k)", ("diag_adjoint(g, x, k)",), "array",
         "a vector's to its diagonal, a matrix's diagonal back to a vector", adjoint=True,
         attrs=(("k", 0),)),
    Rule("np.tril", "np.tril(x, k=k)", ("unbroadcast(np.tril(g, k=k), x)",), "array",
         "g below the k-th diagonal", adjoint=True, attrs=(("k", 0),)),
    Rule("np.triu", "np.triu(x, k=k)", ("unbroadcast(np.triu(g, k=k), x)",), "array",
         "g above the k-th diagonal", adjoint=True, attrs=(("k", 0),)),
    Rule("np.copy", "np.copy(x)", ("g",), "array", "1", adjoint=True),
    Rule("np.concatenate", "np.concatenate(args, axis=axis)", ("concatenate",), "array",
         "each operand gets its slice of g", adjoint=True, attrs=(("axis", 0),), variadic=True),
    Rule("np.stack", "np.stack(args, axis=axis)", ("np.take(g, i, axis=axis)",), "array",
         "each operand gets its slice of g", adjoint=True, attrs=(("axis", 0),), variadic=True),
    Rule("np.hstack", "np.hstack(args)", ('stacked_part(g, args, i, "h")',), "array",
         "each operand gets its slice of g", adjoint=True, variadic=True),
    Rule("np.vstack", "np.vstack(args)", ('stacked_part(g, args, i, "v")',), "array",
         "each operand gets its slice of g", adjoint=True, variadic=True),
    # shape queries and constructors: no derivative
    Rule("shape", "np.shape(x)", (None,), "int"),
    Rule("len", "len(x)", (None,), "int"),
    Rule("np.ndim", "np.ndim(x)", (None,), "int"),
    Rule("np.size", "np.size(x)", (None,), "int"),
    Rule("tuple", "args", (None,), "int", variadic=True),
    Rule("index_array", "np.array(args)", (None,), "array", "a list of indices",
         variadic=True),
    _constant("zeros", "np.zeros(x, dtype=dtype)"),
    _constant("ones", "np.ones(x, dtype=dtype)"),
    _constant("zeros_like", "np.zeros_like(x, dtype=dtype)"),
    _constant("ones_like", "np.ones_like(x, dtype=dtype)"),
    _constant("full", "np.full(x, y, dtype=dtype)", 2),
    _constant("full_like", "np.full_like(x, y, dtype=dtype)", 2),
    _constant("identity", "np.identity(x, dtype=dtype)"),
    Rule("np.eye", "np.eye(*args, k=k, dtype=dtype)", (None,), "array", "constant",
         attrs=(("k", 0), ("dtype", None)), variadic=True),
    Rule("np.arange", "np.arange(*args, dtype=dtype)", (None,), "array", "constant",
         attrs=(("dtype", None),), variadic=True),
    Rule("np.linspace", "np.linspace(*args, dtype=dtype)", (None,), "array", "constant",
         attrs=(("dtype", None),), variadic=True),
    # indexing: the adjoint scatters g back (see s2s_ad/reverse/arrays.py)
    Rule("array.getitem", "x[index]", ("scatter", None), "array", "g scattered back to the indexed elements",
         adjoint=True, attrs=(("index", ()),), variadic=True),
    Rule("array.setitem", "assign(x, index, y)", ("scatter_zero", "gather", None), "array",
         "the old value's assigned elements get no adjoint", adjoint=True,
         attrs=(("index", ()),), variadic=True),
]

VIEWS = frozenset({"array.getitem", "np.transpose", "np.reshape", "np.ravel", "np.squeeze",
                   "np.expand_dims", "np.swapaxes", "np.moveaxis", "np.flip", "np.diag"})
"""Primitives whose result may share memory with their first operand."""

BROADCASTING = frozenset({"add", "sub", "mul", "div", "pow", "mod", "floordiv"})
"""Python operators that broadcast when an operand is an array."""

SAME_SHAPE = frozenset({"neg", "pos", "abs", "array.abs", "np.copy", "np.zeros_like",
                        "np.ones_like", "np.full_like", "array.setitem"}
                       | {f"np.{n}" for n in ("exp", "log", "log1p", "expm1", "sqrt", "sin",
                                              "cos", "tan", "tanh", "arctan", "sinh", "cosh",
                                              "abs", "square", "negative", "sign", "arcsin",
                                              "arccos", "arcsinh", "arctanh", "log2", "log10",
                                              "exp2", "cbrt", "reciprocal")}
                       | {"scipy.special.gammaln", "scipy.special.expit", "scipy.special.erf"})
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
    if lead < 0:  # fewer axes than x (a 0.0 adjoint a branch or loop never added to)
        g = np.array(np.broadcast_to(g, np.broadcast_shapes(g_shape, shape)))
        g_shape, lead = g.shape, len(g.shape) - len(shape)
        if g_shape == shape:
            return g
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
    "cumprod_adjoint": '''
def cumprod_adjoint(g, x, out, axis):
    """The adjoint of out = np.cumprod(x, axis): x[k] feeds every partial
    product from k on, so its adjoint is (g * out) summed from the end back to
    k, divided by x[k]. Where a slice holds a zero that division is not
    defined: there the products of the other elements are taken instead
    (quadratic in the axis length, exact)."""
    if axis is None:
        return np.reshape(cumprod_adjoint(np.ravel(g), np.ravel(x), np.ravel(out), 0),
                          np.shape(x))
    zeros = x == 0
    if not np.any(zeros):
        return np.flip(np.cumsum(np.flip(g * out, axis), axis), axis) / x
    x, g = np.moveaxis(x, axis, -1), np.moveaxis(g, axis, -1)
    n = np.shape(x)[-1]
    ones = np.ones_like(x[..., :1])
    before = np.cumprod(np.concatenate([ones, x[..., :-1]], axis=-1), axis=-1)
    # after[..., k, i]: the product of x[k + 1 .. i] (1 for i <= k)
    later = np.arange(n)[None, :] > np.arange(n)[:, None]
    after = np.cumprod(np.where(later, x[..., None, :], 1.0), axis=-1)
    d = before * np.sum(np.where(later | np.eye(n, dtype=bool), after * g[..., None, :], 0.0),
                        axis=-1)
    return np.moveaxis(d, -1, axis)
''',
    "repeat_adjoint": '''
def repeat_adjoint(g, x, repeats, axis):
    """The adjoint of np.repeat(x, repeats, axis): each element's copies sum."""
    shape = np.shape(x)
    if axis is None:
        return np.reshape(np.sum(np.reshape(g, (-1, repeats)), axis=1), shape)
    axis = axis % len(shape)
    g = np.reshape(g, shape[:axis] + (shape[axis], repeats) + shape[axis + 1:])
    return np.sum(g, axis=axis + 1)
''',
    "tile_adjoint": '''
def tile_adjoint(g, x, reps):
    """The adjoint of np.tile(x, reps): the tiles' adjoints summed. Axis k of
    the result is reps[k] blocks of x's axis k (both padded with leading 1s)."""
    reps = (reps,) if isinstance(reps, int) else tuple(reps)
    shape = tuple(np.shape(x))
    d = max(len(shape), len(reps))
    blocks = (1,) * (d - len(reps)) + reps
    lengths = (1,) * (d - len(shape)) + shape
    split = sum(((r, n) for r, n in zip(blocks, lengths)), ())
    return np.reshape(np.sum(np.reshape(g, split), axis=tuple(range(0, 2 * d, 2))), shape)
''',
    "diag_adjoint": '''
def diag_adjoint(g, x, k):
    """The adjoint of np.diag(x, k): of a vector x (the result a matrix with x
    on its k-th diagonal), that diagonal of g; of a matrix, g placed back on
    x's k-th diagonal (np.eye times the column of g's values, no writes)."""
    if np.ndim(x) == 1:
        return np.diag(g, k)
    n, m = np.shape(x)
    lead = max(-k, 0)
    column = np.concatenate([np.zeros(lead, dtype=np.result_type(g)), g,
                             np.zeros(n - lead - np.shape(g)[0], dtype=np.result_type(g))])
    return np.eye(n, m, k, dtype=np.result_type(x, g)) * column[:, None]
''',
    "trace_adjoint": '''
def trace_adjoint(g, x, offset):
    """The adjoint of np.trace(x, offset): g on the offset diagonal of the
    first two axes (g broadcast along the others)."""
    shape = np.shape(x)
    e = np.eye(shape[0], shape[1], offset, dtype=np.result_type(x, g))
    return np.reshape(e, e.shape + (1,) * (len(shape) - 2)) * g
''',
    "stacked_part": '''
def stacked_part(g, xs, i, how):
    """The slice of g that np.hstack(xs) (how "h") or np.vstack(xs) ("v") took
    from xs[i], in xs[i]'s shape. hstack joins 1-d arrays (numbers count as
    length 1) along axis 0, others along axis 1; vstack joins along axis 0,
    a vector or number counting as one row."""
    nds = [np.ndim(x) for x in xs]
    if how == "h":
        axis = 0 if max(nds[0], 1) == 1 else 1
    else:
        axis = 0
    def length(x, nd):
        if how == "v" and nd < 2 or how == "h" and nd == 0:
            return 1
        return np.shape(x)[axis]
    start = sum(length(x, nd) for x, nd in zip(xs[:i], nds[:i]))
    part = g[(slice(None),) * axis + (slice(start, start + length(xs[i], nds[i])),)]
    return np.reshape(part, np.shape(xs[i]))
''',
    "inner_adjoint": '''
def inner_adjoint(g, x, y, i):
    """The adjoint of np.inner(x, y), which contracts the last axes: g's axes
    are x's other axes, then y's other axes."""
    nx, ny = np.ndim(x), np.ndim(y)
    if nx == 0 or ny == 0:
        return unbroadcast(np.multiply(g, y if i == 0 else x), x if i == 0 else y)
    if i == 0:
        return np.tensordot(g, y, axes=(list(range(nx - 1, nx + ny - 2)), list(range(ny - 1))))
    return np.tensordot(g, x, axes=(list(range(nx - 1)), list(range(nx - 1))))
''',
    "solve_adjoint": '''
def solve_adjoint(g, a, b, out, i):
    """The adjoint of out = np.linalg.solve(a, b): b's is solve(aᵀ, g), a's
    minus that times outᵀ. b is a vector (one column) only when it has one
    axis; a stack of matrices a then solves it for each."""
    vector = np.ndim(b) == 1
    at = np.swapaxes(a, -1, -2)
    gb = np.linalg.solve(at, g[..., None])[..., 0] if vector else np.linalg.solve(at, g)
    if i == 1:
        return unbroadcast(gb, b)
    if vector:
        return unbroadcast(-(gb[..., :, None] * out[..., None, :]), a)
    return unbroadcast(-(gb @ np.swapaxes(out, -1, -2)), a)
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
    "total": '''
def total(g):
    """np.sum(g) for an array; g itself for a number (np.sum of a NumPy scalar
    costs microseconds, as much as a short loop iteration)."""
    return g if isinstance(g, (int, float, complex, np.generic)) else np.sum(g)
''',
    "own": '''
def own(v):
    """v.copy(), which later writes into the array v was read from cannot
    change; a NumPy scalar cannot change anyway, and copying one costs more
    than the arithmetic around it."""
    return v if isinstance(v, np.generic) else v.copy()
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
