"""Static arguments (strings, None, bools): they select code, get no
adjoint, and the code is generated per value (tests against central
differences; through grad, vjp, jvp and the CLI)."""

import os
import subprocess
import sys

import numpy as np
import pytest

import s2s_ad
import static_src as s
from array_oracle import fd_gradient as array_fd
from oracle import close, fd_gradient

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = os.path.dirname(os.path.abspath(__file__))

CALLS = [
    (s.loss, (0.3, 0.7), {}),
    (s.loss, (2.5, -0.4), {"mode": "l1"}),
    (s.loss, (0.3, 0.7), {"mode": "huber", "reduce": 3.0}),
    (s.loss, (0.3, 0.7), {"scale": False, "reduce": 2.0}),
    (s.loss, (0.3, 0.7, "l1", None, False), {}),
    (s.no_defaults, (0.4, "a", False), {}),
    (s.no_defaults, (0.4, "c", False), {}),
    (s.no_defaults, (0.4, "b", True), {}),
    (s.passes_on, (0.4, "l1"), {}),
    (s.passes_on, (0.4, "other"), {}),
    (s.local_static, (0.4,), {}),
    (s.local_static, (0.4,), {"mode": "slow"}),
    (s.none_tested_value, (0.4,), {}),
    (s.none_tested_value, (0.4, None), {}),
]


def numeric_positions(args):
    return [i for i, a in enumerate(args) if isinstance(a, float)]


@pytest.mark.parametrize("fn, args, kwargs", CALLS)
def test_static_arguments_select_the_code(fn, args, kwargs):
    wrt = numeric_positions(args)
    got = s2s_ad.grad(fn, wrt=tuple(wrt))(*args, **kwargs)
    want = fd_gradient(lambda *a: fn(*a, **kwargs), list(args), wrt)
    assert all(close(g, w) for g, w in zip(got, want)), (got, want)


@pytest.mark.parametrize("fn, args, kwargs", CALLS[:6])
def test_through_vjp_and_jvp(fn, args, kwargs):
    wrt = numeric_positions(args)
    want = fd_gradient(lambda *a: fn(*a, **kwargs), list(args), wrt)
    value, pull = s2s_ad.vjp(fn, *args, **kwargs)
    assert close(value, fn(*args, **kwargs))
    cot = pull(2.0)
    assert all(close(cot[i], 2.0 * w) for i, w in zip(wrt, want))
    tangents = {f"d{n}": 0.0 for n in ("x", "y") if n != "x"}
    value, tangent = s2s_ad.jvp(fn, wrt=0)(*args, dx=1.0, **kwargs)
    assert close(value, fn(*args, **kwargs)) and close(tangent, want[0]), tangents


def test_static_arguments_in_a_loop_and_value_and_grad():
    for mode in ("sum", "prod"):
        f = lambda x: s.loop_with_mode(x, 4, mode)          # noqa: E731
        value, g = s2s_ad.value_and_grad(s.loop_with_mode)(0.3, 4, mode)
        assert close(value, f(0.3)) and close(g, fd_gradient(f, [0.3], [0])[0])


def test_none_default_or_an_array():
    rng = np.random.default_rng(0)
    w, X, r = rng.normal(size=3), rng.normal(size=(5, 3)), rng.normal(size=5)
    df = s2s_ad.grad(s.optional_array)
    for kw in ({}, {"_range": r}, {"kind": "mean"}, {"_range": r, "kind": "mean"}):
        got = df(w, X, **kw)
        want = array_fd(lambda w_: s.optional_array(w_, X, **kw), [w], 0)
        np.testing.assert_allclose(got, want, rtol=1e-5)


def test_the_generated_code_checks_the_static_value():
    text = s2s_ad.gradient_source(s.loss, wrt=(0, 1), statics={"mode": "l1"})
    assert "if mode != 'l1':" in text and "if reduce is not None:" in text
    assert "if scale is not True:" in text
    ns = {}
    exec(compile(text, "<grad>", "exec"), ns)
    with pytest.raises(ValueError, match="generated for mode='l1'"):
        ns["grad_loss"](0.3, 0.7, "l2")
    got = ns["grad_loss"](0.3, 0.7, "l1")
    want = fd_gradient(lambda x, y: s.loss(x, y, "l1"), [0.3, 0.7], [0, 1])
    assert all(close(g, w) for g, w in zip(got, want))


