"""An array's rows iterated over the way a ``for`` loop already reads them:
in a comprehension or generator (``sum(np.sum(r * r) for r in X)``);
``np.stack``/``np.array`` of a list of any length (grown with ``append``,
or such a comprehension); and
the builtin ``sum`` of an array expression in a function that never names
NumPy (``sum(w * w)``), whose gradient is then generated for the arguments
it is called with. Each against central differences, in the positions a
user moves code to (a helper, a loop, ``vjp``, value_and_grad, the CLI's
``-o`` file with ``--array``)."""

import subprocess
import sys

import numpy as np
import pytest

import s2s_ad
from array_oracle import fd_gradient, make_function

RNG = np.random.default_rng(11)
X = RNG.uniform(-1.5, 1.5, (4, 3))
W = RNG.uniform(-1.5, 1.5, 3)

ROWS = {
    "generator": "def f(X, w):\n    return sum(np.dot(r, w) ** 2 for r in X)\n",
    "list": "def f(X, w):\n    return np.sum(np.array([np.sum(np.sin(r) * w) for r in X]))\n",
    "zip": "def f(X, w):\n    V = X * w\n    return sum(np.sum(r * v) for r, v in zip(X, V))\n",
    "enumerate": "def f(X, w):\n    return sum(k * np.sum(r * w) for k, r in enumerate(X))\n",
    "condition": "def f(X, w):\n    return sum(np.sum(r * r) for r in X if np.sum(r) > 0.0)\n",
    "helper": "def row_cost(r, w):\n    return np.sum(np.tanh(r * w))\n\n"
              "def f(X, w):\n    return sum(row_cost(r, w) for r in X)\n",
    "in a loop": "def f(X, w):\n    s = 0.0\n    for k in range(2):\n"
                 "        s = s + sum(np.sum(r * w) * s for r in X) + 0.5\n    return s\n",
    "loop": "def f(X, w):\n    s = 0.0\n    for r in X:\n        s = s + np.dot(r, w) ** 2\n"
            "    return s\n",
}


@pytest.mark.parametrize("case", sorted(ROWS))
def test_rows_of_an_array_iterated(case):
    f = make_function("import numpy as np\n" + ROWS[case])
    args = [X.copy(), W.copy()]
    got = s2s_ad.grad(f, wrt=(0, 1))(*args)
    for k in range(2):
        np.testing.assert_allclose(got[k], fd_gradient(f, args, k), rtol=1e-5, atol=1e-7)
    value, pull = s2s_ad.vjp(f, *args)
    assert value == pytest.approx(f(*args), rel=1e-12)
    np.testing.assert_allclose(pull(1.0)[0], got[0], rtol=1e-12)


def test_rows_iterated_inside_a_helper_called_in_a_loop():
    f = make_function("import numpy as np\n" + ROWS["generator"].replace("def f", "def cost")
                      + "\ndef f(X, w):\n    t = 0.0\n    for k in range(3):\n"
                      "        t = t + cost(X, w * (k + 1.0))\n    return t\n")
    args = [X.copy(), W.copy()]
    got = s2s_ad.grad(f, wrt=1)(*args)
    np.testing.assert_allclose(got, fd_gradient(f, args, 1), rtol=1e-5, atol=1e-7)


PLAIN = {
    "sum": "def f(w):\n    return sum(w * w)\n",
    "sum plus": "def f(w, b=0.5):\n    return sum(w * w) * b + b\n",
    "generator": "def f(w):\n    return sum(x * x for x in w)\n",
    "loop": "def f(w):\n    s = 0.0\n    for x in w:\n        s += x * x\n    return s\n",
}


@pytest.mark.parametrize("case", sorted(PLAIN))
@pytest.mark.parametrize("shape", [(3,), (2, 3)])
def test_an_array_into_a_function_that_never_names_numpy(case, shape):
    if case in ("generator", "loop") and len(shape) > 1:
        pytest.skip("x * x of rows summed into a float: the function's own result is an array")
    f = make_function(PLAIN[case])
    w = RNG.uniform(-1.5, 1.5, shape)
    for _ in range(2):  # the second call takes the code the first one made
        np.testing.assert_allclose(s2s_ad.grad(f)(w), fd_gradient(f, [w], 0), rtol=1e-5)
    value, g = s2s_ad.value_and_grad(f)(w)
    assert value == pytest.approx(f(w), rel=1e-12)
    np.testing.assert_allclose(g, fd_gradient(f, [w], 0), rtol=1e-5)


