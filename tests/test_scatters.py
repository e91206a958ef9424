"""Reads of one array by several indices: the adjoints added into one array
in place (``add_scattered``, s2s_ad/reverse/scatters.py) instead of a
``scatter`` of zeros per read and a sum. Each gradient against central
differences, also where the fusion must not happen (the adjoint read in
between), with repeated integer-array indices, new axes, in loops and
helpers, through vjp, and on Dask arrays."""

import re

import numpy as np
import pytest

import s2s_ad
from array_oracle import assert_gradients, fd_gradient, make_function

RNG = np.random.default_rng(31)

CASES = {
    "slices": ("def f(c):\n    return np.sum(np.sin(c[0:3]) * c[3:6]) + c[6] ** 2 * c[7]\n",
               [(9,)]),
    "repeated_index": ("def f(x):\n    i = np.array([0, 0, 2])\n"
                       "    return np.sum(x[i] ** 2) + np.sum(x[1:] * x[0]) + x[2] * x[i][1]\n",
                       [(4,)]),
    "argsort_index": ("def f(x, y):\n    i = np.argsort(y, axis=1)\n"
                      "    return np.sum(x[i] * x[0]) + x[1, 0] * np.sum(x[i][0])\n",
                      [(3, 2), (2, 3)]),
    "gates": ("def f(g, c):\n    b = c.shape[0]\n"
              "    return np.sum(np.tanh(g[0:b]) * c + g[b:2 * b] * g[2 * b:3 * b] + np.sin(g[3 * b:]))\n",
              [(8,), (2,)]),
    "gates_rows": ("def gate(z, b):\n    return np.tanh(z[:b]) * z[b:]\n"
                   "def f(g, c):\n    s = 0.0\n    for k in range(2):\n"
                   "        s = s + np.sum(gate(g * c[k], len(c)) ** 2)\n    return s\n",
                   [(4, 3), (2, 3)]),
    "gates_helper_of_helper": (
        "def cell(z, h):\n    b = len(h)\n    f = 1.0 / (1.0 + np.exp(-z[:b]))\n"
        "    u = np.tanh(z[b:2 * b])\n    return f * h + (1.0 - f) * u * z[2 * b:]\n"
        "def step(w, h):\n    return cell(np.concatenate((h, h, h)) * w, h)\n"
        "def f(w, h):\n    for k in range(3):\n        h = step(w, h)\n    return np.sum(h * h)\n",
        [(9,), (3,)]),
    "gates_branch": ("def gate(z, b):\n    return np.sum(np.tanh(z[:b]) * z[b:])\n"
                     "def f(g, c):\n    b = c.shape[0]\n    if np.sum(c) > 0:\n"
                     "        s = gate(g * c[0], b)\n    else:\n"
                     "        s = gate(np.sin(g), b) * c[1]\n    return s * s\n",
                     [(4,), (2,)]),
    "gates_branch_else": ("def gate(z, b):\n    return np.sum(np.tanh(z[:b]) * z[b:])\n"
                          "def f(g, c):\n    b = c.shape[0]\n    if np.sum(c) > 5:\n"
                          "        s = gate(g * c[0], b)\n    else:\n"
                          "        s = gate(np.sin(g), b) * c[1]\n    return s * s\n",
                          [(4,), (2,)]),
    "gates_dropped": ("def halves(z, c):\n    b = len(c)\n    return z[:b], np.sin(z[b:])\n"
                      "def f(g, c):\n    lo, hi = halves(g, c)\n    return np.sum(hi * hi)\n",
                      [(5,), (2,)]),
    "gap": ("def f(g, c):\n    b = c.shape[0]\n"
            "    return np.sum(g[0:b] * c) + np.sum(np.sin(g[b + 1:])) * g[b + 1]\n",
            [(6,), (2,)]),
    "overlap": ("def f(g, c):\n    b = c.shape[0]\n"
                "    return np.sum(g[0:b + 1] ** 2) + np.sum(np.sin(g[b:]))\n", [(6,), (2,)]),
    "not_a_length": ("def f(g, c, k: int):\n"
                     "    return np.sum(g[0:k] ** 2) + np.sum(np.sin(g[k:])) + np.sum(c)\n",
                     [(6,), (2,), ()]),
    "new_axis": ("def f(x, y):\n    return np.sum(x[None, :] * y) + np.sum(x[:, None] * y.T) "
                 "+ np.sum(x[1:])\n", [(3,), (2, 3)]),
    "read_between": ("def h(a):\n    return np.sum(a * a)\n"
                     "def f(x):\n    u = x[0] * x[1]\n    v = h(x) * x[2]\n"
                     "    return u * v + x[3] * np.sum(x[:2])\n", [(5,)]),
    "in_a_loop": ("def f(x, n: int):\n    s = 0.0\n    for i in range(n):\n"
                  "        s = s + x[i] * x[i + 1] + np.sum(x[i:i + 2] ** 3)\n    return s\n",
                  [(6,), ()]),
    "helper": ("def cam(c, p):\n    return np.sum(c[0:3] * p) * c[3] + c[4] * np.sum(c[5:] * p)\n"
               "def f(c, ps):\n    s = 0.0\n    for k in range(2):\n"
               "        s = s + cam(c, ps[k])\n    return s\n", [(8,), (2, 3)]),
    "rows": ("def f(w, x):\n    y = x * w[0]\n    y = np.tanh(y * w[1] + w[2])\n"
             "    return np.sum(y * y) + np.sum(w[3:] * w[2:3])\n", [(5, 3), (3,)]),
    "rows_overlapping": ("def f(w, x):\n    y = x * w[0] + w[1:3] * w[2] * w[1]\n"
                         "    return np.sum(y * y)\n", [(4, 3), (3,)]),
    "rows_from_the_end": ("def f(w, x):\n    y = x * w[1] + w[-1] * w[2]\n"
                          "    return np.sum(y * y)\n", [(3, 2), (2,)]),
    "rows_by_a_name": ("def f(w, x, k: int):\n    y = x * w[1] + w[k] * w[2] * w[0, 1]\n"
                       "    return np.sum(y * y)\n", [(4, 2), (2,), ()]),
    "items_of_a_matrix": ("def f(w):\n    return w[0, 1] * w[1, 0] + w[1, 1] ** 2 * np.sum(w[2])\n",
                          [(3, 2)]),
    "into_a_product": ("def f(x, y):\n    dy = x * np.roll(y, 1)\n    dy[0] = x[0]\n"
                       "    return np.sum(dy * dy)\n", [(5,), (5,)]),
    "into_a_broadcast_product": ("def f(x, y):\n    dy = x * np.roll(y, 1)\n    dy[0] = x[0]\n"
                                 "    return np.sum(dy * dy)\n", [(3, 4), (4,)]),
    "into_a_sum_over_rows": ("def f(x, y):\n    dy = x * np.roll(y, 1)\n    dy[0] = x[0]\n"
                             "    return np.sum(dy * dy)\n", [(4,), (3, 4)]),
    "into_a_product_in_a_loop": (
        "def rhs(x, y):\n    dy = x * np.roll(y, 1)\n    dy[0] = x[0]\n    return dy\n"
        "def f(x, n: int):\n    y = np.zeros_like(x)\n    for k in range(n):\n"
        "        y = y + 0.3 * rhs(x, y)\n    return y[-1] + np.sum(y * y)\n", [(4,), ()]),
}


