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
  ...): zero; ``np.full``'s and ``np.full_like``'s fill value gets the
  result's adjoint summed over the elements it fills.

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
from .numpy_more import MORE_SAME_SHAPE, MORE_VIEWS

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
    # A literal beside `out` of a function whose result is always floating
    # (tanh of an int array is float64) is written as a float: the same
    # number, and an operation with a float scalar costs NumPy 2 about
    # 0.4 µs less than one with an int scalar (which it converts each time).
    _unary("exp", "out", "eˣ"),
    _unary("log", "1 / x", "1/x", (POS,)),
    _unary("log1p", "1 / (1 + x)", "1/(1+x)", (UNIT,)),
    _unary("expm1", "out + 1.0", "eˣ"),
    _unary("sqrt", "1.0 / (2.0 * out)", "1/(2√x)", (POS,)),
    _unary("sin", "np.cos(x)", "cos x"),
    _unary("cos", "-np.sin(x)", "-sin x"),
    _unary("tan", "1.0 + out * out", "1 + tan² x", (UNIT,)),
    _unary("tanh", "1.0 - out * out", "1 - tanh² x"),
    _unary("arctan", "1 / (1 + x * x)", "1/(1+x²)"),
    _unary("sinh", "np.cosh(x)", "cosh x"),
    _unary("cosh", "np.sinh(x)", "sinh x"),
    _unary("abs", "np.sign(x)", "sign x", notes="np.sign: 0 at 0"),
    _unary("square", "2 * x", "2x"),
    _unary("negative", "-1", "-1"),
    _unary("sign", None, "zero almost everywhere"),
    _unary("floor", None, "zero almost everywhere (a step)"),
    *[Rule(f"np.{name}", f"np.{name}(x)", (None,), "bool", "zero (a test)", domain=(ANY,))
      for name in ("isnan", "isfinite", "isinf")],
    Rule("np.logical_and", "np.logical_and(x, y)", (None, None), "bool", "zero (a test)",
         "also `a & b` of two comparisons (or masks)", broadcast=True),
    Rule("np.logical_or", "np.logical_or(x, y)", (None, None), "bool", "zero (a test)",
         "also `a | b` of two comparisons (or masks)", broadcast=True),
    Rule("np.logical_xor", "np.logical_xor(x, y)", (None, None), "bool", "zero (a test)",
         "also `a ^ b` of two comparisons (or masks)", broadcast=True),
    Rule("np.logical_not", "np.logical_not(x)", (None,), "bool", "zero (a test)",
         "also `~m` of a comparison (or a mask)"),
    _unary("ceil", None, "zero almost everywhere (a step)"),
    _unary("trunc", None, "zero almost everywhere (a step)"),
    _unary("rint", None, "zero almost everywhere (a step)"),
    Rule("np.round", "np.round(x, decimals)", (None,), "array",
         "zero almost everywhere (a step)", "`decimals` a constant int",
         attrs=(("decimals", 0),)),
    _unary("arcsin", "1 / np.sqrt(1 - x * x)", "1/√(1-x²)", (UNIT,)),
    _unary("arccos", "-1 / np.sqrt(1 - x * x)", "-1/√(1-x²)", (UNIT,)),
    _unary("arcsinh", "1 / np.sqrt(x * x + 1)", "1/√(x²+1)"),
    _unary("arctanh", "1 / (1 - x * x)", "1/(1-x²)", (UNIT,)),
    _unary("log2", "1 / (x * np.log(2))", "1/(x ln 2)", (POS,)),
    _unary("log10", "1 / (x * np.log(10))", "1/(x ln 10)", (POS,)),
    _unary("exp2", "out * np.log(2)", "2ˣ ln 2"),
    _unary("cbrt", "1.0 / (3.0 * out * out)", "1/(3∛x²)", (POS,)),
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
    Rule("np.fmax", "np.fmax(x, y)",
         ("np.where(np.isnan(y), 1.0, x >= y)", "np.where(np.isnan(x), 1.0, x < y)"),
         "array", "1 to the larger operand, or to the one that is not NaN",
         "at a tie the first operand gets the adjoint", broadcast=True),
    Rule("np.fmin", "np.fmin(x, y)",
         ("np.where(np.isnan(y), 1.0, x <= y)", "np.where(np.isnan(x), 1.0, x > y)"),
         "array", "1 to the smaller operand, or to the one that is not NaN",
         "at a tie the first operand gets the adjoint", broadcast=True),
    Rule("np.heaviside", "np.heaviside(x, y)", (None, "x == 0"), "array",
         "∂/∂x = 0 (a step); ∂/∂y = 1 where x = 0", broadcast=True),
    Rule("np.nan_to_num", "np.nan_to_num(x)", ("np.isfinite(x)",), "array",
         "1 where x is finite, 0 at the NaNs and infinities replaced"),
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
    Rule("scipy.special.erfc", "scipy_special.erfc(x)",
         ("-(2 / np.sqrt(np.pi)) * np.exp(-(x * x))",), "array", "-2/√π·e^(-x²)"),
    Rule("scipy.special.digamma", "scipy_special.digamma(x)", ("scipy_special.polygamma(1, x)",),
         "array", "ψ'(x) (trigamma)", "`scipy.special.psi` is the same function",
         domain=(POS,)),
    Rule("scipy.special.polygamma", "scipy_special.polygamma(x, y)",
         (None, "scipy_special.polygamma(x + 1, y)"), "array", "ψ⁽ⁿ⁺¹⁾(x)", "n is an int",
         domain=((1, 1), POS)),
    Rule("scipy.special.ndtr", "scipy_special.ndtr(x)",
         ("np.exp(-0.5 * (x * x)) / np.sqrt(2 * np.pi)",), "array",
         "φ(x) = e^(-x²/2)/√(2π), the standard normal density"),
    Rule("scipy.special.log_ndtr", "scipy_special.log_ndtr(x)",
         ("np.exp(-0.5 * (x * x) - out) / np.sqrt(2 * np.pi)",), "array",
         "φ(x)/Φ(x), computed as e^(-x²/2 - out)/√(2π) (no underflow far left)"),
    Rule("scipy.special.logit", "scipy_special.logit(x)", ("1 / (x * (1 - x))",), "array",
         "1/(x(1-x))", domain=((0.1, 0.9),)),
    Rule("scipy.special.log_expit", "scipy_special.log_expit(x)", ("scipy_special.expit(-x)",),
         "array", "σ(-x) = 1 - σ(x)"),
    Rule("scipy.special.xlogy", "scipy_special.xlogy(x, y)",
         ("scipy_special.xlogy(1.0, y)", "np.where(x == 0, 0.0, x / y)"),
         "array", "∂/∂x = log y, ∂/∂y = x/y", "x log y is 0 where x = 0 (its ∂/∂y too)",
         domain=(ANY, POS), broadcast=True),
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
    Rule("np.cross", "np.cross(x, y)", ("cross_product(y, g)", "cross_product(g, x)"), "array",
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
    Rule("np.tensordot", "np.tensordot(x, y, axes=axes)",
         ("tensordot_adjoint(g, x, y, axes, 0)", "tensordot_adjoint(g, x, y, axes, 1)"),
         "array", "∂/∂x: g contracted with y over y's free axes (and ∂/∂y likewise)",
         adjoint=True, attrs=(("axes", 2),)),
    Rule("np.linalg.cholesky", "np.linalg.cholesky(x)", ("cholesky_adjoint(g, out)",), "array",
         "with S = L⁻ᵀ·Φ(Lᵀ·ḡ)·L⁻¹ (Φ: the lower triangle, diagonal halved): "
         "tril(S + Sᵀ) − diag S", "NumPy reads only the lower triangle of x, so the "
         "upper triangle's adjoint is 0 (JAX's is symmetric: the same derivative of a "
         "symmetric x)", adjoint=True),
    Rule("np.linalg.slogdet_sign", "np.linalg.slogdet(x)[0]", (None,), "array",
         "zero (the sign of the determinant)"),
    Rule("np.linalg.slogdet_log", "np.linalg.slogdet(x)[1]",
         ("np.expand_dims(g, (-2, -1)) * np.swapaxes(np.linalg.inv(x), -1, -2)",), "array",
         "x⁻ᵀ", "x must be invertible (the inverse is computed)", adjoint=True),
    # sorting and picking
    Rule("np.sort", "np.sort(x, axis=axis)", ("sort_adjoint(g, x, axis)",), "array",
         "g moved back to where each element came from",
         "ties: equal elements are told apart by np.argsort's order", adjoint=True,
         attrs=(("axis", -1),)),
    Rule("np.argsort", "np.argsort(x, axis=axis)", (None,), "int", "zero (indices)",
         attrs=(("axis", -1),)),
    Rule("np.argmax", "np.argmax(x, axis=axis, keepdims=keepdims)", (None,), "int",
         "zero (indices)", "ties: the first", attrs=AXIS),
    Rule("np.argmin", "np.argmin(x, axis=axis, keepdims=keepdims)", (None,), "int",
         "zero (indices)", "ties: the first", attrs=AXIS),
    # tests of an array (`if np.any(x < 0.0): ...`): no derivative
    Rule("np.any", "np.any(x, axis=axis, keepdims=keepdims)", (None,), "bool",
         "zero (a test)", attrs=AXIS),
    Rule("np.all", "np.all(x, axis=axis, keepdims=keepdims)", (None,), "bool",
         "zero (a test)", attrs=AXIS),
    Rule("np.take", "np.take(x, y, axis=axis)", ("take_adjoint(g, x, y, axis)", None),
         "array", "g added back at the taken indices (repeats add up)", adjoint=True,
         attrs=(("axis", None),)),
    Rule("np.take_along_axis", "np.take_along_axis(x, y, axis=axis)",
         ("take_along_axis_adjoint(g, x, y, axis)", None), "array",
         "g added back at the taken indices (repeats add up)", adjoint=True,
         attrs=(("axis", None),)),
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
         ("moved(g, destination, source)",), "array", "move back", adjoint=True,
         attrs=(("source", 0), ("destination", 0))),
    # an axis known only when the code runs (an int value y): the axis moved to
    # the front, the function applied along axis 0, the result moved back
    Rule("axis.front", "np.moveaxis(x, y, 0)", ("np.moveaxis(g, 0, y)", None), "array",
         "move back", adjoint=True),
    Rule("axis.back", "np.moveaxis(x, 0, y)", ("np.moveaxis(g, y, 0)", None), "array",
         "move back", adjoint=True),
    Rule("np.flip", "np.flip(x, axis=axis)", ("np.flip(g, axis=axis)",), "array", "flip back",
         adjoint=True, attrs=(("axis", None),)),
    Rule("np.roll", "np.roll(x, shift, axis=axis)", ("rolled(g, unshift, axis)",),
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
    # `np.float64(x)`, `np.float32(x)`: a conversion (of a number, a NumPy
    # scalar or an array) to the dtype the call names
    *[Rule(f"np.{t}", f"np.{t}(x)", ("astype_like(g, x)",), "float",
           "1 (a conversion: the adjoint cast back to x's dtype)", adjoint=True)
      for t in ("float64", "float32")],
    # `x.item()`: a 0-d or one-element array as a number (NumPy raises for another size)
    Rule("array.item", "np.reshape(x, ())[()]", ("np.reshape(g, np.shape(x))",), "float",
         "1 (the one element)", "x must have one element (a ValueError otherwise)",
         adjoint=True),
    # torch's x.clone().detach(): a copy the function does not differentiate
    Rule("array.detach", "np.copy(x)", (None,), "array", "zero (torch's detach)",
         "a copy: read only where torch's shared storage makes no difference"),
    Rule("np.diagonal", "np.diagonal(x, offset=offset, axis1=axis1, axis2=axis2)",
         ("diagonal_adjoint(g, x, offset, axis1, axis2)",), "array",
         "g placed back on the diagonal", adjoint=True,
         attrs=(("offset", 0), ("axis1", 0), ("axis2", 1))),
    Rule("np.pad", "np.pad(x, pad_width)", ("pad_adjoint(g, x, pad_width)",), "array",
         "the slice of g without the padding (mode \"constant\", zeros)", adjoint=True,
         attrs=(("pad_width", 0),)),
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
    Rule("np.broadcast_shapes", "np.broadcast_shapes(*args)", (None,), "int", variadic=True,
         notes="the shape two or more shapes broadcast to (a tuple of ints, as `np.shape`'s: "
         "the adjoint of `unbroadcast` in a NumPy gradient module, read back)"),
    Rule("tuple", "args", (None,), "int", variadic=True),
    Rule("tuple.concat", "tuple(x) + tuple(y)", (None,), "int"),
    Rule("index_array", "np.array(args)", (None,), "array", "a list of indices",
         variadic=True),
    Rule("list.index_array", "index_array_of(x)", (None,), "array",
         notes="a list of any length (of ints, or bools: a mask) indexing an array, as the "
         "array NumPy makes of it there (IndexError for anything else, as NumPy's)"),
    # integer index arrays computed from ints (s2s_ad/frontend/index_exprs.py):
    # the expression as written, its code in the op (rules.forward_template)
    Rule("index.expr", "code", (None,), "array", "an integer index array", variadic=True,
         attrs=(("code", ""),), notes="the forward computation is the op's own `code`, an "
         "integer array computed from ints (`np.repeat(np.arange(d), counts)`)"),
    Rule("index.is_int", "isinstance(x, (int, np.integer)) and not isinstance(x, bool)",
         (None,), "bool", notes="a parameter an integer index array is computed from"),
    Rule("index.is_index", "hasattr(type(x), '__index__')", (None,), "bool",
         notes="a number read from a list indexing a list (`a[rows[0] * n + c]`): an int, "
         "as Python's list takes"),
    # the dtype of an array where the code runs (s2s_ad/frontend/write_dtypes.py)
    Rule("np.issubdtype", "x.dtype.kind in 'fc'", (None,), "bool",
         notes="`np.issubdtype(x.dtype, np.inexact)`; checked before a value with a derivative "
         "is written into an array whose dtype the code does not fix"),
    Rule("dtype.floating", "x.dtype.kind == 'f'", (None,), "bool",
         notes="`np.issubdtype(x.dtype, np.floating)`"),
    Rule("is_complex", "isinstance(x, complex) or getattr(getattr(x, 'dtype', None), 'kind', "
         "'') == 'c'", (None,), "bool",  # (read back by real_parts.read_back: the same text)
         notes="`np.iscomplexobj(x)` without NumPy: checked before `x.real`, `x.imag`, "
         "`x.conjugate()` (s2s_ad/frontend/real_parts.py)"),
    Rule("index.same_size", "np.size(x) == y", (None, None), "bool",
         notes="JAX's `total_repeat_length` checked against the repeat's length"),
    Rule("index.distinct", "np.all(np.unique(np.reshape(np.arange(np.size(x0)), "
         "np.shape(x0))[index], return_counts=True)[1] == 1)", (None,), "bool",
         "no element of x0 picked twice by the index", variadic=True,
         attrs=(("index", ()),), notes="checked before a write by an integer index array "
         "(NumPy keeps the last write to a repeated position)"),
    # `x.astype(float)`: a float dtype (the frontend refuses others)
    Rule("array.astype", "x.astype(dtype)", ("astype_like(g, x)",), "array",
         "1 (a cast: the adjoint cast back to x's dtype)", adjoint=True,
         attrs=(("dtype", None),)),
    # `np.floor(t * n).astype(int)`: an integer dtype, a step function of x
    Rule("array.astype_int", "x.astype(dtype)", (None,), "int",
         "zero (a step function: zero wherever it has a derivative)", attrs=(("dtype", None),),
         notes="integers, read as an index (`table[np.floor(t * n).astype(int)]`), as "
         "`int(math.floor(t))` is for a number"),
    _constant("zeros", "np.zeros(x, dtype=dtype)"),
    _constant("ones", "np.ones(x, dtype=dtype)"),
    # `np.zeros(shape, dtype=x.dtype)`: the dtype of an array read when the code runs
    Rule("array.zeros_as", "np.zeros(x, dtype=np.result_type(y))", (None, None), "array",
         "constant"),
    Rule("array.ones_as", "np.ones(x, dtype=np.result_type(y))", (None, None), "array",
         "constant"),
    Rule("array.full_as", "np.full(x0, x1, dtype=np.result_type(x2))",
         (None, "unbroadcast(g, x1)", None), "array",
         "∂/∂x1: g summed over the elements x1 fills", adjoint=True),
    _constant("zeros_like", "np.zeros_like(x, dtype=dtype)"),
    _constant("ones_like", "np.ones_like(x, dtype=dtype)"),
    # the fill value is differentiable: each element of the result is (a broadcast) y
    Rule("np.full", "np.full(x, y, dtype=dtype)", (None, "unbroadcast(g, y)"), "array",
         "∂/∂y: g summed over the elements y fills", adjoint=True, attrs=(("dtype", None),)),
    Rule("np.full_like", "np.full_like(x, y, dtype=dtype)", (None, "unbroadcast(g, y)"),
         "array", "∂/∂y: g summed over the elements y fills", adjoint=True,
         attrs=(("dtype", None),)),
    _constant("identity", "np.identity(x, dtype=dtype)"),
    Rule("np.eye", "np.eye(*args, k=k, dtype=dtype)", (None,), "array", "constant",
         attrs=(("k", 0), ("dtype", None)), variadic=True),
    # np.arange(start, stop, step) is start + k·step (stop only sets the length;
    # np.arange(stop) has no derivative); np.linspace(start, stop, num) is
    # start·(1 − k/(num − 1)) + stop·k/(num − 1), weights contracted with g's
    # first axis (a start or stop that is an array: one per element)
    Rule("np.arange", "np.arange(*args, dtype=dtype)",
         ("(np.sum(g) if len(args) > 1 else 0.0)", None,
          "np.sum(g * np.arange(np.size(g)))"), "array",
         "∂/∂start: 1 per element, ∂/∂step: k (the stop sets the length only)",
         adjoint=True, attrs=(("dtype", None),), variadic=True),
    Rule("np.linspace", "np.linspace(*args, dtype=dtype)",
         ("unbroadcast(np.tensordot(1.0 - np.arange(len(g)) / max(len(g) - 1, 1), g, "
          "axes=1), x0)",
          "unbroadcast(np.tensordot(np.arange(len(g)) / max(len(g) - 1, 1), g, axes=1), x1)",
          None), "array",
         "∂/∂start: 1 − k/(num − 1), ∂/∂stop: k/(num − 1) (the num sets the length)",
         adjoint=True, attrs=(("dtype", None),), variadic=True),
    # indexing: the adjoint scatters g back (see s2s_ad/reverse/arrays.py)
    Rule("array.getitem", "x[index]", ("scatter", None), "array", "g scattered back to the indexed elements",
         adjoint=True, attrs=(("index", ()),), variadic=True),
    Rule("array.setitem", "assign(x, index, y)", ("scatter_zero", "gather", None), "array",
         "the old value's assigned elements get no adjoint", adjoint=True,
         attrs=(("index", ()),), variadic=True),
]

