"""Every NumPy rule against central finite differences on random shapes,
and the elementwise partials against sympy.diff."""

import numpy as np
import pytest
import sympy

import s2s_ad
from array_oracle import assert_gradients, fd_gradient, make_function, rand
from s2s_ad.rules import RULES

RNG = np.random.default_rng(1234)
SHAPES = [(), (4,), (2, 3)]

UNARY = ["exp", "log", "log1p", "expm1", "sqrt", "sin", "cos", "tan", "tanh", "arctan", "sinh",
         "cosh", "abs", "square", "negative"]


def _unary(name):
    return make_function(f"def f(x):\n    return np.sum(np.{name}(x) * np.{name}(x))\n")


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("shape", SHAPES)
def test_unary(name, shape):
    rule = RULES[f"np.{name}"]
    lo, hi = rule.domain[0]
    x = rand(RNG, shape, lo, hi)
    if name == "abs":  # stay away from the kink
        x = np.where(np.abs(x) < 0.1, 0.5, x) if shape else (x if abs(x) > 0.1 else 0.5)
    assert_gradients(_unary(name), [x], [0])


SYMPY = {"exp": sympy.exp, "log": sympy.log, "log1p": lambda x: sympy.log(1 + x),
         "expm1": lambda x: sympy.exp(x) - 1, "sqrt": sympy.sqrt, "sin": sympy.sin,
         "cos": sympy.cos, "tan": sympy.tan, "tanh": sympy.tanh, "arctan": sympy.atan,
         "sinh": sympy.sinh, "cosh": sympy.cosh, "square": lambda x: x * x,
         "negative": lambda x: -x, "arcsin": sympy.asin, "arccos": sympy.acos,
         "arcsinh": sympy.asinh, "arctanh": sympy.atanh, "log2": lambda x: sympy.log(x, 2),
         "log10": lambda x: sympy.log(x, 10), "exp2": lambda x: 2 ** x, "cbrt": sympy.cbrt,
         "reciprocal": lambda x: 1 / x}


@pytest.mark.parametrize("name", sorted(SYMPY))
def test_unary_partial_matches_sympy(name):
    """The table's partial, evaluated on a symbol, equals sympy.diff."""
    x = sympy.Symbol("x", positive=True)
    fx = SYMPY[name](x)
    shim = type("np", (), {"cos": sympy.cos, "sin": sympy.sin, "cosh": sympy.cosh,
                           "sinh": sympy.sinh, "log": sympy.log, "sign": sympy.sign,
                           "sqrt": sympy.sqrt})
    partial = eval(RULES[f"np.{name}"].partials[0], {"np": shim, "x": x, "out": fx})
    assert sympy.simplify(partial - sympy.diff(fx, x)) == 0


def test_sign_has_no_derivative():
    def f(x):
        return np.sum(np.sign(x) * x)
    x = rand(RNG, (5,), 0.5, 2.0)
    assert_gradients(f, [x], [0])


BINARY_SHAPES = [((3,), (3,)), ((2, 3), (3,)), ((3, 1), (1, 4)), ((), (2, 3)), ((2, 3), ()),
                 ((1, 3), (2, 1))]


def _binary(expr):
    return make_function(f"def f(x, y):\n    return np.sum(np.sin({expr}))\n")


@pytest.mark.parametrize("expr", ["x + y", "x - y", "x * y", "x / y", "x ** y", "-x * y",
                                  "np.power(x, y)", "np.maximum(x, y)", "np.minimum(x, y)",
                                  "abs(x) * y"])
@pytest.mark.parametrize("shapes", BINARY_SHAPES)
def test_broadcasting_binary(expr, shapes):
    x = rand(RNG, shapes[0], 0.5, 2.0)
    y = rand(RNG, shapes[1], 0.5, 2.0)
    assert_gradients(_binary(expr), [x, y], [0, 1])


