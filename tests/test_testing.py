"""s2s_ad.testing.assert_gradient and the pytest plugin's s2s_check marker.

A right gradient passes; a wrong one fails with a message that shows the
derivative, its reference, the generated one and a point — also when the
error is in a user rule, which s2s_ad.check alone takes as given."""

import math
import os
import re
import shutil
import subprocess
import sys
from importlib.metadata import entry_points

import pytest

import s2s_ad
from s2s_ad.testing import assert_gradient

import rules_src
import wrong_rule_src
from oracle import central_difference, close

HERE = os.path.dirname(os.path.abspath(__file__))


def plain(x, y):
    return x * x * y + y / x


def test_a_right_gradient_passes_and_is_proved():
    verdict = assert_gradient(plain, at={"x": 0.5, "y": 2.0})
    assert verdict.status == "proved"
    # The verdict's claim, against an independent reference.
    g = s2s_ad.grad(plain, wrt=("x", "y"))(0.5, 2.0)
    assert close(g[0], central_difference(plain, [0.5, 2.0], 0))
    assert close(g[1], central_difference(plain, [0.5, 2.0], 1))


def uses_sin(x):
    return math.sin(x) * x


def test_a_wrong_gradient_fails_with_both_expressions_and_a_point(wrong_sin):
    with pytest.raises(AssertionError) as info:
        assert_gradient(uses_sin, at={"x": 0.5})
    text = str(info.value)
    assert text.startswith("the gradient s2s-ad generates for uses_sin is wrong:")
    assert "duses_sin/dx differs from its reference" in text
    assert re.search(r"sympy\.diff : x\*cos\(x\) \+ sin\(x\)", text), text
    assert re.search(r"generated  : x\*sin\(x\) \+ sin\(x\)", text), text
    where = re.search(r"where      : at x=([-\d.e]+): sympy ([-\d.e]+), generated ([-\d.e]+)",
                      text)
    assert where, text
    x, reference, generated = map(float, where.groups())
    assert close(reference, math.cos(x) * x + math.sin(x), rtol=1e-5)
    assert close(generated, math.sin(x) * x + math.sin(x), rtol=1e-5)
    assert "MISMATCH: gradient of uses_sin" in text  # the verdict follows


@pytest.mark.parametrize("fn,kwargs,wrt", [
    (wrong_rule_src.direct, {}, ("x", "y")),
    (wrong_rule_src.through_helper, {}, ("x",)),
    (wrong_rule_src.in_loop, {"args": {"n": 3}}, ("x",)),
], ids=["direct", "through_helper", "in_loop"])
def test_a_wrong_user_rule_fails_every_function_that_calls_it(fn, kwargs, wrt):
    # check() alone takes the rule as given and calls it proved ...
    assert s2s_ad.check(fn, **kwargs).status == "proved"
    # ... assert_gradient compares with central differences of fn itself.
    with pytest.raises(AssertionError) as info:
        assert_gradient(fn, **kwargs)
    text = str(info.value)
    assert "the user rule is wrong: the rule of wrong_rule_src.softplus disagrees" in text
    point = [0.5 + 0.2 * i for i in range(len(wrt))]
    args = point + list(kwargs.get("args", {}).values())
    for i, name in enumerate(wrt):
        found = re.search(rf"d{fn.__name__}/d{name} differs from central differences of "
                          rf"{fn.__name__}\n    reference  : ([-\d.e]+).*\n"
                          rf"    generated  : ([-\d.e]+)", text)
        assert found, text
        reference, generated = map(float, found.groups())
        assert close(reference, central_difference(fn, args, i), rtol=1e-6)
        assert not close(generated, reference, rtol=1e-3)


@pytest.mark.parametrize("fn", [rules_src.uses_logaddexp, rules_src.rule_inside_helper])
def test_a_right_user_rule_passes_and_says_it_was_compared(fn):
    verdict = assert_gradient(fn)
    assert verdict.rules and any("central differences" in n for n in verdict.notes)


def test_numpy_function_with_shapes():
    import softmax_xent
    shapes = {"W": (3, 2), "X": (4, 3), "T": (4, 2)}
    verdict = assert_gradient(softmax_xent.softmax_xent, wrt="W", shapes=shapes)
    assert verdict.status == "agrees"  # finite differences: numeric, never proved
    with pytest.raises(AssertionError, match=r"is not proved \(proof=True\)"):
        assert_gradient(softmax_xent.softmax_xent, wrt="W", shapes=shapes, proof=True)


# The plugin, as a user meets it: a separate test suite run by pytest in a
# subprocess, loading s2s_ad.pytest_plugin through its pytest11 entry point.

SUITE = '''\
import math
import pytest
import wrong_rule_src


def good(x, y):
    return math.sin(x) * y


@pytest.mark.s2s_check(good, wrt="x", at={"x": 0.5})
def test_good():
    pass


@pytest.mark.s2s_check(wrong_rule_src.through_helper, wrt="x")
def test_wrong_rule():
    pass


@pytest.mark.s2s_check(wrt="x")
def test_no_function():
    pass


@pytest.mark.s2s_check(fn=good)
def test_fn_keyword():
    pass
'''


def _run_suite(tmp_path, *options):
    shutil.copy(os.path.join(HERE, "wrong_rule_src.py"), tmp_path)
    (tmp_path / "test_user.py").write_text(SUITE)
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTEST_DISABLE_PLUGIN_AUTOLOAD", "PYTEST_PLUGINS", "PYTEST_ADDOPTS")}
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
                           "-W", "error::pytest.PytestUnknownMarkWarning", *options],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)


def test_the_plugin_is_an_installed_pytest11_entry_point():
    plugins = {e.name: e.value for e in entry_points(group="pytest11")}
    assert plugins.get("s2s_ad") == "s2s_ad.pytest_plugin"


def test_marked_tests_prove_or_fail_with_the_readable_message(tmp_path):
    done = _run_suite(tmp_path, "-rA")
    out = done.stdout + done.stderr
    assert done.returncode == 1, out
    assert re.search(r"PASSED test_user.py::test_good\b", out), out
    assert "PASSED test_user.py::test_fn_keyword" in out, out
    assert "FAILED test_user.py::test_wrong_rule" in out, out
    assert "FAILED test_user.py::test_no_function" in out, out
    assert "AssertionError: the gradient s2s-ad generates for through_helper is wrong" in out
    assert "dthrough_helper/dx differs from central differences of through_helper" in out
    assert "the user rule is wrong: the rule of wrong_rule_src.softplus" in out
    assert "takes the function to check as its one positional argument" in out
    assert "PytestUnknownMarkWarning" not in out


def test_without_the_plugin_the_marker_is_unknown(tmp_path):
    # The marker comes from the entry point, not from a conftest: turning the
    # plugin off makes it unknown (an error under -W error).
    done = _run_suite(tmp_path, "-p", "no:s2s_ad")
    assert done.returncode != 0
    assert "PytestUnknownMarkWarning" in done.stdout + done.stderr