def _args(shapes):
    return [RNG.uniform(0.2, 1.3, s) if s else 3 for s in shapes]


@pytest.mark.parametrize("name", sorted(CASES))
def test_reads_by_index_against_finite_differences(name):
    source, shapes = CASES[name]
    f = make_function(source)
    args = _args(shapes)
    wrt = [i for i, s in enumerate(shapes) if s]
    assert_gradients(f, args, wrt)
    value, pull = s2s_ad.vjp(f, *args)
    assert np.isclose(value, f(*args))
    for i in wrt:
        np.testing.assert_allclose(pull(2.0)[i], 2.0 * fd_gradient(f, args, i), rtol=1e-5,
                                   atol=1e-7)


def test_the_adjoint_is_added_into_in_place():
    """Constant slices and integers: no helper call to decide how (four reads:
    one scatter, three writes); rows no earlier read reached are assigned
    (``dc[3:6] = g``, scatter's zeros there), rows one did are added into,
    written out of place (``dc[1:3] = dc[1:3] + g``, reverse/out_of_place.py)."""
    f = make_function(CASES["slices"][0])
    text = s2s_ad.gradient_source(f)
    assert text.count("dc = scatter(") == 1
    assert "add_scattered" not in text
    assert sum(text.count(f"dc{index} = ") for index in ("[0:3]", "[3:6]", "[6]", "[7]")) == 3
    assert sum(text.count(f"dc{index} = dc") for index in ("[0:3]", "[3:6]", "[6]", "[7]")) == 0
    text = s2s_ad.gradient_source(make_function(CASES["rows_overlapping"][0]), wrt="w")
    assert re.search(r"dw\[1:3\] = dw\[1:3\] \+ ", text), text  # beside w[2] and w[1]
    assert re.search(r"dw\[0\] = d?t", text), text
    for name in ("rows_from_the_end", "rows_by_a_name"):  # w[-1] may be w[2]; k may be 1
        text = s2s_ad.gradient_source(make_function(CASES[name][0]), wrt="w")
        assert re.search(r"dw\[[^]]*\] = dw\[", text), text


