"""Writes into arrays of integers: NumPy converts a float written into an
integer array to an integer, which has no derivative, so such a write is
refused, located, wherever the function itself made the array from ints
(``np.arange(n)``, ``np.array([1, 2])``, ``np.full(n, 2)``, their
``*_like`` and products with ints); the float version of each differentiates
as usual, checked against central differences."""

import numpy as np
import pytest

import s2s_ad
from array_oracle import make_function

TESTED = {"np.issubdtype", "dtype.floating", "array.astype"}
"""The rules these tests exercise (tests/test_numpy_rules_table.py checks
every NumPy rule is tested somewhere)."""

MAKERS = ["np.arange(3)", "np.array([1, 2, 3])", "np.full(3, 2)",
          "np.zeros_like(np.arange(3))", "np.arange(3) * 2", "np.arange(n)"]
FLOATS = ["np.arange(3.0)", "np.array([1.0, 2.0, 3.0])", "np.full(3, 2.0)",
          "np.zeros_like(np.arange(3.0))", "np.arange(3) * 2.0", "np.arange(n, dtype=float)"]
BODIES = {
    "write": "    z = {make}\n    z[0] = x[0]\n    return np.sum(z * x)\n",
    "augmented": "    z = {make}\n    z[1] += x[1] * 0.5\n    return np.sum(z * x)\n",
    "loop": "    z = {make}\n    for i in range(2):\n        z[i] = x[i] * x[2]\n"
            "    return np.sum(z * x)\n",
}


def _fd(f, x, n):
    out = np.zeros_like(x)
    for i in range(x.size):
        up, down = x.copy(), x.copy()
        up[i] += 1e-6
        down[i] -= 1e-6
        out[i] = (f(up, n) - f(down, n)) / 2e-6
    return out


@pytest.mark.parametrize("body", sorted(BODIES))
@pytest.mark.parametrize("make", MAKERS)
def test_a_float_written_into_integers_is_refused_there(make, body):
    f = make_function("import numpy as np\ndef f(x, n: int = 3):\n" + BODIES[body].format(make=make))
    # (in a loop, an array not made by a constructor is refused before that)
    why = "holds integers|must start as a new array" if body == "loop" else "holds integers"
    with pytest.raises(s2s_ad.SourceError, match=why) as info:
        s2s_ad.grad(f)(np.array([1.7, 2.3, 0.4]), 3)
    assert info.value.line in (3, 4, 5)


@pytest.mark.parametrize("body", ["write", "augmented"])
@pytest.mark.parametrize("make", FLOATS)
def test_the_float_array_differentiates(make, body):
    f = make_function("import numpy as np\ndef f(x, n: int = 3):\n" + BODIES[body].format(make=make))
    x = np.array([1.7, 2.3, 0.4])
    np.testing.assert_allclose(s2s_ad.grad(f)(x, 3), _fd(f, x, 3), rtol=1e-6, atol=1e-8)


def test_an_int_written_into_integers_is_kept():
    f = make_function("import numpy as np\ndef f(x):\n    z = np.arange(3)\n    z[0] = 5\n"
                      "    return np.sum(z * x)\n")
    x = np.array([1.7, 2.3, 0.4])
    np.testing.assert_allclose(s2s_ad.grad(f)(x), _fd(lambda v, n: f(v), x, 3), rtol=1e-6)


CALLER_ARRAYS = {
    "copy": "    z = np.copy(idx)\n    z[0] = x[0]\n    return np.sum(z * x)\n",
    "like": "    z = np.zeros_like(idx)\n    z[1] += x[1] * 0.5\n    return np.sum(z * x)\n",
    "loop": "    z = np.ones_like(idx)\n    for i in range(2):\n        z[i] = x[i] * x[2]\n"
            "    return np.sum(z * x)\n",
    "branch": "    z = np.copy(idx)\n    if x[0] > 0.0:\n        z[0] = x[0] * x[1]\n"
              "    return np.sum(z * x)\n",
    "arithmetic": "    z = idx * 2\n    z[0] = x[0]\n    return np.sum(z * x)\n",
}


