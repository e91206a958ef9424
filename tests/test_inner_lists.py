"""Lists grown by `append` created inside a loop or a branch
(tests/inner_lists_src.py): each run of the body makes its own list, grown in
a nested loop or branch, then summed, read by index, iterated, stacked or
passed to a helper. Derivatives against central differences of the original
function (float64): `grad`, `vjp`, `jvp`, the `grad -o` and `jvp -o` modules
run in a fresh interpreter, the function reached from a helper, a helper of a
helper, a loop and a branch; second derivatives (`hessian`, `hvp`) against
central differences of the gradient. What stays refused is refused, located."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import inner_lists_src as src
import s2s_ad
from array_oracle import make_function
from s2s_ad import cli
from soak import beyond

NAMES = ["in_loop", "in_branch", "in_while", "passed", "branch_in_loop", "appended_in_branch",
         "in_a_helper"]
POINTS = [(0.3, 0.8, 1), (0.4, 0.7, 4), (-0.5, 1.2, 3)]


def _fd(f, args, k, h=1e-6):
    a, b = list(args), list(args)
    a[k] += h
    b[k] -= h
    return (f(*a) - f(*b)) / (2 * h)


def _grad_fd(f, args):
    return np.array([_fd(f, args, 0), _fd(f, args, 1)])


def _close(got, want, what, rtol=1e-6, atol=1e-7):
    np.testing.assert_allclose(np.asarray(got, dtype=float), np.asarray(want, dtype=float),
                               rtol=rtol, atol=atol, err_msg=what)


@pytest.mark.parametrize("name", NAMES)
def test_grad_vjp_and_jvp(name):
    f = getattr(src, name)
    g = s2s_ad.grad(f, wrt=(0, 1))
    j = s2s_ad.jvp(f, wrt=(0, 1))
    for args in POINTS:
        want = _grad_fd(f, args)
        _close(g(*args), want, f"grad {name} {args}")
        value, back = s2s_ad.vjp(f, *args)
        assert value == pytest.approx(f(*args), rel=1e-12)
        _close(back(0.7)[:2], 0.7 * want, f"vjp {name} {args}")
        value, tangent = j(*args, dx=1.0, dw=-0.5)
        assert value == pytest.approx(f(*args), rel=1e-12)
        _close(tangent, want @ [1.0, -0.5], f"jvp {name} {args}")


def test_each_run_of_the_body_makes_its_list_and_its_adjoint():
    text = s2s_ad.gradient_source(src.in_loop, wrt=("x", "w"))
    forward, reverse = text.split("# reverse sweep")
    assert "    for t in range(3):" in forward and "        row = []" in forward
    assert "        drow = [0.0] * len(row)" in reverse and "drow.pop()" in reverse


def _wrapped(form: str) -> str:
    params = "p0, p1, p2"
    if form == "helper":
        return f"def f({params}):\n    return g({params})\n"
    if form == "helper_of_helper":
        return f"def h({params}):\n    return g({params})\n\n\ndef f({params}):\n    return h({params})\n"
    if form == "loop":
        return (f"def f({params}):\n    s = 0.0\n    for k in range(2):\n"
                f"        s = s + g({params}) * (k + 1.0)\n    return s\n")
    return (f"def f({params}, sel):\n    if sel > 0.5:\n        r = g({params}) * 2.0\n"
            f"    else:\n        r = g({params}) - 1.0\n    return r\n")


@pytest.mark.parametrize("form", ["helper", "helper_of_helper", "loop", "branch"])
@pytest.mark.parametrize("name", ["in_loop", "in_branch", "in_while", "passed"])
def test_inside_a_helper_a_loop_and_a_branch(name, form):
    f = make_function(_wrapped(form), env={"g": getattr(src, name)})
    for args in POINTS[1:]:
        for extra in ([(0.9,), (0.1,)] if form == "branch" else [()]):
            point = args + extra
            want = _grad_fd(f, point)
            _close(s2s_ad.grad(f, wrt=(0, 1))(*point), want, f"grad {name} as {form} {point}")
            _close(s2s_ad.jvp(f, wrt=(0, 1))(*point, dp0=1.0, dp1=0.5)[1], want @ [1.0, 0.5],
                   f"jvp {name} as {form} {point}")


@pytest.mark.parametrize("name", ["in_loop", "in_branch", "in_while", "passed",
                                  "appended_in_branch"])
def test_second_derivatives(name):
    f = getattr(src, name)
    g = s2s_ad.grad(f, wrt=(0, 1))
    h = 1e-5
    for args in POINTS[1:]:
        want = np.zeros((2, 2))
        for j in range(2):
            a, b = list(args), list(args)
            a[j] += h
            b[j] -= h
            want[:, j] = (np.array(g(*a)) - np.array(g(*b))) / (2 * h)
        what = f"{name} {args}"
        _close(np.array(s2s_ad.hessian(f, wrt=(0, 1))(*args), dtype=float), want,
               "hessian " + what, 1e-5, 1e-6)
        _close(s2s_ad.hvp(f, wrt=(0, 1))(*args, (1.0, 0.5)), want @ [1.0, 0.5],
               "hvp " + what, 1e-5, 1e-6)


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


@pytest.mark.parametrize("name", beyond(["in_loop", "in_branch", "in_while", "passed"], 1))
def test_the_cli_modules_run_in_a_fresh_interpreter(tmp_path, name):
    # (in_loop in the default run, all four with --soak: each is checked in-process above)
    f = getattr(src, name)
    for verb in ("grad", "jvp"):
        out = tmp_path / f"{verb}_{name}.py"
        assert cli.main([verb, f"{src.__file__}:{name}", "--wrt", "x,w", "-o", str(out)]) == 0
        for args in POINTS:
            want = _grad_fd(f, args)
            if verb == "grad":
                got = _fresh(tmp_path, out.stem, f"grad_{name}{args!r}")
                _close(got, want, f"grad -o {name} {args}")
            else:
                got = _fresh(tmp_path, out.stem, f"jvp_{name}(*{args!r}, dx=1.0, dw=0.5)")
                _close(got[1], want @ [1.0, 0.5], f"jvp -o {name} {args}")
                assert got[0] == pytest.approx(f(*args), rel=1e-12)


# -- NumPy code ---------------------------------------------------------------

X0 = np.array([0.3, -0.2, 0.5])


def _array_fd(f, x, n, h=1e-6):
    out = np.zeros_like(x)
    for k in range(x.size):
        a, b = x.copy(), x.copy()
        a[k] += h
        b[k] -= h
        out[k] = (f(a, n) - f(b, n)) / (2 * h)
    return out


def _np_wrapped(form: str) -> str:
    if form == "helper":
        return "def f(x, n):\n    return g(x, n) * 0.5\n"
    if form == "loop":
        return ("def f(x, n):\n    s = 0.0\n    for k in range(2):\n"
                "        s = s + g(x * (k + 1.0), n)\n    return s\n")
    return "def f(x, n):\n    return g(x, n)\n"


@pytest.mark.parametrize("form", ["top", "helper", "loop"])
@pytest.mark.parametrize("name", ["np_stacked", "np_passed"])
def test_numpy_lists_made_in_a_loop(name, form):
    f = make_function(_np_wrapped(form), env={"g": getattr(src, name)})
    for n in (1, 3):
        want = _array_fd(f, X0, n)
        _close(s2s_ad.grad(f, wrt=0)(X0, n), want, f"grad {name} as {form} n={n}")
        value, back = s2s_ad.vjp(f, X0, n)
        assert value == pytest.approx(f(X0, n), rel=1e-12)
        _close(back(2.0)[0], 2.0 * want, f"vjp {name} as {form} n={n}")
        d = np.array([1.0, -0.5, 0.25])
        _close(s2s_ad.jvp(f, wrt=0)(X0, n, dx=d)[1], want @ d, f"jvp {name} as {form} n={n}")


@pytest.mark.parametrize("name", ["np_stacked", "np_passed"])
def test_numpy_cli_module_in_a_fresh_interpreter(tmp_path, name):
    f = getattr(src, name)
    out = tmp_path / f"grad_{name}.py"
    assert cli.main(["grad", f"{src.__file__}:{name}", "--wrt", "x", "-o", str(out)]) == 0
    got = _fresh(tmp_path, out.stem, f"[grad_{name}(np.array({X0.tolist()!r}), 3)]")
    _close(got[0], _array_fd(f, X0, 3), f"grad -o {name}")


@pytest.mark.parametrize("name, line, message", [
    ("one_of_two", "if x > 0.0:", "one of two lists, depending on the branch"),
    ("replaced_in_loop", "for k in range(n):", "given another list inside the loop"),
])
def test_what_stays_refused_is_refused_there(name, line, message):
    with pytest.raises(s2s_ad.SourceError, match=message) as err:
        s2s_ad.grad(getattr(src, name), wrt=(0, 1))(0.3, 0.8, 3)
    text = str(err.value)
    assert "inner_lists_src.py:" in text and line in text and "^" in text