def test_slices_that_tile_an_array_are_joined():
    """``g[0:b]``, ``g[b:2 * b]``, ``g[2 * b:3 * b]``, ``g[3 * b:]`` with ``b`` a
    length: the four adjoints concatenated (``joined``), no zeros added into;
    also in a helper (``z[:b]``, ``z[b:]``) called in a loop, in a helper of a
    helper, and in both arms of a branch."""
    text = s2s_ad.gradient_source(make_function(CASES["gates"][0]), wrt="g")
    assert "dg = joined(g, (" in text and "dg[" not in text and "scatter(" not in text, text
    for name in ("gates_rows", "gates_helper_of_helper"):
        text = s2s_ad.gradient_source(make_function(CASES[name][0]), wrt=0)
        assert re.search(r"\bd\w+ = joined\(\w+, \(", text), text
    text = s2s_ad.gradient_source(make_function(CASES["gates_dropped"][0]), wrt="g")
    assert "dz = joined(z, (0.0, " in text or re.search(r"dz = joined\(z, \(dt1, ", text), text
    text = s2s_ad.gradient_source(make_function(CASES["gates_branch"][0]), wrt="g")
    assert len(re.findall(r"\bd\w+ = joined\(t\w*, \(", text)) == 2, text


@pytest.mark.parametrize("name", ["gap", "overlap", "not_a_length"])
def test_slices_that_may_not_tile_are_added_into(name):
    """A slice skipped, two that overlap, a bound that may be negative (an int
    parameter): the adjoints are added into zeros, not concatenated."""
    text = s2s_ad.gradient_source(make_function(CASES[name][0]), wrt="g")
    assert "joined" not in text and "scatter(" in text, text


