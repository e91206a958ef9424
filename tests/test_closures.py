"""Nested ``def``, ``lambda`` and closures: each gradient against central
differences, through ``grad``, ``vjp`` and the CLI's file in a fresh
interpreter; refusals located."""

import os
import subprocess
import sys

import numpy as np
import pytest

import closures_src as c
import s2s_ad
from array_oracle import fd_gradient as array_fd
from modules import run_generated
from oracle import close, fd_gradient

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = os.path.dirname(os.path.abspath(__file__))

SCALAR = [
    (c.nested_reads_outer, [0.7, -1.3], [0, 1]),
    (c.late_binding, [0.7, -1.3], [0, 1]),
    (c.nested_in_loop, [0.4, 4], [0]),
    (c.nested_calls_nested, [0.3, 0.8], [0, 1]),
    (c.nested_with_branch_and_loop, [0.9, 0.6], [0, 1]),
    (c.lambdas, [0.3, 0.7], [0, 1]),
    (c.calls_a_closure_user, [0.3, 0.7], [0, 1]),
    (c.recursive_nested, [0.7], [0]),
]


@pytest.mark.parametrize("fn, point, wrt", SCALAR, ids=lambda v: getattr(v, "__name__", ""))
def test_nested_functions_against_finite_differences(fn, point, wrt):
    got = s2s_ad.grad(fn, wrt=tuple(wrt))(*point)
    want = fd_gradient(fn, point, wrt)
    assert all(close(g, w) for g, w in zip(got, want)), (got, want)


@pytest.mark.parametrize("fn, point, wrt", SCALAR, ids=lambda v: getattr(v, "__name__", ""))
def test_nested_functions_through_vjp(fn, point, wrt):
    value, pull = s2s_ad.vjp(fn, *point)
    assert close(value, fn(*point))
    got = pull(0.5)
    want = fd_gradient(fn, point, wrt)
    assert all(close(got[i], 0.5 * w) for i, w in zip(wrt, want))


def test_late_binding_reads_the_value_at_the_call():
    # a = y * 2x, then c = 3y: h(x) = 3xy; d/dx = 2y + 3y, d/dy = 2x + 3x
    dx, dy = s2s_ad.grad(c.late_binding, wrt=(0, 1))(0.7, -1.3)
    assert close(dx, 5 * -1.3) and close(dy, 5 * 0.7)


def test_nested_function_in_a_loop_of_the_caller():
    def caller(x, y):
        s = 0.0
        for i in range(3):
            s = s + c.nested_calls_nested(x + i * 0.1, y)
        return s
    # caller is defined here: its source is this file, which s2s-ad reads
    got = s2s_ad.grad(caller, wrt=(0, 1))(0.3, 0.8)
    want = fd_gradient(caller, [0.3, 0.8], [0, 1])
    assert all(close(g, w) for g, w in zip(got, want))


def test_kmeans_objective_with_a_nested_helper():
    rng = np.random.default_rng(3)
    points, centers = rng.normal(size=(7, 3)), rng.normal(size=(4, 3))
    dp, dc = s2s_ad.grad(c.kmeans_cost, wrt=(0, 1))(points, centers)
    np.testing.assert_allclose(dp, array_fd(c.kmeans_cost, [points, centers], 0), rtol=1e-5)
    np.testing.assert_allclose(dc, array_fd(c.kmeans_cost, [points, centers], 1), rtol=1e-5)
    _, pull = s2s_ad.vjp(c.kmeans_cost, points, centers)
    np.testing.assert_allclose(pull(2.0)[1], 2.0 * dc)


def test_closure_from_a_factory_captures_arrays_and_numbers():
    data = np.array([0.5, -1.0, 2.0])
    loss = c.make_loss(data, 0.25)
    got = s2s_ad.grad(loss)(1.3)
    assert close(float(got), float(array_fd(loss, [1.3], 0)))
    value, pull = s2s_ad.vjp(loss, 1.3)
    assert close(value, loss(1.3)) and len(pull(1.0)) == 1
    assert close(float(pull(1.0)[0]), float(got))


