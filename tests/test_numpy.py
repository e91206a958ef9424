"""Array programs end to end: indexing, subscript assignment, dtypes,
aliasing, refusals and the examples, against finite differences."""

import math

import numpy as np
import pytest

import s2s_ad
from array_oracle import assert_gradients, fd_gradient, make_function, rand
from s2s_ad import SourceError

RNG = np.random.default_rng(7)


@pytest.mark.parametrize("index", ["x[1]", "x[1, 2]", "x[1:-1]", "x[:, 0]", "x[::2]",
                                   "x[-1, ::-2]", "x[..., 1]", "x[:, None, 1]", "x[idx]",
                                   "x[idx, 1:]", "x[x > 0.2]", "x[i]", "x[i, i + 1]",
                                   "x[[0, 3, 0], 1:3]"])
def test_indexing(index):
    f = make_function(f"def f(x, i: int, idx):\n    t = {index}\n"
                      "    return np.sum(np.sin(t) * (1 + t))\n")
    x = rand(RNG, (4, 5))
    idx = np.array([0, 2, 2, 3, 0])  # repeated indices must accumulate
    assert_gradients(f, [x, 2, idx], [0])


def test_repeated_integer_indices_accumulate():
    def f(x, idx):
        return np.sum(x[idx] ** 2)
    x = np.array([1.0, 2.0, 3.0])
    g = s2s_ad.grad(f)(x, np.array([0, 0, 2, 0]))
    np.testing.assert_allclose(g, [6.0, 0.0, 6.0])


def test_subscript_assignment():
    def f(x, w, i: int):
        y = np.zeros(6)
        y[0] = x[0] * w
        y[i] = y[0] * 2 + x[1]
        y[2:4] = np.sin(x[2:4])
        y[4:] += x[:2] * w
        y[y > 100.0] = 0.0
        return np.sum(y * y)
    assert_gradients(f, [rand(RNG, (4,)), 1.3, 5], [0, 1])


def test_assignment_keeps_overwritten_value_the_reverse_sweep_reads():
    def f(x):
        y = x * 1.0
        s = np.sum(y * y)
        y[1] = 5.0
        return s + np.sum(y * x)
    assert_gradients(f, [rand(RNG, (4,))], [0])
    text = s2s_ad.source_of(s2s_ad.grad(f))
    assert "np.copy(y)" in text  # the old y is read by the reverse sweep


def test_assignment_in_place_when_nothing_reads_the_old_value():
    def f(x):
        y = np.zeros(3)
        y[0] = x[0]
        y[1] = x[1] * 2
        return np.sum(y * y)
    text = s2s_ad.source_of(s2s_ad.grad(f))
    assert "np.copy(y)" not in text and "    y[1] = " in text
    assert_gradients(f, [rand(RNG, (3,))], [0])


def test_augmented_assignment_on_2d():
    def f(W, x):
        A = np.zeros((3, 3))
        A[0, :] += W[1] * x
        A[:, 1] -= x ** 2
        A[1, 1] *= 3.0
        return np.sum(np.tanh(A))
    assert_gradients(f, [rand(RNG, (3, 3)), rand(RNG, (3,))], [0, 1])


@pytest.mark.parametrize("body, message", [
    ("x[0] = 1.0\n    return np.sum(x)", "caller passed in"),
    ("y = x[1:]\n    y[0] = 1.0\n    return np.sum(y)", "caller passed in"),
    ("z = x * 2\n    y = z[1:]\n    y[0] = 1.0\n    return np.sum(y)", "view of another array"),
    ("y = np.zeros(3)\n    z = y[:2]\n    y[0] = x[0]\n    return np.sum(z)", "cannot be read here"),
    ("return np.sum(x, axis=(0, n))", "must be a constant"),
    ("return np.linalg.eig(x)", "`np.linalg.eig` has no derivative rule"),
    ("return np.partition(x, 1)", "`np.partition` has no derivative rule.*custom_rules.md"),
    ("return x.sort()", "sort"),
    # without `axis`, where no check can go before it (test_numpy_forms.py: elsewhere)
    ("return sum([np.linalg.norm(r, 1) for r in x])", "give `axis`"),
    ("return np.linalg.norm(x, ord=2) if n > 0 else 0.0", "spectral norm"),
    ("return np.linalg.norm(x, axis=n)", "must be a constant"),
    # a shape is a tuple: it would broadcast (x * x.shape has another shape than x)
    ("return np.sum(x * x.shape)", "is a shape, a tuple of ints"),
    ("return np.sum(np.exp(x) * np.shape(x))", "is a shape, a tuple of ints"),
    ("s = x.shape\n    return np.mean(np.sin(x) + s)", "is a shape, a tuple of ints"),
])
def test_refusals(body, message):
    f = make_function(f"def f(x, idx, n: int):\n    {body}\n")
    with pytest.raises(SourceError, match=message):
        # (refused when the gradient is asked for, or, where the method a
        # parameter is called with depends on its kind, at its first call)
        s2s_ad.grad(f)(np.array([3.0, 1.0, 2.0]), np.array([0, 1]), 2)


