"""`check` of a function with an int parameter (a `range` bound, an index
passed to a helper) that `args=`/`--args` does not give: it runs with a
value it states (3, or less where 3 indexes past a list; the parameter's
own int default), instead of failing on `range(Symbol)`."""

import math
import os
import subprocess
import sys

import numpy as np
import pytest
import sympy

import s2s_ad

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def sines(x, n):
    s = 0.0
    for i in range(n):
        s = s + math.sin(x * i)
    return s


def powers(x, m):
    s = 0.0
    for i in range(m):
        s = s + x ** i
    return s


def through_helper(x, n):
    return powers(x, n) * 2.0


def get(xs, i):
    return xs[i] * xs[i]


def picked(xs, i):
    return get(xs, i) + xs[0]


def with_default(x, n=2):
    for _ in range(n):
        x = math.sin(x)
    return x


def array_sines(w, n):
    s = 0.0
    for i in range(n):
        s = s + np.sum(np.sin(w * i))
    return s


x = sympy.Symbol("x", real=True)


def test_a_range_bound_is_given_three_and_the_report_says_so():
    verdict = s2s_ad.check(sines)
    assert verdict.status == "proved", str(verdict)
    # by hand: d/dx (sin(0) + sin(x) + sin(2x))
    assert sympy.simplify(verdict.results[0].got - (sympy.cos(x) + 2 * sympy.cos(2 * x))) == 0
    line = sines.__code__.co_firstlineno + 2
    assert f"n=3 is a value s2s-ad chose for the int parameter n (a `range` bound on line {line})" \
        in str(verdict)


def test_args_overrides_the_value_chosen():
    verdict = s2s_ad.check(sines, args={"n": 4})
    assert verdict.status == "proved", str(verdict)
    expected = sympy.cos(x) + 2 * sympy.cos(2 * x) + 3 * sympy.cos(3 * x)
    assert sympy.simplify(verdict.results[0].got - expected) == 0
    assert "chose" not in str(verdict)


def test_an_int_default_is_used_and_named():
    verdict = s2s_ad.check(with_default)
    assert verdict.status == "proved", str(verdict)
    assert sympy.simplify(verdict.results[0].got
                          - sympy.diff(sympy.sin(sympy.sin(x)), x)) == 0
    assert "n=2 is its default" in str(verdict)


def test_a_parameter_a_helper_uses_as_a_bound():
    verdict = s2s_ad.check(through_helper)
    assert verdict.status == "proved", str(verdict)
    assert sympy.simplify(verdict.results[0].got - sympy.diff(2 * (1 + x + x * x), x)) == 0
    assert "passed to `powers`, whose `m` is used as an integer" in str(verdict)


def test_an_index_past_the_list_takes_a_smaller_value():
    verdict = s2s_ad.check(picked, lengths={"xs": 3})
    assert verdict.status == "proved", str(verdict)
    assert "i=2 is a value s2s-ad chose" in str(verdict)
    verdict = s2s_ad.check(picked, lengths={"xs": 1})
    assert verdict.status == "proved", str(verdict)
    assert "i=0 is a value s2s-ad chose" in str(verdict)


def test_second_order_and_forward_mode_choose_it_too():
    second = s2s_ad.check(sines, order=2)
    assert second.status == "proved", str(second)
    assert sympy.simplify(second.results[0].got
                          + sympy.sin(x) + 4 * sympy.sin(2 * x)) == 0
    forward = s2s_ad.check(sines, mode="forward")
    assert forward.status == "proved" and "n=3" in str(forward), str(forward)


def test_numpy_code_is_checked_with_it():
    verdict = s2s_ad.check(array_sines, shapes={"w": (3,)})
    assert verdict.status == "agrees" and "n=3 is a value" in str(verdict), str(verdict)


def test_differentiating_it_is_still_refused_where_it_is_used():
    with pytest.raises(s2s_ad.SourceError, match="`range` bound"):
        s2s_ad.check(sines, wrt="n")


def test_a_wrong_rule_is_a_mismatch_at_the_value_chosen(wrong_sin):  # tests/conftest.py
    verdict = s2s_ad.check(sines)
    assert verdict.status == "mismatch", str(verdict)


def test_cli(tmp_path):
    (tmp_path / "bound.py").write_text(
        "import math\n\ndef f(x, n):\n    s = 0.0\n    for i in range(n):\n"
        "        s = s + math.sin(x * i)\n    return s\n")
    env = dict(os.environ, PYTHONPATH=ROOT)

    def run(*args):
        return subprocess.run([sys.executable, "-m", "s2s_ad", "check",
                               str(tmp_path / "bound.py") + ":f", *args], cwd=ROOT, env=env,
                              capture_output=True, text=True, timeout=300)
    r = run()
    assert r.returncode == 0 and r.stdout.startswith("PROVED: gradient of f"), r
    assert "n=3 is a value s2s-ad chose" in r.stdout and "--args n=K" in r.stdout
    r = run("--args", "n=5")
    assert r.returncode == 0 and "4*cos(4*x)" in r.stdout and "chose" not in r.stdout, r