VIEWS = frozenset({"array.getitem", "np.transpose", "np.reshape", "np.ravel", "np.squeeze",
                   "np.expand_dims", "np.swapaxes", "np.moveaxis", "np.flip", "np.diag",
                   "np.diagonal", "axis.front", "axis.back"}) | MORE_VIEWS
"""Primitives whose result may share memory with their first operand."""


def is_view(prim: str, args, attrs=None) -> bool:
    """May the result of ``prim`` on ``args`` (``attrs``: the op's) share
    memory with ``args[0]``? The :data:`VIEWS`, and an einsum of one operand
    keeping an index (``np.einsum("ii->i", A)``, ``np.einsum("ij->ji", A)``:
    NumPy returns a view of it; ``np.einsum("ii", A)`` is a number)."""
    return prim in VIEWS or prim == "np.einsum" and len(args) == 1 \
        and einsum_keeps_an_index((attrs or {}).get("subscripts"))


def einsum_keeps_an_index(subscripts) -> bool:
    """Does an einsum of ``subscripts`` (None: unknown) give an array, not a
    number: an index after ``->``, or, without one, an index written once?"""
    if not isinstance(subscripts, str):
        return True
    s = subscripts.replace(" ", "")
    if "->" in s:
        return s.split("->")[1] != ""
    written = s.replace(",", "")
    return "..." in written or any(written.count(c) == 1 for c in written)