def test_joined_with_a_part_that_is_not_its_slices_array():
    """A slice whose adjoint is the number 0.0 (a helper's result the caller
    drops), parts of other lengths, another dtype than the array's: assigned
    into zeros at each slice (as ``scatter`` would) instead of concatenated."""
    from s2s_ad.rules.numpy_helpers import HELPERS
    ns = {"np": np}
    exec(HELPERS["joined"], ns)
    joined = ns["joined"]
    x = np.arange(10.0)
    np.testing.assert_array_equal(joined(x, (np.ones(3), 0.0, 2 * np.ones(5)), (3, 5)),
                                  [1, 1, 1, 0, 0, 2, 2, 2, 2, 2])
    np.testing.assert_array_equal(joined(x, (np.ones(3), 2 * np.ones(1), np.ones(5)), (3, 5)),
                                  [1, 1, 1, 2, 2, 1, 1, 1, 1, 1])
    np.testing.assert_array_equal(joined(x, (np.ones(3), 2 * np.ones(7), np.ones(0)), (3, 12)),
                                  [1, 1, 1, 2, 2, 2, 2, 2, 2, 2])
    np.testing.assert_array_equal(joined(x, (np.ones(4), 2 * np.ones(6)), (4,)),
                                  [1, 1, 1, 1, 2, 2, 2, 2, 2, 2])
    half = joined(x.astype(np.float32), (np.ones(4), 2 * np.ones(6)), (4,))
    assert half.dtype == np.float32  # as scatter's zeros of x's dtype
    np.testing.assert_array_equal(half, [1, 1, 1, 1, 2, 2, 2, 2, 2, 2])
    rows = joined(np.zeros((3, 2)), (np.ones((1, 2)), 2 * np.ones((2, 2))), (1,))
    np.testing.assert_array_equal(rows, [[1, 1], [2, 2], [2, 2]])


@pytest.mark.parametrize("name, wrt, written", [
    ("gates", "g", "= joined(g, ("), ("rows", "w", "    dw[1] = dt")])
def test_a_gradient_file_with_joined_differentiated(tmp_path, name, wrt, written):
    """A gradient module written by ``s2s-ad grad -o`` whose adjoint of an
    array read as tiling slices is ``joined(...)`` (or whose rows are
    assigned into scatter's zeros, ``dw[1] = dt2``), read back from its file
    (its ``joined`` as zeros and an assignment per slice) and differentiated
    again: the second-order gradient through grad and vjp against central
    differences of the file's gradient."""
    import os
    import subprocess
    import sys

    from modules import import_source
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    src = "import numpy as np\n\n\n" + CASES[name][0]
    (tmp_path / f"{name}_mod.py").write_text(src, encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "grad", f"{name}_mod.py:f", "--wrt",
                           wrt, "-o", f"{name}_grad.py"], cwd=str(tmp_path), capture_output=True,
                          text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{root}"))
    assert done.returncode == 0, done.stderr
    assert written in (tmp_path / f"{name}_grad.py").read_text(encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    try:
        probe = import_source(str(tmp_path), f"import numpy as np\nfrom {name}_grad import grad_f"
                              "\n\n\ndef probe(g, c, v):\n    return np.sum(grad_f(g, c) * v)\n",
                              f"{name}_probe")
        shapes = CASES[name][1]
        g, c, v = (RNG.uniform(0.2, 1.3, shapes[0]), RNG.uniform(0.2, 1.3, shapes[1]),
                   RNG.normal(size=shapes[0]))
        for i in (0, 1):
            want = fd_gradient(probe.probe, [g, c, v], i)
            np.testing.assert_allclose(s2s_ad.grad(probe.probe, wrt=i)(g, c, v), want,
                                       rtol=1e-6, atol=1e-8)
            _, pull = s2s_ad.vjp(probe.probe, g, c, v)
            np.testing.assert_allclose(pull(1.0)[i], want, rtol=1e-6, atol=1e-8)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop(f"{name}_grad", None)


def test_an_index_that_may_repeat_keeps_the_helper():
    """An index array (here from ``np.argsort`` along an axis, whose rows
    repeat the same indices) may name an element twice: ``add_scattered``
    decides when it runs, and sends it to ``np.add.at``."""
    text = s2s_ad.gradient_source(make_function(CASES["argsort_index"][0]), wrt="x")
    assert "add_scattered(dx, i," in text or "add_scattered(dx, (i" in text, text


def test_not_fused_where_the_adjoint_is_read_in_between():
    """``dx`` passed to a helper's backward pass (or read otherwise) after the
    first scatter keeps the sum: adding in place would change what was read."""
    f = make_function("def f(x):\n    a = x[0]\n    b = x[1:] * a\n    return np.sum(b * b)\n")
    assert_gradients(f, _args([(4,)]), [0])


@pytest.mark.parametrize("name", ["slices", "gates", "gates_rows", "gates_dropped"])
def test_on_dask(name):
    da = pytest.importorskip("dask.array")
    f = make_function(CASES[name][0])
    args = _args(CASES[name][1])
    df = s2s_ad.grad(f, wrt=0)
    got = df(da.from_array(args[0], chunks=4), *args[1:])
    assert isinstance(got, da.Array)
    np.testing.assert_allclose(np.asarray(got), df(*args), rtol=1e-12)


def test_a_read_by_index_is_added_into_the_products_adjoint():
    """``dy[0] = x[0]`` beside ``x * y_prev``: ``x[0]``'s adjoint is added
    into the product's contribution (``added_into``), no array of zeros and
    no sum; the scatter's statement stays as a comment."""
    f = make_function(CASES["into_a_product"][0])
    text = s2s_ad.gradient_source(f, wrt=(0, 1))
    assert "dx = added_into(unbroadcast(" in text and "dx = scatter(" not in text, text
    assert "(added into dx below)" in text, text


@pytest.mark.parametrize("name", ["into_a_product", "into_a_broadcast_product",
                                  "into_a_product_in_a_loop"])
def test_added_into_keeps_the_arguments_library_and_dtype(name):
    """On Dask arguments the gradient is a Dask array (the product's adjoint
    may be a NumPy one: the sum is taken there, with scatter's zeros made like
    x); on float32 arguments a float32 gradient; the values as on float64
    NumPy arrays."""
    da = pytest.importorskip("dask.array")
    f = make_function(CASES[name][0])
    args = _args(CASES[name][1])
    df = s2s_ad.grad(f, wrt=0)
    want = df(*args)
    got = df(da.from_array(args[0], chunks=2), *args[1:])
    assert isinstance(got, da.Array)
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-12, atol=1e-14)
    low = df(*[a.astype(np.float32) if isinstance(a, np.ndarray) else a for a in args])
    assert low.dtype == np.float32
    np.testing.assert_allclose(low, want, rtol=1e-4, atol=1e-5)