def test_write_at_an_index_parameter_checked_where_it_runs():
    """`y[idx] = v` with `idx` a parameter not annotated `: int`: an integer
    array there could repeat a position (NumPy keeps the last write): checked
    where the code runs to be an int, a TypeError naming it otherwise."""
    f = make_function("def f(x, idx, n: int):\n    y = np.zeros(3)\n    y[idx] = x[:2]\n"
                      "    return np.sum(y)\n")
    with pytest.raises(TypeError, match="`idx` indexes `y` in an assignment .* twice"):
        s2s_ad.grad(f)(np.array([1.0, 2.0]), np.array([0, 0]), 1)


def identity(a):
    return a


def test_assignment_into_a_helpers_result_is_refused():
    def f(x):
        y = identity(x)
        y[0] = 1.0
        return np.sum(y)
    with pytest.raises(SourceError, match="created elsewhere"):
        s2s_ad.grad(f)


def test_float32_gives_float32():
    from examples_numpy import mlp_args
    from mlp import mlp_loss
    args = [a.astype(np.float32) for a in mlp_args(RNG, 8, 5, 6, 2)]
    grads = s2s_ad.grad(mlp_loss, wrt=[0, 1, 2, 3])(*args)
    for g, a in zip(grads, args):
        assert g.dtype == np.float32 and g.shape == a.shape