@pytest.mark.parametrize("body", sorted(CALLER_ARRAYS))
def test_an_integer_array_the_caller_passes_written_into_is_refused_where_it_runs(body):
    # its dtype is known only when the code runs: the generated code checks it
    # before the write; the same code given floats differentiates
    f = make_function("import numpy as np\ndef f(x, idx):\n" + CALLER_ARRAYS[body])
    x = np.array([1.7, 2.3, 0.4])
    for run in (s2s_ad.grad(f, wrt="x"), lambda *a: s2s_ad.vjp(f, *a)[1](1.0),
                lambda *a: s2s_ad.jvp(f, wrt="x")(*a, dx=np.ones(3))):
        with pytest.raises(TypeError, match="array of integers"):
            run(x, np.arange(3))
    idx = np.arange(3.0)
    np.testing.assert_allclose(s2s_ad.grad(f, wrt="x")(x, idx),
                               _fd(lambda v, n: f(v, idx), x, 3), rtol=1e-6, atol=1e-8)


def test_a_float_array_written_into_needs_no_check():
    # np.zeros(n), arithmetic with a float, np.exp: the code fixes a float dtype
    for make in ("np.zeros(3)", "idx * 1.0", "np.exp(idx)", "np.zeros_like(x)", "x / idx"):
        f = make_function("import numpy as np\ndef f(x, idx):\n    z = " + make +
                          "\n    z[0] = x[0]\n    return np.sum(z * x)\n")
        src = s2s_ad.grad(f, wrt="x").source if hasattr(s2s_ad.grad(f, wrt="x"), "source") \
            else None
        idx = np.arange(1, 4)
        x = np.array([1.7, 2.3, 0.4])
        np.testing.assert_allclose(s2s_ad.grad(f, wrt="x")(x, idx),
                                   _fd(lambda v, n: f(v, idx), x, 3), rtol=1e-6, atol=1e-8)
        if src is not None:
            assert "into an array of integers" not in src, make


def test_a_function_testing_a_dtype_itself():
    f = make_function("import numpy as np\ndef f(x):\n    if not np.issubdtype(x.dtype, "
                      "np.floating):\n        raise TypeError('floats please')\n"
                      "    return np.sum(np.sin(x) * x)\n")
    x = np.array([0.3, -1.2])
    np.testing.assert_allclose(s2s_ad.grad(f)(x), np.sin(x) + x * np.cos(x), rtol=1e-12)
    with pytest.raises(TypeError, match="floats please"):
        s2s_ad.grad(f)(np.arange(2))


@pytest.mark.parametrize("test, floats", [("x.dtype.kind in 'fc'", True),
                                          ('x.dtype.kind not in "fc"', False),
                                          ("x.dtype.kind == 'f'", True),
                                          ("x.dtype.kind != 'f'", False)])