def test_an_array_into_a_function_that_never_names_numpy_through_the_cli(tmp_path):
    (tmp_path / "plain.py").write_text("def loss(w):\n    return sum(w * w * w)\n")
    out = tmp_path / "grad_plain.py"
    subprocess.run([sys.executable, "-m", "s2s_ad", "grad", str(tmp_path / "plain.py") + ":loss",
                    "--array", "w", "-o", str(out)], check=True, cwd=tmp_path)
    w = np.array([0.5, -1.5, 2.0])
    code = (f"import numpy as np, sys\nsys.path.insert(0, {str(tmp_path)!r})\n"
            "from grad_plain import grad_loss\n"
            f"print(repr(grad_loss(np.array({w.tolist()!r})).tolist()))\n")
    got = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                         text=True).stdout
    np.testing.assert_allclose(eval(got), 3 * w * w, rtol=1e-12)


STACKS = {
    "append, stack": "def f(X, w):\n    ys = []\n    for r in X:\n        ys.append(np.sin(r) * w)\n"
                     "    return np.sum(np.stack(ys) ** 2)\n",
    "append, array of numbers": "def f(X, w):\n    ys = []\n    for r in X:\n"
                                "        ys.append(np.sum(np.sin(r) * w))\n"
                                "    return np.sum(np.array(ys) ** 2)\n",
    "comprehension, axis 1": "def f(X, w):\n    return np.sum(np.stack([np.sin(r) * w for r in X],"
                             " axis=1) * np.arange(4.0))\n",
    "comprehension, array": "def f(X, w):\n    return np.sum(np.array([np.sum(np.sin(r) * w) "
                            "for r in X]) ** 3)\n",
    "in a helper, in a loop": "def rows(X, w):\n    return np.stack([np.tanh(r * w) for r in X])\n\n"
                              "def f(X, w):\n    t = 0.0\n    for k in range(2):\n"
                              "        t = t + np.sum(rows(X, w + t) ** 2)\n    return t\n",
}


@pytest.mark.parametrize("case", sorted(STACKS))
def test_a_list_of_any_length_stacked(case):
    f = make_function("import numpy as np\n" + STACKS[case])
    args = [X.copy(), W.copy()]
    got = s2s_ad.grad(f, wrt=(0, 1))(*args)
    for k in range(2):
        np.testing.assert_allclose(got[k], fd_gradient(f, args, k), rtol=1e-5, atol=1e-7)
    v = RNG.normal(size=3)
    _, tangent = s2s_ad.jvp(f, wrt=1)(*args, dw=v)
    assert tangent == pytest.approx(float(fd_gradient(f, args, 1) @ v), rel=1e-5, abs=1e-7)


def test_a_stacked_list_second_order():
    f = make_function("import numpy as np\n" + STACKS["append, array of numbers"])
    g = s2s_ad.grad(f, wrt=1)
    h = s2s_ad.hessian(f, wrt=1)(X, W)
    ref = np.array([fd_gradient(lambda X_, w: g(X_, w)[k], [X, W], 1) for k in range(3)])
    np.testing.assert_allclose(h, ref, rtol=1e-5, atol=1e-6)


def test_a_join_of_a_list_of_any_length():
    # (tests/test_list_joins.py checks joins in every position)
    f = make_function("import numpy as np\ndef f(X):\n    ys = []\n    for r in X:\n"
                      "        ys.append(r * r)\n    return np.sum(np.concatenate(ys) ** 3)\n")
    np.testing.assert_allclose(s2s_ad.grad(f)(X), fd_gradient(f, [X], 0), rtol=1e-6, atol=1e-8)


def test_a_join_along_an_axis_known_only_when_the_code_runs_is_refused_located():
    f = make_function("import numpy as np\ndef f(X, k: int):\n    ys = []\n    for r in X:\n"
                      "        ys.append(r * r)\n    return np.sum(np.concatenate(ys, axis=k))\n")
    with pytest.raises(s2s_ad.SourceError, match="np.concatenate` of a list of any length") as e:
        s2s_ad.grad(f, wrt=0)(X, 0)
    assert e.value.line == 6


