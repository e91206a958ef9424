"""`check(..., order=2)` / `s2s-ad check --order 2`: every Hessian entry of
s2s_ad.hvp (the gradient of the forward-mode module) against sympy.diff taken twice."""

import math
import os
import subprocess
import sys

import pytest
import sympy

import s2s_ad
from s2s_ad.rules import RULES, Rule

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def mixed(x, y):
    return math.sin(x) * y * y + math.exp(x * y)


def ratio(a, x):
    b = x * x
    return a * b / (1.0 + a)


def uses_sin(x, y):
    return math.sin(x) * y


def looped(x, n):
    for i in range(n):
        x = x * x
    return x


def test_every_entry_of_the_hessian_is_proved():
    verdict = s2s_ad.check(mixed, order=2)
    assert verdict.status == "proved", str(verdict)
    assert [r.name for r in verdict.results] == ["x,x", "x,y", "y,x", "y,y"]
    x, y = sympy.symbols("x y", real=True)
    reference = sympy.diff(sympy.sin(x) * y * y + sympy.exp(x * y), x, y)  # independent
    got = {r.name: r.got for r in verdict.results}
    assert sympy.simplify(got["x,y"] - reference) == 0
    text = str(verdict)
    assert text.startswith("PROVED: second derivatives of mixed")
    assert "d²mixed/dxdy: proved" in text


def test_wrt_picks_the_entries():
    verdict = s2s_ad.check(ratio, wrt="x", order=2)
    assert verdict.status == "proved" and [r.name for r in verdict.results] == ["x,x"]


@pytest.fixture
def wrong_cos(monkeypatch):
    """d cos(x)/dx = +sin(x): the first derivative of sin(x)·y never uses it,
    its second derivative does."""
    s2s_ad.clear_cache()
    monkeypatch.setitem(RULES, "math.cos", Rule("math.cos", "math.cos(x)", ("math.sin(x)",)))
    yield
    s2s_ad.clear_cache()


def test_a_wrong_second_derivative_is_a_mismatch(wrong_cos):
    assert s2s_ad.check(uses_sin).status == "proved"
    verdict = s2s_ad.check(uses_sin, order=2)
    assert verdict.status == "mismatch", str(verdict)
    bad = [r.name for r in verdict.results if r.status == "mismatch"]
    assert bad == ["x,x"], str(verdict)


def listed(xs, y):
    return xs[0] * xs[1] * y


def test_a_loop_is_proved():
    """The loop's gradient keeps a tape; the module hvp runs is proved all the same."""
    verdict = s2s_ad.check(looped, args={"n": 3}, order=2)
    assert verdict.status == "proved", str(verdict)
    x = sympy.Symbol("x", real=True)
    assert sympy.simplify(verdict.results[0].got - 56 * x ** 6) == 0  # d²(x⁸)/dx², by hand


def test_a_list_parameter_is_refused_with_the_reason():
    with pytest.raises(s2s_ad.S2SError, match="lengths="):
        s2s_ad.check(listed, lengths={"xs": 2}, order=2)


def test_bad_orders_and_combinations_are_refused():
    with pytest.raises(s2s_ad.S2SError, match="order must be 1"):
        s2s_ad.check(mixed, order=3)
    with pytest.raises(s2s_ad.S2SError, match="order=2"):
        s2s_ad.check(mixed, order=2, mode="forward")


def run_cli(*args):
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, "-m", "s2s_ad", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)


def test_cli_order_2(tmp_path):
    (tmp_path / "second.py").write_text(
        "import math\n\ndef f(x, y):\n    return math.sin(x) * y * y + math.exp(x * y)\n\n"
        "def g(x, n):\n    for i in range(n):\n        x = x * x\n    return x\n")
    r = run_cli("check", str(tmp_path / "second.py") + ":f", "--order", "2")
    assert r.returncode == 0 and r.stdout.startswith("PROVED: second derivatives of f"), r
    r = run_cli("check", str(tmp_path / "second.py") + ":g", "--order", "2", "--args", "n=2")
    assert r.returncode == 0 and r.stdout.startswith("PROVED: second derivatives of g"), r
    r = run_cli("check", str(tmp_path / "second.py") + ":f", "--order", "3")
    assert r.returncode == 2 and "--order" in r.stderr
