"""`np.concatenate`/`np.hstack`/`np.vstack` and `torch.cat` of lists of arrays
of any length (tests/list_joins_src.py), whose pieces' lengths along the
joined axis vary: derivatives against central differences of the original
function (float64) through `grad`, `vjp`, `jvp`, `hessian`, the `grad -o`
module in a fresh interpreter, in a helper, a loop and a branch; pieces that
NumPy would refuse to join raise where the code runs; the pieces' adjoints are
plain slices, so Dask arrays go through."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import list_joins_src as src
import s2s_ad
from array_oracle import make_function
from s2s_ad import cli

NAMES = ["joined", "joined_on_axis_1", "hstacked", "vstacked", "in_a_helper_and_a_loop",
         "torch_cat"]
X0 = np.array([0.3, -0.2, 0.5, 0.9])


def _run(f, x, n):
    if f is src.torch_cat:
        from test_torch_numpy import original
        return float(original(f)(x, n))
    return f(x, n)


def _fd(f, x, n, h=1e-6):
    out = np.zeros_like(x)
    for k in range(x.size):
        a, b = x.copy(), x.copy()
        a[k] += h
        b[k] -= h
        out[k] = (_run(f, a, n) - _run(f, b, n)) / (2 * h)
    return out


def _close(got, want, what, rtol=1e-6, atol=1e-8):
    np.testing.assert_allclose(np.asarray(got, dtype=float), np.asarray(want, dtype=float),
                               rtol=rtol, atol=atol, err_msg=what)


@pytest.mark.parametrize("name", NAMES)
def test_grad_vjp_and_jvp(name):
    f = getattr(src, name)
    g = s2s_ad.grad(f, wrt=0)
    d = np.array([1.0, -0.5, 0.25, 2.0])
    for n in (1, 2, 5):
        want = _fd(f, X0, n)
        _close(g(X0, n), want, f"grad {name} n={n}")
        value, back = s2s_ad.vjp(f, X0, n)
        assert value == pytest.approx(_run(f, X0, n), rel=1e-12)
        _close(back(0.5)[0], 0.5 * want, f"vjp {name} n={n}")
        _close(s2s_ad.jvp(f, wrt=0)(X0, n, dx=d)[1], want @ d, f"jvp {name} n={n}")


@pytest.mark.parametrize("name", ["joined", "joined_on_axis_1", "vstacked", "torch_cat"])
def test_second_derivatives(name):
    f = getattr(src, name)
    g = s2s_ad.grad(f, wrt=0)
    h = 1e-5
    n = 3
    want = np.zeros((4, 4))
    for k in range(4):
        a, b = X0.copy(), X0.copy()
        a[k] += h
        b[k] -= h
        want[:, k] = (g(a, n) - g(b, n)) / (2 * h)
    _close(s2s_ad.hessian(f, wrt=0)(X0, n), want, f"hessian {name}", 1e-5, 1e-6)


def _wrapped(form: str) -> str:
    if form == "helper":
        return "def h(x, n):\n    return g(x, n)\n\n\ndef f(x, n):\n    return h(x, n) * 0.5\n"
    if form == "loop":
        return ("def f(x, n):\n    s = 0.0\n    for k in range(2):\n"
                "        s = s + g(x * (k + 1.0), n)\n    return s\n")
    return ("def f(x, n):\n    if x[0] > 0.0:\n        r = g(x, n) * 2.0\n"
            "    else:\n        r = g(x, n) - 1.0\n    return r\n")


@pytest.mark.parametrize("form", ["helper", "loop", "branch"])
@pytest.mark.parametrize("name", ["joined", "hstacked", "vstacked"])
def test_inside_a_helper_a_loop_and_a_branch(name, form):
    f = make_function(_wrapped(form), env={"g": getattr(src, name)})
    for x in (X0, -X0):
        _close(s2s_ad.grad(f, wrt=0)(x, 3), _fd(f, x, 3), f"grad {name} as {form}")


def _fresh(tmp_path, module: str, call: str) -> list:
    script = (f"import json, sys\nsys.path.insert(0, {str(tmp_path)!r})\n"
              "import numpy as np\n"
              f"from {module} import *\n"
              f"out = {call}\n"
              "assert 's2s_ad' not in sys.modules and 'torch' not in sys.modules\n"
              "print(json.dumps(np.asarray(out, dtype=float).tolist()))\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    run = subprocess.run([sys.executable, "-I", "-c", script], capture_output=True, text=True,
                         cwd=str(tmp_path), env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


@pytest.mark.parametrize("name", ["joined", "joined_on_axis_1", "torch_cat"])
def test_the_cli_module_runs_in_a_fresh_interpreter(tmp_path, name):
    f = getattr(src, name)
    out = tmp_path / f"grad_{name}.py"
    assert cli.main(["grad", f"{src.__file__}:{name}", "--wrt", "x", "-o", str(out)]) == 0
    for n in (1, 4):
        got = _fresh(tmp_path, out.stem, f"grad_{name}(np.array({X0.tolist()!r}), {n})")
        _close(got, _fd(f, X0, n), f"grad -o {name} n={n}")


def test_pieces_numpy_would_refuse_raise_where_the_code_runs():
    # a piece of another rank, or of another length off the joined axis,
    # would broadcast into its slot: NumPy raises, and so does the generated code
    f = make_function("def f(x, k):\n    ys = []\n    for i in range(2):\n"
                      "        ys.append(np.outer(x[:2], x[:3]))\n"
                      "    if k == 0:\n        ys.append(x[:3])\n"
                      "    else:\n        ys.append(np.outer(x[:2], x[:1]))\n"
                      "    return np.sum(np.concatenate(ys))\n")
    g = s2s_ad.grad(f, wrt=0)
    for k in (0, 1):
        with pytest.raises(ValueError):
            f(X0, k)
        with pytest.raises(ValueError, match="agree in rank and off the joined axis"):
            g(X0, k)


def test_rows_of_another_shape_stacked_raise_where_the_code_runs():
    # np.stack of a list of any length writes rows into an array: a row of
    # shape (1,) would be broadcast into a slot of shape (3,) without the check
    f = make_function("def f(x, n):\n    rows = []\n    for i in range(n):\n"
                      "        if i == 1:\n            rows.append(x[:1] * 1.0)\n"
                      "        else:\n            rows.append(x[:3] * 1.0)\n"
                      "    return np.sum(np.stack(rows) ** 2)\n")
    g = s2s_ad.grad(f, wrt=0)
    _close(g(X0, 1), _fd(f, X0, 1), "one row")
    with pytest.raises(ValueError, match="all input arrays must have the same shape"):
        f(X0, 3)
    with pytest.raises(ValueError, match="all input arrays must have the same shape"):
        g(X0, 3)


def test_axis_none_is_refused_there():
    with pytest.raises(s2s_ad.SourceError, match="constant int axis") as err:
        s2s_ad.grad(src.axis_none, wrt=0)(X0, 2)
    text = str(err.value)
    assert "list_joins_src.py:" in text and "np.concatenate(ys, axis=None)" in text


def test_dask_arrays_go_through():
    da = pytest.importorskip("dask.array")
    f = src.joined
    g = s2s_ad.grad(f, wrt=0)
    got = g(da.from_array(X0, chunks=2), 3)
    _close(np.asarray(got.compute() if hasattr(got, "compute") else got), _fd(f, X0, 3),
           "grad on dask")