def test_where_and_clip():
    def f(c, x, y):
        return np.sum(np.where(c > 0, x * x, y) ** 2)

    def g(x, lo, hi):
        return np.sum(np.clip(x, lo, hi) ** 2)

    def h(x):
        return np.sum(np.clip(x, None, 0.5) + np.clip(x, -0.5, None))

    c = rand(RNG, (3, 1))
    assert_gradients(f, [c, rand(RNG, (3, 4)), rand(RNG, (4,))], [1, 2])
    x = RNG.uniform(-2, 2, (10,))
    x = np.where(np.abs(np.abs(x) - 0.5) < 0.05, 0.0, x)  # away from the kinks
    assert_gradients(g, [x, rand(RNG, (10,), -0.6, -0.4) - 0.0, 0.5], [0, 1, 2])
    assert_gradients(h, [x], [0])
    # lo > hi: NumPy returns hi everywhere
    assert_gradients(g, [x, 0.7, 0.2], [0, 1, 2])


REDUCE = ["sum", "mean", "prod", "max", "min"]


@pytest.mark.parametrize("name", REDUCE)
@pytest.mark.parametrize("axis", [None, 0, 1, -1, (0, 2)])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions(name, axis, keepdims):
    f = make_function(f"def f(x):\n    return np.sum(np.sin(np.{name}(x, axis={axis!r}, keepdims={keepdims})))")
    if name == "prod" and isinstance(axis, tuple):
        from s2s_ad import SourceError, grad
        with pytest.raises(SourceError, match="one axis at a time"):
            grad(f)
        return
    x = RNG.permutation(np.linspace(0.5, 1.5, 24)).reshape(2, 3, 4)  # no ties
    assert_gradients(f, [x], [0])


@pytest.mark.parametrize("expr", ["np.cumsum(x)", "np.cumsum(x, axis=0)", "np.cumsum(x, 1)",
                                  "np.cumsum(x, axis=-1)", "x.cumsum(axis=2)", "x.cumsum()"])
def test_cumsum(expr):
    f = make_function(f"def f(x):\n    y = {expr}\n"
                      "    return np.sum(np.sin(y) * (1 + np.arange(np.size(y)).reshape(np.shape(y))))")
    assert_gradients(f, [rand(RNG, (2, 3, 4))], [0])


def test_linspace_is_a_constant():
    def f(x):
        t = np.linspace(0.0, 2.0, 5)
        return np.sum(np.sin(x[:, None] * t[None, :])) + np.sum(np.linspace(-1.0, 1.0, 3) * x)
    assert_gradients(f, [rand(RNG, (3,))], [0])


def test_prod_at_zero_is_exact():
    def f(x):
        return np.prod(x, axis=1).sum()
    x = rand(RNG, (3, 4))
    x[0, 1] = 0.0
    x[2, 0] = x[2, 3] = 0.0
    assert_gradients(f, [x], [0])


def test_max_ties_split_evenly():
    import s2s_ad

    def f(x):
        return np.max(x)
    g = s2s_ad.grad(f)(np.array([1.0, 3.0, 3.0, 2.0]))
    np.testing.assert_allclose(g, [0.0, 0.5, 0.5, 0.0])


@pytest.mark.parametrize("method", ["x.sum(axis=0)", "x.mean()", "x.max(axis=1)",
                                    "x.min(0)", "x.prod(axis=-1, keepdims=True)",
                                    "x.reshape(3, 2)", "x.T", "x.transpose()", "x.ravel()",
                                    "x.copy()", "x.reshape((-1,))", "x.sum(1).mean()",
                                    "x.clip(0.8, 1.2)", "x.clip(None, 1.0)"])
def test_method_forms(method):
    f = make_function(f"def f(x):\n    y = {method}\n"
                      "    return np.sum(np.sin(y) * (1 + np.arange(np.size(y)).reshape(np.shape(y))))")
    x = RNG.permutation(np.linspace(0.5, 1.5, 6)).reshape(2, 3)
    assert_gradients(f, [x], [0])


MATMUL = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 4)), ((2, 3), (3, 4))]


@pytest.mark.parametrize("op", ["x @ y", "np.dot(x, y)", "np.matmul(x, y)", "x.dot(y)"])
@pytest.mark.parametrize("shapes", MATMUL)
def test_matmul_shapes(op, shapes):
    f = make_function(f"def f(x, y):\n    return np.sum(np.sin({op}))")
    assert_gradients(f, [rand(RNG, shapes[0]), rand(RNG, shapes[1])], [0, 1])