@pytest.mark.parametrize("body", [
    "return np.sum(x * np.arange(5))",                          # int array: float64 inside
    "z = np.zeros(5)\n    z = z + x\n    return np.sum(z * y)",  # float64 constant
    "return np.sum(x * y)",                                      # y is float64 here
    "s = 0.0\n    for k in range(3):\n        s = s + np.sum(x * w64)\n    return s",
])
def test_float32_argument_gets_float32_gradient_when_the_function_promotes(body):
    f = make_function(f"def f(x, y, w64):\n    {body}\n")
    x = rand(RNG, (5,)).astype(np.float32)
    y, w64 = rand(RNG, (5,)), rand(RNG, (5,))
    gx, gy = s2s_ad.grad(f, wrt=[0, 1])(x, y, w64)
    assert gx.dtype == np.float32 and gy.dtype == np.float64
    x64 = x.astype(np.float64)
    np.testing.assert_allclose(gx, fd_gradient(f, [x64, y, w64], 0), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("expr", ["np.sum(x * y)", "np.max(x)", "np.mean(np.maximum(x, 0.0))",
                                  "np.sum(np.where(x > 0, x, y))", "np.prod(x[:3])",
                                  "np.sum(x[idx])", "np.sum(np.outer(x, y))",
                                  "np.sum(2.0 ** x + np.power(3.0, y))"])
def test_float32_dtypes(expr):
    f = make_function(f"def f(x, y, idx):\n    return {expr}\n")
    x = rand(RNG, (5,)).astype(np.float32)
    y = rand(RNG, (5,)).astype(np.float32)
    gx, gy = s2s_ad.grad(f, wrt=[0, 1])(x, y, np.array([1, 1, 2]))
    assert gx.dtype == np.float32 and gy.dtype == np.float32


def test_seed_array_is_not_mutated():
    def f(x, y):
        z = x + y
        w = z[0] + np.copy(z)
        return w
    x, y = rand(RNG, (4,)), rand(RNG, (4,))
    seed = np.ones(4)
    g = s2s_ad.grad(f, wrt=[0, 1])(x, y, dw=seed)
    np.testing.assert_array_equal(seed, np.ones(4))
    # d(sum w)/dx: each z_k once, plus z_0 four times
    np.testing.assert_allclose(g[0], [5.0, 1.0, 1.0, 1.0])
    g2 = s2s_ad.grad(f, wrt=[0, 1])(x, y, dw=seed)
    np.testing.assert_allclose(g2[0], g[0])


def test_array_result_seed_default_is_sum():
    def f(x):
        return np.sin(x) * 2
    x = rand(RNG, (3,))
    np.testing.assert_allclose(s2s_ad.grad(f)(x), 2 * np.cos(x))
    v = rand(RNG, (3,))
    np.testing.assert_allclose(s2s_ad.grad(f)(x, dout=v), 2 * np.cos(x) * v)


def test_scalar_parameter_in_array_function():
    def f(x, a: float, b=2.0):
        return np.sum(np.exp(a * x) + b * x)
    assert_gradients(f, [rand(RNG, (2, 3)), 0.3, 2.0], [0, 1, 2])


def test_unused_array_parameter_gets_zeros_of_its_shape():
    def f(x, y):
        return np.sum(x)
    g = s2s_ad.grad(f, wrt=[0, 1])(np.ones((2, 2)), np.ones((3,), np.float32))
    assert g[1].shape == (3,) and g[1].dtype == np.float32 and not g[1].any()


def test_generated_code_imports_numpy_under_users_alias():
    import numpy as npy
    f = make_function("def f(x):\n    return npy.sum(npy.exp(x))\n", env={"npy": npy})
    text = s2s_ad.source_of(s2s_ad.grad(f))
    assert "import numpy as npy" in text and "s2s_ad" not in text
    assert "np." not in text.replace("npy.", "")


def test_scalar_code_has_no_unbroadcast():
    def f(x, y):
        return math.sin(x * y) + x
    text = s2s_ad.source_of(s2s_ad.grad(f, wrt=[0, 1]))
    assert "unbroadcast" not in text and "import numpy" not in text


# -- examples ---------------------------------------------------------------------

def test_mlp(golden):
    from examples_numpy import mlp_args
    from mlp import mlp_loss
    assert_gradients(mlp_loss, mlp_args(RNG, 6, 4, 5, 3), [0, 1, 2, 3])
    golden("mlp.py.txt", s2s_ad.gradient_source(mlp_loss, wrt=[0, 1, 2, 3]))


def test_softmax_cross_entropy(golden):
    from softmax_xent import softmax_xent
    X, W = rand(RNG, (5, 4)), rand(RNG, (4, 3))
    T = np.eye(3)[RNG.integers(0, 3, 5)]
    assert_gradients(softmax_xent, [W, X, T], [0, 1])
    # stable: huge logits do not overflow
    g = s2s_ad.grad(softmax_xent)(W * 1e3, X, T)
    assert np.all(np.isfinite(g))
    golden("softmax_xent.py.txt", s2s_ad.gradient_source(softmax_xent, wrt=[0]))


def test_tied_weights(golden):
    from tied_weights import net, tied
    W, V = rand(RNG, (4, 3)), rand(RNG, (2, 4))
    x, t = rand(RNG, (3,)), rand(RNG, (2,))
    assert_gradients(net, [W, V, x, t], [0, 1, 2])
    assert_gradients(tied, [W, x, rand(RNG, (3,))], [0, 1])
    text = s2s_ad.gradient_source(tied, wrt=[0])
    assert "dW = dW + " in text  # two contributions to W's gradient
    golden("tied_weights_net.py.txt", s2s_ad.gradient_source(net, wrt=[0, 1]))
    golden("tied_weights_tied.py.txt", text)


def test_explain_and_graph_show_array_code():
    def f(x, w, i: int):
        y = np.zeros(3)
        y[i] = x[0] * w
        t = np.concatenate([y, x * x])
        return np.sum(t[x > 0.0] ** 2) + np.sum(x[[0, 0]] @ w)
    text = s2s_ad.explain(f, wrt=[0, 1])
    assert "y[i] = x[0] * w" in text and "scatter(" in text
    assert "digraph" in s2s_ad.graph_dot(f, wrt=[0, 1], backward=True)


def _net(W, x):
    return np.tanh(W @ x)


def test_vjp_value_and_grad_and_helpers_with_arrays():
    def f(W, x):
        y = np.zeros(3)
        y[0] = np.sum(W[0] * x)
        return _net(W, x) + y

    def loss(W, x):
        h = _net(W, x)
        return np.sum(h * h) + np.sum(_net(W, x * 2))

    W, x = rand(RNG, (3, 4)), rand(RNG, (4,))
    ct = rand(RNG, (3,))
    value, vjp_fn = s2s_ad.vjp(f, W, x)
    np.testing.assert_allclose(value, f(W, x))
    gW, gx = vjp_fn(ct)
    weighted = make_function("def g(W, x):\n    return np.sum(f(W, x) * ct)\n", "g",
                             env={"f": f, "ct": ct})
    np.testing.assert_allclose(gW, fd_gradient(weighted, [W, x], 0), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(gx, fd_gradient(weighted, [W, x], 1), rtol=1e-5, atol=1e-7)
    value, (gW, gx) = s2s_ad.value_and_grad(loss, wrt=[0, 1])(W, x)
    np.testing.assert_allclose(value, loss(W, x))
    assert_gradients(loss, [W, x], [0, 1])


def test_numpy_with_a_loop_over_an_argument_bound():
    f = make_function("def f(x, n: int):\n    s = 0.0\n    for i in range(n):\n"
                      "        s = s + np.sum(x * i)\n    return s\n")
    assert_gradients(f, [rand(RNG, (3,)), 4], [0])


def test_numpy_page_shows_the_generated_tied_weights_code():
    import os
    from tied_weights import tied
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(root, "docs", "numpy.md"), encoding="utf-8") as f:
        page = f.read()
    text = s2s_ad.gradient_source(tied, wrt=[0])
    assert text[text.index("def grad_tied"):].rstrip() in page


@pytest.mark.parametrize("body", [
    "c = np.array([[1.0, 2.0], [3.0, -4.0]])\n    return np.sum(np.tanh(c @ x[:2]))",
    "idx = np.array([0, 0, 2])\n    return np.sum(x[idx] ** 2)",           # repeats accumulate
    "v = np.array([a, a * x[0], 2.0])\n    return np.sum(v ** 2)",
    "M = np.array([[a, x[1]], (x[0], 1.0)])\n    return np.sum(M @ M)",
    "y = np.asarray(x)\n    z = np.array(x)\n    return np.sum(y * z * a)",
    "s = 0.0\n    for k in range(2):\n        s = s + np.sum(np.array([x[k], a]) ** 3)\n    return s",
    "y = np.array(x)\n    for k in range(1, 4):\n        y[k] = y[k - 1] * a\n    return np.sum(y)",
])
def test_np_array_of_lists_and_arrays(body):
    f = make_function(f"def f(x, a):\n    {body}\n")
    assert_gradients(f, [rand(RNG, (4,)), 0.7], [0, 1])


def test_np_array_with_dtype_is_refused_with_its_location():
    f = make_function("def f(x):\n    c = np.array([1, 2], dtype=float)\n    return np.sum(c * x)\n")
    with pytest.raises(SourceError, match=r"2:\d+: .*takes one argument here") as e:
        s2s_ad.grad(f)
    assert "^" in str(e.value)


@pytest.mark.parametrize("call", ["np.linalg.norm(x)", "np.linalg.norm(x, axis=1)",
                                  "np.linalg.norm(x, None, 0, True)",
                                  "np.linalg.norm(x, ord=2, axis=-1)",
                                  "np.linalg.norm(x[0])"])
def test_linalg_norm_is_the_two_norm(call):
    f = make_function(f"def f(x):\n    return np.sum(np.sin({call}))\n")
    x = rand(RNG, (3, 4))
    assert_gradients(f, [x], [0])


def test_a_square_gives_its_factor_to_the_adjoint(monkeypatch):
    """The adjoint of x ** 2 and np.square(x) is g * 2 * x, the factor on the
    adjoint (a number, or an unspread row of sums: the smaller array), not
    g * (2 * x): against finite differences, and bit for bit the product
    written the other way (doubling is exact)."""
    f = make_function("def f(x, w):\n"
                      "    s = np.sum(x ** 2, axis=1) * w + np.square(x)[:, 0]\n"
                      "    return np.sum(s) + np.mean((x - 1.0) ** 2)\n")
    args = [rand(RNG, (4, 3)), rand(RNG, (4,))]
    assert_gradients(f, args, [0, 1])
    factored = s2s_ad.gradient_source(f, wrt=[0, 1])
    code = "\n".join(line.split("#")[0] for line in factored.splitlines())
    assert "* (2 * " not in code and "* 2 * " in code
    from s2s_ad.reverse import arrays
    monkeypatch.setattr(arrays, "factor_first", lambda e: e)
    plain = s2s_ad.gradient_source(f, wrt=[0, 1])
    assert "* (2 * " in plain
    results = []
    for text in (factored, plain):
        namespace = {}
        exec(compile(text, "<generated>", "exec"), namespace)
        results.append(namespace["grad_f"](*args))
    for a, b in zip(*results):
        assert np.array_equal(a, b)