def test_a_gradient_file_with_added_into_differentiated(tmp_path):
    """A ``grad -o`` module with ``added_into`` read back from its file (the
    call read as the sum ``c + scatter(g, x, index)``) and differentiated
    again: the second-order gradient against central differences of the
    file's gradient."""
    import os
    import subprocess
    import sys

    from modules import import_source
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    src = "import numpy as np\n\n\n" + CASES["into_a_product_in_a_loop"][0]
    (tmp_path / "into_mod.py").write_text(src, encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "grad", "into_mod.py:f", "--wrt", "x",
                           "-o", "into_grad.py"], cwd=str(tmp_path), capture_output=True,
                          text=True, timeout=300,
                          env=dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{root}"))
    assert done.returncode == 0, done.stderr
    assert "= added_into(" in (tmp_path / "into_grad.py").read_text(encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    try:
        probe = import_source(str(tmp_path), "import numpy as np\nfrom into_grad import grad_f"
                              "\n\n\ndef probe(x, v):\n    return np.sum(grad_f(x, 3) * v)\n",
                              "into_probe")
        x, v = RNG.uniform(0.2, 1.3, 4), RNG.normal(size=4)
        want = fd_gradient(probe.probe, [x, v], 0)
        np.testing.assert_allclose(s2s_ad.grad(probe.probe, wrt=0)(x, v), want,
                                   rtol=1e-6, atol=1e-8)
        _, pull = s2s_ad.vjp(probe.probe, x, v)
        np.testing.assert_allclose(pull(1.0)[0], want, rtol=1e-6, atol=1e-8)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("into_grad", None)
