"""Slices of lists of any length (tests/list_slices_src.py): `xs[1:]`,
`xs[:-1]`, `xs[a:b]`, `xs[::-1]`, `xs[-k:]` read (summed, iterated, zipped,
indexed, stacked, passed to a helper) as the loop each slice stands for; the
adjoint scatters back into the list's adjoint. Derivatives against central
differences of the original function (float64), for every bound against
Python's own slicing (out of range, negative, empty): `grad` (one generated
module for every length), `vjp`, `jvp`, `hessian`, the `grad -o` module in a
fresh interpreter, in a helper, a loop and a branch."""

import json
import os
import random
import subprocess
import sys

import numpy as np
import pytest

import list_slices_src as src
import s2s_ad
from array_oracle import make_function
from s2s_ad import cli

PARAM_NAMES = ["tail", "differences", "backwards", "every_other", "extremes"]
GROWN_NAMES = ["grown", "grown_in_loop", "passed_to_helper"]


def _fd_list(f, args, h=1e-6):
    """Central differences of f with respect to args[0] (a list) and args[1]."""
    xs = args[0]
    dxs = []
    for j in range(len(xs)):
        up, down = list(xs), list(xs)
        up[j] += h
        down[j] -= h
        dxs.append((f(up, *args[1:]) - f(down, *args[1:])) / (2 * h))
    a, b = list(args), list(args)
    a[1] += h
    b[1] -= h
    return dxs, (f(*a) - f(*b)) / (2 * h)


def _fd(f, args, k, h=1e-6):
    a, b = list(args), list(args)
    a[k] += h
    b[k] -= h
    return (f(*a) - f(*b)) / (2 * h)


def _close(got, want, what, rtol=1e-6, atol=1e-7):
    np.testing.assert_allclose(np.asarray(got, dtype=float), np.asarray(want, dtype=float),
                               rtol=rtol, atol=atol, err_msg=what)


@pytest.mark.parametrize("name", PARAM_NAMES)
def test_slices_of_a_list_parameter_one_module_for_every_length(name):
    f = getattr(src, name)
    s2s_ad.clear_cache()
    g = s2s_ad.grad(f, wrt=(0, 1))
    rng = random.Random(3)
    lists = [[rng.uniform(-0.9, 0.9) for _ in range(n)]
             for n in {"tail": (1, 2, 5, 9), "extremes": (2, 5, 9)}.get(name, (0, 1, 2, 5, 9))]
    for xs in lists:
        want_dxs, want_dw = _fd_list(f, [xs, 0.7])
        dxs, dw = g(xs, 0.7)
        _close(dxs, want_dxs, f"grad {name} n={len(xs)}")
        _close(dw, want_dw, f"grad {name} n={len(xs)}")
    assert s2s_ad.cache_info().misses == 1  # one generated module for every length
    assert "has 3 items" not in s2s_ad.source_of(g)
    j = s2s_ad.jvp(f, wrt=(0, 1))
    for xs in lists:
        n = len(xs)
        want_dxs, want_dw = _fd_list(f, [xs, 0.7])
        value, back = s2s_ad.vjp(f, xs, 0.7)
        assert value == pytest.approx(f(xs, 0.7), rel=1e-12)
        _close(back(0.5)[0], [0.5 * d for d in want_dxs], f"vjp {name} n={n}")
        direction = [rng.uniform(-1, 1) for _ in range(n)]
        value, tangent = j(xs, 0.7, dxs=direction, dw=0.3)
        _close(tangent, np.dot(want_dxs, direction) + 0.3 * want_dw, f"jvp {name} n={n}")


@pytest.mark.parametrize("name", ["window", "window_steps", "last_k"])
def test_run_time_bounds_as_python_slices_them(name):
    # every bound in and out of range, negative too, on lists of 0 to 6 items
    f = getattr(src, name)
    g = s2s_ad.value_and_grad(f, wrt=(0, 1))
    rng = random.Random(5)
    bounds = [(a, b) for a in range(-8, 9) for b in range(-8, 9)] if name != "last_k" \
        else [(k, None) for k in range(0, 9)]
    for n in (0, 1, 3, 6):
        xs = [rng.uniform(-0.9, 0.9) for _ in range(n)]
        for a, b in bounds:
            ints = (a, b) if b is not None else (a,)
            value, (dxs, dw) = g(xs, 0.7, *ints)
            assert value == pytest.approx(f(xs, 0.7, *ints), rel=1e-12)
            want_dxs, want_dw = _fd_list(lambda ys, w: f(ys, w, *ints), [xs, 0.7])
            _close(dxs, want_dxs, f"{name} n={n} bounds={ints}")
            _close(dw, want_dw, f"{name} n={n} bounds={ints}")


POINTS = [(0.3, 0.8, 0), (0.4, 0.7, 4), (-0.5, 1.2, 3)]


@pytest.mark.parametrize("name", GROWN_NAMES)
def test_slices_of_a_list_grown_at_run_time(name):
    f = getattr(src, name)
    g = s2s_ad.grad(f, wrt=(0, 1))
    j = s2s_ad.jvp(f, wrt=(0, 1))
    for args in POINTS:
        want = np.array([_fd(f, args, 0), _fd(f, args, 1)])
        _close(g(*args), want, f"grad {name} {args}")
        value, back = s2s_ad.vjp(f, *args)
        assert value == pytest.approx(f(*args), rel=1e-12)
        _close(back(0.7)[:2], 0.7 * want, f"vjp {name} {args}")
        _close(j(*args, dx=1.0, dw=-0.5)[1], want @ [1.0, -0.5], f"jvp {name} {args}")