def test_a_function_testing_a_dtype_kind(test, floats):
    # what the generated check spells: a function may spell it too
    f = make_function("import numpy as np\ndef f(x, y):\n    s = np.sum(y * y)\n"
                      f"    if {test}:\n        s = s + np.sum(np.sin(x) * y)\n"
                      "    return s\n")
    x, y = np.array([0.3, -1.2]), np.array([0.5, 2.0])
    g = s2s_ad.grad(f, wrt=(0, 1))(x, y)
    np.testing.assert_allclose(g[0], _fd(lambda v, n: f(v, y), x, 2) if floats else 0 * x,
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(g[1], _fd(lambda v, n: f(x, v), y, 2), rtol=1e-6, atol=1e-8)
    xi = np.array([1, 2])  # an integer array: the other branch, as f takes it
    np.testing.assert_allclose(s2s_ad.grad(f, wrt="y")(xi, y), _fd(lambda v, n: f(xi, v), y, 2),
                               rtol=1e-6, atol=1e-8)


def test_another_dtype_kind_is_refused_located():
    f = make_function("import numpy as np\ndef f(x):\n    if x.dtype.kind in 'iu':\n"
                      "        return np.sum(x)\n    return np.sum(x * x)\n")
    with pytest.raises(s2s_ad.S2SError) as e:
        s2s_ad.grad(f)(np.array([1.0, 2.0]))
    message = str(e.value)
    assert ":3:" in message and "^" in message and "x.dtype.kind in 'iu'" in message
    assert "`x.dtype.kind in 'fc'`" in message


def test_the_generated_check_is_a_kind_test():
    # np.issubdtype makes several calls; the kind test is one string lookup
    f = make_function("import numpy as np\ndef f(x, idx):\n    z = np.copy(idx)\n"
                      "    z[0] = x[0] * x[1]\n    return np.sum(z * x)\n")
    src = s2s_ad.gradient_source(f, wrt="x")
    assert "if z.dtype.kind not in 'fc':" in src and "np.issubdtype(" not in src


def test_the_check_reads_back_for_second_derivatives():
    f = make_function("import numpy as np\ndef f(x, idx):\n    z = np.copy(idx)\n"
                      "    z[0] = x[0] * x[1]\n    return np.sum(z * x)\n")
    x, idx = np.array([1.7, 2.3, 0.4]), np.arange(3.0)
    h = s2s_ad.hessian(f, wrt="x")(x, idx)
    g = s2s_ad.grad(f, wrt="x")
    ref = np.array([_fd(lambda v, n: g(v, idx)[k], x, 3) for k in range(3)])
    np.testing.assert_allclose(h, ref, rtol=1e-5, atol=1e-6)


def test_a_loop_giving_a_float_array_one_of_unfixed_dtype_is_refused():
    # the writes of the first iteration took `z` to be floating, as np.zeros made it;
    # the next iteration's `z` follows the caller's array
    f = make_function("import numpy as np\ndef f(x, idx):\n    z = np.zeros(3)\n"
                      "    for i in range(2):\n        z[i] = x[i]\n        z = np.copy(idx)\n"
                      "    return np.sum(z * x)\n")
    with pytest.raises(s2s_ad.SourceError, match="dtype the code does not fix|bound once"):
        s2s_ad.grad(f, wrt="x")(np.array([1.7, 2.3, 0.4]), np.arange(3))


def test_astype_float_makes_a_float_array_to_write_into():
    # the rewrite the refusals suggest: `.astype(float)`; grad, jvp and the
    # Hessian against central differences; float32 kept; an int dtype refused
    f = make_function("import numpy as np\ndef f(x, idx):\n    z = idx.astype(float)\n"
                      "    z[0] = x[0] * x[1]\n    return np.sum(z * x) + np.sum(x.astype(np.float64) ** 3)\n")
    x, idx = np.array([1.7, 2.3, 0.4]), np.arange(3)
    g = s2s_ad.grad(f, wrt="x")
    np.testing.assert_allclose(g(x, idx), _fd(lambda v, n: f(v, idx), x, 3), rtol=1e-6)
    v = np.array([0.3, -1.1, 0.8])
    np.testing.assert_allclose(s2s_ad.jvp(f, wrt="x")(x, idx, dx=v)[1],
                               _fd(lambda u, n: f(u, idx), x, 3) @ v, rtol=1e-6)
    ref = np.array([_fd(lambda u, n: g(u, idx)[k], x, 3) for k in range(3)])
    np.testing.assert_allclose(s2s_ad.hessian(f, wrt="x")(x, idx), ref, rtol=1e-5, atol=1e-6)
    h = make_function("import numpy as np\ndef f(x):\n    return np.sum(x.astype(np.float32) * x)\n")
    assert s2s_ad.grad(h)(x.astype(np.float32)).dtype == np.float32
    # an integer dtype: a step function of x, no derivative (docs/numpy.md, integer casts)
    k = make_function("import numpy as np\ndef f(x):\n    return np.sum(x.astype(int) * x)\n")
    np.testing.assert_allclose(s2s_ad.grad(k)(x), _fd(lambda u, n: k(u), x, 3), rtol=1e-6)


@pytest.mark.parametrize("made", ["idx.astype(float)", "(x * 2.0).astype(float)", "x.astype(float)"])
def test_astype_float_written_in_a_loop(made):
    # `.astype(float)` makes a new array (a copy even of a float array), so a
    # loop may write into it: it was refused ("must start as a new array"),
    # though the refusals of integer arrays suggest exactly this rewrite; the
    # caller's array (`x.astype(float)` of a float x) is left as it was
    f = make_function("import numpy as np\ndef f(x, idx):\n"
                      f"    z = {made}\n    for i in range(len(x)):\n"
                      "        if x[i] > 0.0:\n            z[i] = z[i] * x[i] + 1.0\n"
                      "    return np.sum(z * x)\n")
    from array_oracle import fd_gradient
    x, idx = np.array([0.5, -1.2, 2.0]), np.arange(3)
    given = x.copy()
    np.testing.assert_allclose(s2s_ad.grad(f, wrt=0)(given, idx), fd_gradient(f, [x, idx], 0),
                               rtol=1e-6, atol=1e-8)
    assert np.array_equal(given, x)
    value, pull = s2s_ad.vjp(f, x.copy(), idx)
    np.testing.assert_allclose(pull(1.0)[0], fd_gradient(f, [x, idx], 0), rtol=1e-6, atol=1e-8)