BROADCASTING = frozenset({"add", "sub", "mul", "div", "pow", "mod", "floordiv"})
"""Python operators that broadcast when an operand is an array."""

SAME_SHAPE = frozenset({"neg", "pos", "abs", "array.abs", "np.copy", "np.float64", "np.float32",
                        "array.detach", "np.zeros_like",
                        "np.ones_like", "np.full_like", "array.setitem"}
                       | {f"np.{n}" for n in ("exp", "log", "log1p", "expm1", "sqrt", "sin",
                                              "cos", "tan", "tanh", "arctan", "sinh", "cosh",
                                              "abs", "square", "negative", "sign", "arcsin",
                                              "arccos", "arcsinh", "arctanh", "log2", "log10",
                                              "exp2", "cbrt", "reciprocal", "floor", "ceil",
                                              "trunc", "rint", "round", "nan_to_num", "isnan",
                                              "isfinite", "isinf")}
                       | {f"scipy.special.{n}" for n in ("gammaln", "expit", "erf", "erfc",
                                                       "digamma", "ndtr", "log_ndtr", "logit",
                                                       "log_expit")}
                       | MORE_SAME_SHAPE)
"""Primitives whose result has the shape of their first operand."""

from .numpy_helpers import HELPERS  # noqa: E402  (re-exported)

DTYPE_ONLY = frozenset({"np.issubdtype", "dtype.floating"})
"""Rules that read an array's dtype alone, never its elements (a check
before a write: s2s_ad/frontend/write_dtypes.py)."""
