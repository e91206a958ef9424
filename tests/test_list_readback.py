"""Gradient modules of list code read back from their files and
differentiated again (tests/fill_in_loops_src.py): a list made by `[c] * n`
and summed (its adjoint added to every item, `dys[:] = [d + g for d in
dys]`), the same inside a helper (the helper's tape holds the list), a
comprehension over a list parameter of any length. The second derivative
is compared with central differences of the first gradient (the module
itself, run as plain Python), and the second module written by the command
line is run in a fresh interpreter. A helper's tape holding a list grown by
`append`, whose adjoint list the backward pass pops, is read as a stack at a
counter."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import fill_in_loops_src as src
import s2s_ad
from s2s_ad import cli
from tests.modules import import_source

H = 1e-5


def _write(tmp_path, name: str, *argv) -> object:
    out = tmp_path / f"rb_{name}.py"
    assert cli.main(["grad", f"{src.__file__}:{name}", *argv, "-o", str(out)]) == 0
    return import_source(str(tmp_path), out.read_text(encoding="utf-8"), f"rb_{name}")


def _fd_of(g, args, out, k):
    a, b = list(args), list(args)
    a[k] += H
    b[k] -= H
    return (g(*a)[out] - g(*b)[out]) / (2 * H)


@pytest.mark.parametrize("name", ["top_filled", "helper_filled"])
def test_a_filled_list_gradient_module_differentiated_again(name, tmp_path):
    g = getattr(_write(tmp_path, name, "--wrt", "x,w"), f"grad_{name}")
    for n in (1, 3, 5):
        args = (0.4, 0.7, n)
        # the first gradient itself, against central differences of the function
        f = getattr(src, name)
        want1 = [(f(0.4 + 1e-6, 0.7, n) - f(0.4 - 1e-6, 0.7, n)) / 2e-6,
                 (f(0.4, 0.7 + 1e-6, n) - f(0.4, 0.7 - 1e-6, n)) / 2e-6]
        np.testing.assert_allclose(g(*args), want1, rtol=1e-6, atol=1e-8)
        for out in (0, 1):
            got = s2s_ad.grad(g, wrt=("x", "w"), output=out)(*args)
            want = [_fd_of(g, args, out, 0), _fd_of(g, args, out, 1)]
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6,
                                       err_msg=f"{name} n={n} output {out}")


def test_the_second_module_runs_in_a_fresh_interpreter(tmp_path):
    first = tmp_path / "rb_first.py"
    assert cli.main(["grad", f"{src.__file__}:helper_filled", "--wrt", "x,w", "-o",
                     str(first)]) == 0
    second = tmp_path / "rb_second.py"
    assert cli.main(["grad", f"{first}:grad_helper_filled", "--wrt", "x,w", "--output", "1",
                     "-o", str(second)]) == 0
    g = import_source(str(tmp_path), first.read_text(encoding="utf-8"), "rb_first_mod")
    g = g.grad_helper_filled
    for n in (2, 4):
        script = (f"import json, sys\nsys.path.insert(0, {str(tmp_path)!r})\n"
                  "from rb_second import grad_grad_helper_filled as h\n"
                  "assert 's2s_ad' not in sys.modules\n"
                  f"print(json.dumps(list(h(0.4, 0.7, {n}))))\n")
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        run = subprocess.run([sys.executable, "-I", "-c", script], capture_output=True,
                             text=True, cwd=str(tmp_path), env=env, timeout=120)
        assert run.returncode == 0, run.stderr
        want = [_fd_of(g, (0.4, 0.7, n), 1, 0), _fd_of(g, (0.4, 0.7, n), 1, 1)]
        np.testing.assert_allclose(json.loads(run.stdout), want, rtol=1e-5, atol=1e-6)


def test_a_comprehension_gradient_module_differentiated_again(tmp_path):
    g = _write(tmp_path, "comprehension").grad_comprehension
    for cs in ([0.3, -1.2], [0.3, -1.2, 0.7, 2.0]):
        x = 0.8
        got = s2s_ad.grad(g, wrt=("cs", "x"), output=1)(cs, x)
        want_x = (g(cs, x + H)[1] - g(cs, x - H)[1]) / (2 * H)
        want_cs = []
        for i in range(len(cs)):
            up, down = list(cs), list(cs)
            up[i] += H
            down[i] -= H
            want_cs.append((g(up, x)[1] - g(down, x)[1]) / (2 * H))
        np.testing.assert_allclose(list(got[0]) + [got[1]], want_cs + [want_x], rtol=1e-5,
                                   atol=1e-6)


def test_the_adjoint_of_a_list_only_its_length_reads_is_a_list_of_zeros():
    def only_len(xs, a):
        t = 0.0
        for i in range(len(xs)):
            t = t + a * i
        return t

    dxs, da = s2s_ad.grad(only_len, wrt=(0, 1))([0.1, 0.2, 0.3], 0.5)
    assert dxs == [0.0, 0.0, 0.0] and da == pytest.approx(1.5 * 2)
    assert s2s_ad.grad(only_len, wrt=(0, 1))((0.1, 0.2), 0.5)[0] == (0.0, 0.0)


@pytest.mark.parametrize("name", ["helper_grown", "helper_grown_indexed"])
def test_a_helper_tape_holding_a_grown_list(name, tmp_path):
    """The helper's backward function pops its adjoint list (`dt5 = dxs.pop()`)
    and adds into its items between the pops (`dxs[-1] += dt1`, `dxs[i] += dt`)
    and after them (`dx = dxs[0]`): read as a stack at a counter `top`, the
    items at `top - 1` and `i % top` (the item Python's index names in the
    list as long as it is then)."""
    g = getattr(_write(tmp_path, name, "--wrt", "x,w"), f"grad_{name}")
    for n in (0, 1, 3, 5):
        args = (0.4, 0.7, n)
        for out in (0, 1):
            got = s2s_ad.grad(g, wrt=("x", "w"), output=out)(*args)
            want = [_fd_of(g, args, out, 0), _fd_of(g, args, out, 1)]
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6,
                                       err_msg=f"{name} n={n} output {out}")


def test_horner_third_derivative_from_its_modules(tmp_path):
    """`s2s-ad grad` of horner, of its gradient module, of that one: the
    second module's adjoint list (`ds_tape = [0.0] * len(s_tape)`, written
    by index, then popped: `ds_5 += ds_tape.pop()`) read as a stack at a
    counter. One third-derivative module for every length, against central
    differences of the second derivative module."""
    first, second, third = (tmp_path / f"h{k}.py" for k in (1, 2, 3))
    assert cli.main(["grad", "examples/horner.py:horner", "--wrt", "x", "-o", str(first)]) == 0
    assert cli.main(["grad", f"{first}:grad_horner", "--wrt", "x", "-o", str(second)]) == 0
    assert cli.main(["grad", f"{second}:grad_grad_horner", "--wrt", "x", "-o",
                     str(third)]) == 0
    g2 = import_source(str(tmp_path), second.read_text(encoding="utf-8"), "h2_mod")
    g3 = import_source(str(tmp_path), third.read_text(encoding="utf-8"), "h3_mod")
    for c in ([0.3, -1.2, 0.7, 2.0], [0.3, -1.2, 0.7, 2.0, 1.5, -0.4], [1.0]):
        for x in (0.8, -0.6):
            want = (g2.grad_grad_horner(c, x + H) - g2.grad_grad_horner(c, x - H)) / (2 * H)
            assert g3.grad_grad_grad_horner(c, x) == pytest.approx(want, rel=1e-6, abs=1e-6)
    # p(x) = 0.3 x³ - 1.2 x² + 0.7 x + 2: p''' = 6 · 0.3
    assert g3.grad_grad_grad_horner([0.3, -1.2, 0.7, 2.0], 0.8) == pytest.approx(6 * 0.3)


def test_second_derivatives_of_a_function_calling_a_helper_that_grows_a_list():
    """`hessian`, `hvp`, `grad(grad(f))`, `jvp(grad(f))` of a function whose
    helper grows a list in a loop (the helper's tape holds the list, its JVP
    the tangent list beside it), against central differences of the gradient;
    the NumPy LSTM pattern too."""
    f = src.helper_grown
    g = s2s_ad.grad(f, wrt=("x", "w"))
    for n in (0, 1, 4):
        args = (0.4, 0.7, n)
        want = np.array([[_fd_of(g, args, i, k) for k in (0, 1)] for i in (0, 1)])
        np.testing.assert_allclose(np.array(s2s_ad.hessian(f, wrt=("x", "w"))(*args),
                                            dtype=float), want, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(s2s_ad.hvp(f, wrt=("x", "w"))(*args, (1.0, -0.5)),
                                   want @ [1.0, -0.5], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(s2s_ad.grad(g, wrt=("x", "w"), output=1)(*args), want[1],
                                   rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(s2s_ad.jvp(g, wrt=("x", "w"))(*args, dx=1.0, dw=-0.5)[1],
                                   want @ [1.0, -0.5], rtol=1e-5, atol=1e-6)
    import lists_across_calls_src as across
    W = np.random.default_rng(0).normal(size=(3, 3)) * 0.5
    X = np.random.default_rng(1).normal(size=3)
    lstm = across.lstm_total
    gl = s2s_ad.grad(lstm, wrt=(0, 1))
    v = (np.full((3, 3), 0.1), np.full(3, 0.2))
    up, down = gl(W + H * v[0], X + H * v[1], 3), gl(W - H * v[0], X - H * v[1], 3)
    want = [(a - b) / (2 * H) for a, b in zip(up, down)]
    for got in (s2s_ad.hvp(lstm, wrt=(0, 1))(W, X, 3, v),
                s2s_ad.jvp(gl, wrt=(0, 1))(W, X, 3, dW=v[0], dx=v[1])[1]):
        for k in (0, 1):
            np.testing.assert_allclose(got[k], want[k], rtol=1e-5, atol=1e-7)


def test_a_list_made_in_a_branch_read_back(tmp_path):
    """`ys = [x] * n` in one arm: the reverse arm under the recorded decision
    makes its adjoint list from it (`dys = [0.0] * len(ys)`)."""
    g = _write(tmp_path, "in_branch", "--wrt", "x,w").grad_in_branch
    for x in (0.4, -0.5):
        for n in (1, 4):
            args = (x, 0.7, n)
            for out in (0, 1):
                got = s2s_ad.grad(g, wrt=("x", "w"), output=out)(*args)
                want = [_fd_of(g, args, out, 0), _fd_of(g, args, out, 1)]
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