@pytest.mark.parametrize("name", GROWN_NAMES)
def test_second_derivatives(name):
    f = getattr(src, name)
    g = s2s_ad.grad(f, wrt=(0, 1))
    h = 1e-5
    for args in POINTS[1:]:
        want = np.zeros((2, 2))
        for k in range(2):
            a, b = list(args), list(args)
            a[k] += h
            b[k] -= h
            want[:, k] = (np.array(g(*a)) - np.array(g(*b))) / (2 * h)
        _close(np.array(s2s_ad.hessian(f, wrt=(0, 1))(*args), dtype=float), want,
               f"hessian {name} {args}", 1e-5, 1e-6)
        _close(s2s_ad.hvp(f, wrt=(0, 1))(*args, (1.0, 0.5)), want @ [1.0, 0.5],
               f"hvp {name} {args}", 1e-5, 1e-6)


def _wrapped(form: str) -> str:
    params = "p0, p1, p2"
    if form == "helper":
        return f"def h({params}):\n    return g({params})\n\n\ndef f({params}):\n    return h({params})\n"
    if form == "loop":
        return (f"def f({params}):\n    s = 0.0\n    for k in range(2):\n"
                f"        s = s + g({params}) * (k + 1.0)\n    return s\n")
    return (f"def f({params}, sel):\n    if sel > 0.5:\n        r = g({params}) * 2.0\n"
            f"    else:\n        r = g({params}) - 1.0\n    return r\n")


@pytest.mark.parametrize("form", ["helper", "loop", "branch"])
@pytest.mark.parametrize("name", GROWN_NAMES)
def test_inside_a_helper_a_loop_and_a_branch(name, form):
    f = make_function(_wrapped(form), env={"g": getattr(src, name)})
    for args in POINTS[1:]:
        for extra in ([(0.9,), (0.1,)] if form == "branch" else [()]):
            point = args + extra
            want = np.array([_fd(f, point, 0), _fd(f, point, 1)])
            _close(s2s_ad.grad(f, wrt=(0, 1))(*point), want, f"grad {name} as {form} {point}")


def _fresh(tmp_path, module: str, call: str) -> list:
    script = (f"import json, sys\nsys.path.insert(0, {str(tmp_path)!r})\n"
              "import numpy as np\n"
              f"from {module} import *\n"
              f"out = {call}\n"
              "assert 's2s_ad' not in sys.modules\n"
              "print(json.dumps([np.asarray(o, dtype=float).tolist() for o in out]))\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    run = subprocess.run([sys.executable, "-I", "-c", script], capture_output=True, text=True,
                         cwd=str(tmp_path), env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


def test_the_cli_modules_run_in_a_fresh_interpreter(tmp_path):
    out = tmp_path / "grad_differences.py"
    assert cli.main(["grad", f"{src.__file__}:differences", "-o", str(out)]) == 0
    for xs in ([0.4], [0.3, -0.2, 0.9, 1.1]):
        got = _fresh(tmp_path, out.stem, f"grad_differences({xs!r}, 0.7)")
        want_dxs, want_dw = _fd_list(src.differences, [xs, 0.7])
        _close(got[0], want_dxs, f"grad -o differences {xs}")
        _close(got[1], want_dw, f"grad -o differences {xs}")
    out = tmp_path / "grad_grown.py"
    assert cli.main(["grad", f"{src.__file__}:grown", "--wrt", "x,w", "-o", str(out)]) == 0
    for args in POINTS:
        got = _fresh(tmp_path, out.stem, f"grad_grown{args!r}")
        _close(got, [_fd(src.grown, args, 0), _fd(src.grown, args, 1)], f"grad -o grown {args}")


X0 = np.array([0.3, -0.2, 0.5])


def test_numpy_slices_stacked_and_zipped(tmp_path):
    f = src.np_stacked
    for n in (1, 3):
        want = np.zeros(3)
        for k in range(3):
            a, b = X0.copy(), X0.copy()
            a[k] += 1e-6
            b[k] -= 1e-6
            want[k] = (f(a, n) - f(b, n)) / 2e-6
        _close(s2s_ad.grad(f, wrt=0)(X0, n), want, f"grad np_stacked n={n}")
        value, back = s2s_ad.vjp(f, X0, n)
        assert value == pytest.approx(f(X0, n), rel=1e-12)
        _close(back(2.0)[0], 2 * want, f"vjp np_stacked n={n}")
        d = np.array([1.0, -0.5, 0.25])
        _close(s2s_ad.jvp(f, wrt=0)(X0, n, dx=d)[1], want @ d, f"jvp np_stacked n={n}")
    out = tmp_path / "grad_np_stacked.py"
    assert cli.main(["grad", f"{src.__file__}:np_stacked", "--wrt", "x", "-o", str(out)]) == 0
    got = _fresh(tmp_path, out.stem, f"[grad_np_stacked(np.array({X0.tolist()!r}), 3)]")
    _close(got[0], want, "grad -o np_stacked")


def test_a_run_time_step_is_refused_there():
    with pytest.raises(s2s_ad.SourceError, match="step of a slice") as err:
        s2s_ad.gradient_source(src.run_time_step, wrt=(0, 1))
    text = str(err.value)
    assert "list_slices_src.py:" in text and "xs[::k]" in text and "^" in text
