"""Comprehensions over lists of any length (tests/comprehensions_src.py): a
list parameter of any length, a list a closure captures, a list grown at run
time or returned by a helper, with `if`, `enumerate`, `zip`, `reversed`,
nested, inside loops, branches and helpers, NumPy lists of arrays. One
generated module serves every length; derivatives against central
differences of the original function (float64) through `grad`, `vjp`, `jvp`,
the `grad -o`/`jvp -o` modules in a fresh interpreter, the function reached
from a helper, a helper of a helper, a loop and a branch; second
derivatives against central differences of the gradient."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import comprehensions_src as src
import s2s_ad
from array_oracle import make_function
from s2s_ad import cli

H = 1e-6
NAMES = ["poly", "filtered", "zipped", "in_helper", "in_loop", "in_branch",
         "of_a_returned_list", "of_a_grown_list", "nested", "max_of"]
"""f(cs, x): cs a list of floats of any length."""
LISTS = [[0.3, -0.5], [0.3, -0.5, 0.8, 1.1], [0.2, 0.4, -0.1]]


def _fd(f, cs, x, h=H):
    """(∂f/∂cs as a list, ∂f/∂x) by central differences."""
    dcs = []
    for i in range(len(cs)):
        up, down = list(cs), list(cs)
        up[i] += h
        down[i] -= h
        dcs.append((f(up, x) - f(down, x)) / (2 * h))
    return dcs, (f(cs, x + h) - f(cs, x - h)) / (2 * h)


def _close(got, want, what, rtol=1e-6, atol=1e-7):
    np.testing.assert_allclose(np.array(list(got[0]) + [got[1]], dtype=float),
                               np.array(list(want[0]) + [want[1]], dtype=float),
                               rtol=rtol, atol=atol, err_msg=what)


@pytest.mark.parametrize("name", NAMES)
def test_grad_vjp_and_jvp_of_every_length_from_one_module(name):
    f = getattr(src, name)
    s2s_ad.clear_cache()
    g, j = s2s_ad.grad(f, wrt=(0, 1)), s2s_ad.jvp(f, wrt=(0, 1))
    for cs in LISTS:
        for x in (0.7, -0.4):
            want = _fd(f, cs, x)
            _close(g(cs, x), want, f"grad {name} {cs} {x}")
            v = [0.3 * (i + 1) for i in range(len(cs))]
            value, tangent = j(cs, x, dcs=v, dx=-0.5)
            assert value == pytest.approx(f(cs, x), rel=1e-12)
            assert tangent == pytest.approx(float(np.dot(want[0], v)) - 0.5 * want[1],
                                            rel=1e-6, abs=1e-7)
    assert s2s_ad.cache_info().misses == 2  # one gradient and one JVP for every length
    for cs in LISTS:
        want = _fd(f, cs, 0.7)
        value, back = s2s_ad.vjp(f, cs, 0.7)
        assert value == pytest.approx(f(cs, 0.7), rel=1e-12)
        dcs, dx = back(0.5)
        _close((dcs, dx), ([0.5 * d for d in want[0]], 0.5 * want[1]), f"vjp {name} {cs}")


def test_the_generated_code_is_the_loop_the_comprehension_stands_for():
    text = s2s_ad.gradient_source(src.poly, wrt=("cs", "x"))
    assert "len(cs) !=" not in text
    assert "    items = []" in text and "        items.append(" in text


@pytest.mark.parametrize("data", [[0.1, 0.2, 0.3], [0.5, -0.3, 0.2, 0.9, 1.3], [2.0]])
def test_a_closure_capturing_a_list_of_any_length(data):
    loss = src.make_loss(data)
    g = s2s_ad.grad(loss, wrt=(0, 1))
    j = s2s_ad.jvp(loss, wrt=(0, 1))
    w, b = 0.7, 0.2
    want = [(loss(w + H, b) - loss(w - H, b)) / (2 * H), (loss(w, b + H) - loss(w, b - H)) / (2 * H)]
    np.testing.assert_allclose(g(w, b), want, rtol=1e-6, atol=1e-8)
    assert j(w, b, dw=1.0, db=0.5)[1] == pytest.approx(want[0] + 0.5 * want[1], rel=1e-6)
    # its module takes the captured list as a keyword, of any length: no length in it
    text = s2s_ad.gradient_source(loss, wrt=(0, 1))
    assert "def grad_loss(w, b, *, data" in text and "len(data) !=" not in text


def test_a_captured_list_changed_in_place_is_seen():
    data = [0.1, 0.2, 0.3]
    loss = src.make_loss(data)
    g = s2s_ad.grad(loss, wrt=(0, 1))
    g(0.7, 0.2)
    data.append(1.5)
    want = (loss(0.7 + H, 0.2) - loss(0.7 - H, 0.2)) / (2 * H)
    assert g(0.7, 0.2)[0] == pytest.approx(want, rel=1e-6)


W = np.random.default_rng(0).normal(size=(3, 3)) * 0.5
X = np.random.default_rng(1).normal(size=3)


def _np_fd(f, args, k):
    x = np.array(args[k], dtype=float)
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += H
        down[i] -= H
        a, b = list(args), list(args)
        a[k], b[k] = up, down
        out[i] = (f(*a) - f(*b)) / (2 * H)
    return out


@pytest.mark.parametrize("n", [0, 1, 4])
def test_numpy_comprehensions_over_a_list_of_arrays_grown_at_run_time(n):
    f = src.np_grown
    g = s2s_ad.grad(f, wrt=(0, 1))(W, X, n)
    for k in (0, 1):
        np.testing.assert_allclose(g[k], _np_fd(f, (W, X, n), k), rtol=1e-6, atol=1e-7)
    value, tangent = s2s_ad.jvp(f, wrt=(0, 1))(W, X, n, dW=np.ones((3, 3)), dx=-np.ones(3))
    want = _np_fd(f, (W, X, n), 0).sum() - _np_fd(f, (W, X, n), 1).sum()
    assert tangent == pytest.approx(want, rel=1e-6, abs=1e-7)


@pytest.mark.parametrize("name", ["np_sum_of_squares", "np_stacked"])
def test_numpy_comprehensions_over_a_list_parameter_of_arrays(name):
    f = getattr(src, name)
    for n in (1, 3):
        hs = [X * (k + 1.0) for k in range(n)]
        got = s2s_ad.grad(f, wrt=(0, 1))(hs, W)
        np.testing.assert_allclose(got[1], _np_fd(f, (hs, W), 1), rtol=1e-6, atol=1e-7)
        for k in range(n):
            def item(v, k=k):
                return f(hs[:k] + [v] + hs[k + 1:], W)
            np.testing.assert_allclose(got[0][k], _np_fd(item, (hs[k],), 0), rtol=1e-6,
                                       atol=1e-7)


def _wrapped(form: str) -> str:
    if form == "helper":
        return "def f(cs, x):\n    return g(cs, x)\n"
    if form == "helper_of_helper":
        return "def h(cs, x):\n    return g(cs, x)\n\n\ndef f(cs, x):\n    return h(cs, x)\n"
    if form == "loop":
        return ("def f(cs, x):\n    s = 0.0\n    for k in range(2):\n"
                "        s = s + g(cs, x) * (k + 1.0)\n    return s\n")
    return ("def f(cs, x):\n    if x > 0.0:\n        r = g(cs, x) * 2.0\n"
            "    else:\n        r = g(cs, x) - 1.0\n    return r\n")


@pytest.mark.parametrize("form", ["helper", "helper_of_helper", "loop", "branch"])
@pytest.mark.parametrize("name", ["poly", "filtered", "in_loop", "of_a_returned_list"])
def test_inside_a_helper_a_loop_and_a_branch(name, form):
    f = make_function(_wrapped(form), env={"g": getattr(src, name)})
    for cs in LISTS[1:]:
        for x in (0.7, -0.4):
            want = _fd(f, cs, x)
            _close(s2s_ad.grad(f, wrt=(0, 1))(cs, x), want, f"{name} as {form}")
            v = [1.0] * len(cs)
            assert s2s_ad.jvp(f, wrt=(0, 1))(cs, x, dcs=v, dx=0.5)[1] == pytest.approx(
                sum(want[0]) + 0.5 * want[1], rel=1e-6, abs=1e-7)


@pytest.mark.parametrize("name", ["poly", "filtered", "in_loop", "of_a_grown_list"])
def test_second_derivatives(name):
    f = getattr(src, name)
    g = s2s_ad.grad(f, wrt=(0, 1))
    cs, x = LISTS[1], 0.7
    want = _fd(lambda cs, x: g(cs, x)[1], cs, x, 1e-5)  # ∂(∂f/∂x)/∂(cs, x)
    assert s2s_ad.hessian(f, wrt="x")(cs, x) == pytest.approx(want[1], rel=1e-5, abs=1e-6)
    _close(s2s_ad.grad(g, wrt=("cs", "x"), output=1)(cs, x), want, f"grad(grad) {name}",
           1e-5, 1e-6)
    v = [0.3, -0.2, 0.5, 0.1]
    assert s2s_ad.hvp(f, wrt=("cs", "x"))(cs, x, (v, 1.0))[1] == pytest.approx(
        float(np.dot(want[0], v)) + want[1], rel=1e-5, abs=1e-6)


def _fresh(tmp_path, module: str, call: str) -> list:
    script = (f"import json, sys\nsys.path.insert(0, {str(tmp_path)!r})\n"
              f"from {module} import *\n"
              f"out = {call}\n"
              "assert 's2s_ad' not in sys.modules\n"
              "out = [list(o) if isinstance(o, list) else o for o in out]\n"
              "print(json.dumps(out))\n")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    run = subprocess.run([sys.executable, "-I", "-c", script], capture_output=True, text=True,
                         cwd=str(tmp_path), env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout)


@pytest.mark.parametrize("name", ["poly", "filtered", "zipped", "in_helper",
                                  "of_a_returned_list"])
def test_the_cli_modules_run_in_a_fresh_interpreter(tmp_path, name):
    f = getattr(src, name)
    for verb in ("grad", "jvp"):
        out = tmp_path / f"{verb}_{name}.py"
        assert cli.main([verb, f"{src.__file__}:{name}", "-o", str(out)]) == 0
        assert "len(cs) !=" not in out.read_text()
        for cs in LISTS:
            want = _fd(f, cs, 0.7)
            if verb == "grad":
                _close(_fresh(tmp_path, out.stem, f"grad_{name}({cs!r}, 0.7)"), want,
                       f"grad -o {name} {cs}")
            else:
                got = _fresh(tmp_path, out.stem,
                             f"jvp_{name}({cs!r}, 0.7, dcs={[1.0] * len(cs)!r}, dx=0.5)")
                assert got[1] == pytest.approx(sum(want[0]) + 0.5 * want[1], rel=1e-6,
                                               abs=1e-7)


def test_two_for_clauses_are_nested_loops():
    """(Refused before: "comprehensions with more than one `for`"; more in
    tests/test_everyday_gaps48.py.)"""
    def two_fors(cs, x):
        return sum([a * b * x for a in cs for b in cs])

    cs, x = [0.1, 0.2, -0.4], 0.5
    got = s2s_ad.grad(two_fors, wrt=(0, 1))(cs, x)
    want = [[(two_fors([c + H * (k == j) for k, c in enumerate(cs)], x)
              - two_fors([c - H * (k == j) for k, c in enumerate(cs)], x)) / (2 * H)
             for j in range(len(cs))],
            (two_fors(cs, x + H) - two_fors(cs, x - H)) / (2 * H)]
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6, atol=1e-8)
    assert got[1] == pytest.approx(want[1], rel=1e-6)


def test_an_if_over_a_list_known_while_lowering():
    f = src.filtered_display
    g = s2s_ad.grad(f, wrt=(0, 1))
    for x, y in [(0.3, 2.0), (1.5, 0.4), (-0.5, 0.4), (0.7, -1.1)]:
        want = [(f(x + H, y) - f(x - H, y)) / (2 * H), (f(x, y + H) - f(x, y - H)) / (2 * H)]
        np.testing.assert_allclose(g(x, y), want, rtol=1e-6, atol=1e-7)
        assert s2s_ad.jvp(f, wrt=(0, 1))(x, y, dx=1.0, dy=0.5)[1] == pytest.approx(
            want[0] + 0.5 * want[1], rel=1e-6, abs=1e-7)