def test_a_chain_of_transforms_indexed_by_a_parents_array():
    # each transform composed with its parent's, found through an integer array
    # the caller passes; the rows stacked (a kinematic chain, as hand models write it)
    f = make_function(
        "import numpy as np\n"
        "def f(rel, parents):\n"
        "    absolutes = []\n"
        "    for i in range(rel.shape[0]):\n"
        "        if parents[i] == -1:\n"
        "            absolutes.append(rel[i])\n"
        "        else:\n"
        "            absolutes.append(absolutes[parents[i]] @ rel[i])\n"
        "    return np.sum(np.stack(absolutes) ** 2)\n")
    rel = RNG.uniform(-1.0, 1.0, (5, 3, 3))
    parents = np.array([-1, 0, 1, 1, 0])
    np.testing.assert_allclose(s2s_ad.grad(f, wrt=0)(rel, parents),
                               fd_gradient(f, [rel, parents], 0), rtol=1e-5, atol=1e-7)
    with pytest.raises(TypeError, match="must be an int"):
        s2s_ad.grad(f, wrt=0)(rel, parents.astype(float))


def test_a_comprehension_over_a_run_time_range_stacked():
    f = make_function(
        "import numpy as np\n"
        "def f(points, verts, corr):\n"
        "    err = np.stack([points[i] - verts[int(corr[i])] for i in range(points.shape[0])])\n"
        "    return np.sum(err * err)\n")
    points, verts = RNG.normal(size=(4, 3)), RNG.normal(size=(6, 3))
    corr = np.array([5, 0, 2, 2])
    got = s2s_ad.grad(f, wrt=(0, 1))(points, verts, corr)
    for k in range(2):
        np.testing.assert_allclose(got[k], fd_gradient(f, [points, verts, corr], k), rtol=1e-5,
                                   atol=1e-7)