def test_captured_values_are_read_on_every_call():
    data = np.array([0.5, -1.0, 2.0])
    loss = c.make_loss(data, 0.25)
    dloss = s2s_ad.grad(loss)
    before = float(dloss(1.3))
    data *= 2.0       # the closure sees the change; so does its gradient
    after = float(dloss(1.3))
    assert not close(before, after)
    assert close(after, float(array_fd(loss, [1.3], 0)))


def test_closure_captures_helper_functions_and_late_values():
    got = s2s_ad.grad(c.scalar_loss, wrt=(0, 1))(0.3, 0.7)
    want = fd_gradient(c.scalar_loss, [0.3, 0.7], [0, 1])
    assert all(close(g, w) for g, w in zip(got, want))
    f = c.make_counter()     # n = 2.0 when f is made and called
    assert close(s2s_ad.grad(f)(0.3), 2.0)


def test_captured_variables_have_no_gradient():
    loss = c.make_loss(np.ones(2), 0.25)
    assert close(float(s2s_ad.grad(loss, wrt=None)(0.5)), float(array_fd(loss, [0.5], 0)))
    with pytest.raises(s2s_ad.SourceError, match="captures from the function that made it"):
        s2s_ad.grad(loss, wrt="data")


def test_closure_through_the_cli_takes_captured_values_as_keywords(tmp_path):
    out = tmp_path / "g_loss.py"
    env = dict(os.environ, PYTHONPATH=ROOT)
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "grad", "closures_src.scalar_loss",
                           "--wrt", "w,v", "-o", str(out)], cwd=HERE, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "def grad_loss(w, v, *, a, b, dout=1.0):" in out.read_text()
    probe = ("import g_loss\nprint(repr(g_loss.grad_loss(0.3, 0.7, a=1.5, b=0.25)))")
    run = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True,
                         text=True, env={"PATH": os.environ.get("PATH", "")}, timeout=120)
    assert run.returncode == 0, run.stderr
    got = eval(run.stdout)
    want = fd_gradient(c.scalar_loss, [0.3, 0.7], [0, 1])
    assert all(close(g, w) for g, w in zip(got, want))


@pytest.mark.parametrize("name, point", [("nested_calls_nested", (0.3, 0.8)),
                                         ("lambdas", (0.3, 0.7)),
                                         ("kmeans_cost", None)])
def test_cli_file_in_a_fresh_interpreter(tmp_path, name, point):
    out = tmp_path / "g_mod.py"
    env = dict(os.environ, PYTHONPATH=ROOT)
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "grad", f"closures_src.{name}",
                           "--wrt", "0,1", "-o", str(out)], cwd=HERE, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    fn = getattr(c, name)
    if point is None:
        rng = np.random.default_rng(5)
        point = (rng.normal(size=(5, 2)), rng.normal(size=(3, 2)))
    got = run_generated(tmp_path, "g_mod", f"grad_{name}", point)
    for i in (0, 1):
        np.testing.assert_allclose(got[i], array_fd(fn, list(point), i), rtol=1e-5, atol=1e-8)


def test_a_nested_function_given_another_name():
    # `g = h`, then `g(x)`: refused until a local name for a function was
    # read as that function (callsites.function_alias)
    want = (c.nested_used_as_value(0.5 + 1e-6) - c.nested_used_as_value(0.5 - 1e-6)) / 2e-6
    assert abs(s2s_ad.grad(c.nested_used_as_value)(0.5) - want) < 1e-7


def test_a_closure_reading_its_factory_s_number_called_by_the_closure_differentiated():
    """`loss` calls `bump`, a closure reading the factory's `a`: a constant of
    `bump`'s code (was refused: captured data were passed to the function
    differentiated only)."""
    want = (c.helper_closure(0.5 + 1e-6) - c.helper_closure(0.5 - 1e-6)) / 2e-6
    assert abs(s2s_ad.grad(c.helper_closure)(0.5) - want) < 1e-7


@pytest.mark.parametrize("fn, fragment, message", [
    (c.defined_in_branch, "def h", "inside an `if`"),
    (c.nested_nonlocal, "nonlocal", "`nonlocal`"),
], ids=lambda v: getattr(v, "__name__", None))
def test_refusals_are_located(fn, fragment, message):
    with pytest.raises(s2s_ad.SourceError, match=message) as info:
        s2s_ad.grad(fn)(0.5)
    err = info.value
    assert err.file.endswith("closures_src.py") and err.line > 0
    assert fragment in err.source_line