def test_a_parameter_tested_for_none_is_checked_when_lowered_as_a_number():
    text = s2s_ad.gradient_source(s.none_tested_value, wrt=0, statics={})
    ns = {}
    exec(compile(text, "<grad>", "exec"), ns)
    assert close(ns["grad_none_tested_value"](0.4, 0.5), 0.5)
    with pytest.raises(ValueError, match="generated for r not None"):
        ns["grad_none_tested_value"](0.4, None)


def test_static_arguments_have_no_gradient():
    with pytest.raises(s2s_ad.SourceError, match="static argument"):
        s2s_ad.grad(s.loss, wrt="mode")(0.3, 0.7)
    assert len(s2s_ad.vjp(s.loss, 0.3, 0.7, "l1")[1](1.0)) == 5


def test_cli_static_flag_and_fresh_interpreter(tmp_path):
    out = tmp_path / "g_static.py"
    env = dict(os.environ, PYTHONPATH=ROOT)
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "grad", "static_src.loss", "--wrt",
                           "x,y", "--static", "mode=l1,scale=False", "--static", "reduce=None",
                           "-o", str(out)], cwd=HERE, env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    probe = ("import g_static\nprint(repr(g_static.grad_loss(0.3, 0.7, 'l1', scale=False)))\n"
             "try:\n    g_static.grad_loss(0.3, 0.7)\nexcept ValueError as e:\n"
             "    print(repr(str(e)))\n")
    run = subprocess.run([sys.executable, "-c", probe], cwd=tmp_path, capture_output=True,
                         text=True, env={"PATH": os.environ.get("PATH", "")}, timeout=120)
    assert run.returncode == 0, run.stderr
    first, second = run.stdout.splitlines()
    want = fd_gradient(lambda x, y: s.loss(x, y, "l1", scale=False), [0.3, 0.7], [0, 1])
    assert all(close(g, w) for g, w in zip(eval(first), want))
    assert "generated for mode='l1'" in second


def test_cli_static_names_a_parameter(tmp_path):
    env = dict(os.environ, PYTHONPATH=ROOT)
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "grad", "static_src.loss",
                           "--static", "nope=1"], cwd=HERE, env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 2 and "has no such parameter" in done.stderr


@pytest.mark.parametrize("fn, fragment, message", [
    (s.string_arithmetic, "mode", "'a' is used where a number is expected"),
    (s.string_vs_number, "x == \"a\"", "compares the parameter `x`, lowered as a number"),
    (s.string_vs_local, "y == \"a\"", "compares a string or None"),
    # `r is None` would be decided while lowering, but r is None on one path
    # only: refused (folding it would give the other path's gradient).
    (s.none_on_one_path, "if x > 0", "is None on one side of this branch"),
    (s.none_carried_by_a_loop, "for i in range(3)", "is None before this loop"),
])
def test_refusals_are_located(fn, fragment, message):
    with pytest.raises(s2s_ad.SourceError, match=message) as info:
        s2s_ad.grad(fn)(0.5)
    assert info.value.file.endswith("static_src.py") and fragment in info.value.source_line


def test_a_none_default_always_given_a_number():
    # The code for y=None is refused (None * x); the code for a number is
    # made when a call passes one, and a call leaving y out is refused.
    df = s2s_ad.grad(s.none_default_given_a_number, wrt=(0, 1))
    got = df(0.7, 1.5)
    want = fd_gradient(s.none_default_given_a_number, [0.7, 1.5], [0, 1])
    assert all(close(g, w) for g, w in zip(got, want))
    with pytest.raises(s2s_ad.SourceError, match="None is used where a number is expected"):
        df(0.7)