def test_a_helper_whose_nested_helper_makes_the_array_it_returns():
    # `R *= s` on the result: the helper's every return is a new array (np.eye,
    # or the nested helper's own np.zeros written into)
    f = make_function(
        "import numpy as np\n"
        "def rotation(v):\n"
        "    n = np.sqrt(np.sum(v * v))\n"
        "    def build():\n"
        "        R = np.zeros((2, 2))\n"
        "        R[0, 0] = np.cos(n)\n"
        "        R[0, 1] = -np.sin(n) * v[0]\n"
        "        R[1, 0] = np.sin(n) * v[1]\n"
        "        R[1, 1] = np.cos(n)\n"
        "        return R\n"
        "    if n < 1e-4:\n"
        "        return np.eye(2)\n"
        "    return build()\n"
        "def f(v, s, p):\n"
        "    R = rotation(v)\n"
        "    R *= s\n"
        "    return np.sum((R @ p) ** 2)\n")
    args = [np.array([0.4, -0.7]), 1.3, RNG.normal(size=(2, 3))]
    got = s2s_ad.grad(f, wrt=(0, 1))(*args)
    for k in range(2):
        np.testing.assert_allclose(got[k], fd_gradient(f, args, k), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("rows", ["[r for r in M]", "[r * 2.0 for r in M]",
                                  "[M[i] for i in range(3)]", "[M[i] for i in range(len(a))]"])
def test_rows_comprehended_then_the_array_written_is_refused_located(rows):
    # `[r for r in M]` holds the rows of M themselves (views): a later write into
    # M changes them. The function has no loop statement, but the comprehension
    # is one: the write is refused as after `for r in M: rows.append(r)` (it had
    # given a wrong gradient: the stacked rows read as they were before the write)
    f = make_function("import numpy as np\ndef f(a, b):\n    M = np.outer(a, b)\n"
                      f"    rows = {rows}\n    M[0] = b\n"
                      "    return np.sum(np.stack(rows) * a) + np.sum(M)\n")
    with pytest.raises(s2s_ad.SourceError, match="`M` is assigned into") as e:
        s2s_ad.grad(f)(np.array([0.3, -0.7, 1.1]), np.array([0.2, 0.9, -0.4]))
    assert e.value.line == 3  # (where M is made: "it must start as a new array")


@pytest.mark.parametrize("held, read", [("[M[0], M[1]]", "np.stack(rows)"),
                                        ("(M[0], M.T)", "rows[0]"),
                                        ("{'r': M[1:]}", "rows['r']"),
                                        ("[[M[0]], [M[1] * 2.0]]", "rows[0][0]")])
def test_a_structure_holding_views_read_after_a_write_is_refused_located(held, read):
    # a list, tuple or dict written out holding views of M: a write into M
    # changes what it holds (it had given a wrong gradient: read as before)
    f = make_function("import numpy as np\ndef f(a, b):\n    M = np.outer(a, b)\n"
                      f"    rows = {held}\n    M[0] = b\n    return np.sum({read} * a[0])\n")
    with pytest.raises(s2s_ad.SourceError, match="`rows` cannot be read here: it holds an "
                       "array that is a view of `M`") as e:
        s2s_ad.grad(f)(np.array([0.3, -0.7, 1.1]), np.array([0.2, 0.9, -0.4]))
    assert e.value.line == 6


def test_views_read_before_the_write_and_fresh_comprehensions_are_accepted():
    f = make_function("import numpy as np\ndef f(a, b, d):\n    M = np.outer(a, b)\n"
                      "    rows = [M[0], M[1]]\n    t = np.sum(np.stack(rows) * a[:2, None])\n"
                      "    cols = np.concatenate([np.arange(c + 1, c + 2) for c in range(d - 1)])\n"
                      "    M[0] = b\n    M[1, cols] = a[cols] * 2.0\n"
                      "    return t + np.sum(M * M)\n")
    a, b = np.array([0.3, -0.7, 1.1]), np.array([0.2, 0.9, -0.4])
    for i in range(2):
        np.testing.assert_allclose(s2s_ad.grad(f, wrt=(0, 1))(a, b, 3)[i],
                                   fd_gradient(f, [a, b, 3], i), rtol=1e-6, atol=1e-8)


HELPERS = ("def rows_of(M):\n    out = []\n    for r in M:\n        out.append(r)\n    return out\n"
           "def pair(M):\n    return M[0], M[1]\n"
           "def same(M):\n    return M\n"
           "def first_row(M):\n    return M[0]\n"
           "def scaled(M):\n    return M * 2.0\n"
           "def total(M):\n    return np.sum(M)\n")


@pytest.mark.parametrize("call, read", [("xs = rows_of(M)", "np.stack(xs)"),
                                        ("u, v = pair(M)", "u + v"), ("N = same(M)", "N"),
                                        ("r = first_row(M)", "r")])
def test_a_write_into_an_array_a_helper_may_have_returned_is_refused_located(call, read):
    # the helper's result is M (or its rows) itself: M[0] = v changes it too,
    # which the gradient did not see (a wrong gradient, straight-line code)
    f = make_function("import numpy as np\n" + HELPERS + "def f(a, b, s):\n"
                      f"    M = np.outer(a, b)\n    {call}\n    M[0] = b * s\n"
                      f"    return np.sum({read} * a)\n")
    with pytest.raises(s2s_ad.SourceError, match="`M` was passed to `") as e:
        s2s_ad.grad(f)(np.array([0.3, -0.7, 1.1]), np.array([0.2, 0.9, -0.4]), 0.4)
    assert e.value.line == 20 and "np.copy(M)" in str(e.value)


def test_a_write_after_a_helper_returning_a_new_array_or_a_number_is_accepted():
    f = make_function("import numpy as np\n" + HELPERS + "def f(a, b, s):\n"
                      "    M = np.outer(a, b)\n    N = scaled(M)\n    t = total(M)\n"
                      "    M[0] = b * s\n    return np.sum(N * a) * t + np.sum(M * M)\n")
    args = [np.array([0.3, -0.7, 1.1]), np.array([0.2, 0.9, -0.4]), 0.4]
    for i, g in enumerate(s2s_ad.grad(f, wrt=(0, 1, 2))(*args)):
        np.testing.assert_allclose(g, fd_gradient(f, args, i), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("held, read", [("[M, M * 2.0]", "np.stack(rows)"),
                                        ("(M, 0.5)", "rows[0]"), ("{'m': M}", "rows['m']"),
                                        ("[[M], [M.sum()]]", "rows[0][0]")])
def test_a_structure_holding_the_array_written_into_sees_the_write(held, read):
    # `rows = [M]` holds M itself: after M[0] = v, rows[0] is the written array
    # (it had been read as before the write, a wrong gradient)
    f = make_function("import numpy as np\ndef f(a, b, s):\n    M = np.outer(a, b)\n"
                      f"    rows = {held}\n    M[0] = b * s\n    M[1, 2] += s\n"
                      f"    return np.sum({read} * a[0])\n")
    args = [np.array([0.3, -0.7, 1.1]), np.array([0.2, 0.9, -0.4]), 0.4]
    for i, g in enumerate(s2s_ad.grad(f, wrt=(0, 1, 2))(*args)):
        np.testing.assert_allclose(g, fd_gradient(f, args, i), rtol=1e-6, atol=1e-8)