@pytest.mark.parametrize("shapes", [((2, 3, 4), (2, 4, 5)), ((2, 3, 4), (4, 5)), ((3, 4), (2, 4, 5)),
                                    ((2, 3, 4), (4,)), ((4,), (2, 4, 5)), ((1, 3, 4), (2, 4, 2))])
def test_batched_matmul(shapes):
    f = make_function("def f(x, y):\n    return np.sum(np.sin(x @ y))")
    assert_gradients(f, [rand(RNG, shapes[0]), rand(RNG, shapes[1])], [0, 1])


def test_outer():
    def f(x, y):
        return np.sum(np.outer(x, y) ** 2)
    assert_gradients(f, [rand(RNG, (3,)), rand(RNG, (4,))], [0, 1])


@pytest.mark.parametrize("expr", ["np.transpose(x)", "np.transpose(x, (1, 0, 2))",
                                  "x.transpose(2, 0, 1)", "np.reshape(x, (4, 6))",
                                  "np.reshape(x, -1)", "np.squeeze(x[:, :1, :])",
                                  "np.squeeze(x[:, :1, :], axis=1)",
                                  "np.expand_dims(x, 1)", "np.expand_dims(x, axis=-1)",
                                  "np.ravel(x)", "np.copy(x)"])
def test_shape_ops(expr):
    f = make_function(f"def f(x):\n    y = {expr}\n    return np.sum(np.sin(y) * np.arange(np.size(y)).reshape(np.shape(y)))")
    assert_gradients(f, [rand(RNG, (2, 3, 4))], [0])


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_concatenate_and_stack(axis):
    f = make_function(f"def f(a, b, c):\n    s = np.concatenate([a, b, a * c], axis={axis})\n"
         f"    t = np.stack([a, c], axis={axis})\n"
         "    return np.sum(np.sin(s)) + np.sum(t ** 3)")
    shape_b = (2, 3) if axis == 0 else (2, 5)
    args = [rand(RNG, (2, 3)), rand(RNG, shape_b if axis == 0 else (2, 5)), rand(RNG, (2, 3))]
    if axis != 0:
        args[1] = rand(RNG, (2, 5))
    assert_gradients(f, args, [0, 1, 2])


def test_constants_and_shapes():
    def f(x):
        n = len(x)
        m = x.shape[1]
        z = np.zeros((n, m)) + np.ones_like(x) * np.full(x.shape, 2.0)
        w = np.arange(m) + np.zeros_like(x) + np.ones(m)
        return np.sum(x * z * w) / x.size + x.ndim
    assert_gradients(f, [rand(RNG, (3, 4))], [0])


def test_float32_conversion():
    """``np.float32(x)`` rounds to float32: differences over a wider step see
    its slope, 1; the gradient has the argument's dtype."""
    def f(x):
        return np.sum(np.sin(np.float32(x)) * x) + np.float32(x[1]) * 2.0
    x = rand(RNG, (4,))
    g = s2s_ad.grad(f)(x)
    assert g.dtype == np.float64
    np.testing.assert_allclose(g, fd_gradient(f, [x], 0, h=1e-3), rtol=1e-3, atol=1e-4)


TESTED = {f"np.{n}" for n in UNARY + REDUCE} | {
    "np.sign", "np.power", "np.maximum", "np.minimum", "np.where", "np.clip", "np.dot",
    "np.matmul", "matmul", "np.outer", "np.transpose", "np.reshape", "np.ravel",
    "np.squeeze", "np.expand_dims", "np.copy", "np.concatenate", "np.stack", "shape", "len",
    "np.ndim", "np.size", "tuple", "np.zeros", "np.ones", "np.zeros_like", "np.ones_like",
    "np.full", "np.arange", "np.linspace", "np.cumsum", "index_array", "array.pow", "array.abs",
    "array.getitem", "array.setitem", "np.full_like", "np.float32"}
"""Rules tested here; test_numpy_rules_table.py tests the others (and checks
that every rule is tested in one of the two)."""
