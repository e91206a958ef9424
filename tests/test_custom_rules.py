"""User-defined derivative rules: registration, the finite-difference check,
their use in generated code, and how `check` reports them."""

import math
import subprocess
import sys
import os

import pytest

import rules_src as r
import s2s_ad
from oracle import close, fd_gradient
from s2s_ad import RuleError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_gradient_through_a_rule_matches_finite_differences():
    got = s2s_ad.grad(r.uses_logaddexp, wrt=(0, 1))(0.3, -1.2)
    want = fd_gradient(r.uses_logaddexp, [0.3, -1.2], [0, 1])
    assert close(got[0], want[0]) and close(got[1], want[1])


def test_the_generated_code_imports_and_calls_the_users_pair():
    text = s2s_ad.gradient_source(r.uses_logaddexp)
    assert "from rules_src import logaddexp_fwd, logaddexp_bwd" in text
    assert "logaddexp_fwd(" in text and "logaddexp_bwd(" in text
    assert "def logaddexp_fwd" not in text  # the user's own, not a generated one
    assert "s2s_ad" not in text


def test_a_rule_used_inside_a_helper():
    got = s2s_ad.grad(r.rule_inside_helper, wrt=(0, 1))(0.4, 0.9)
    want = fd_gradient(r.rule_inside_helper, [0.4, 0.9], [0, 1])
    assert close(got[0], want[0]) and close(got[1], want[1])
    text = s2s_ad.gradient_source(r.rule_inside_helper)
    assert text.count("import logaddexp_fwd") == 1


def test_a_function_s2s_ad_cannot_read_works_through_its_rule():
    with pytest.raises(s2s_ad.SourceError, match="try"):
        s2s_ad.gradient_source(r.opaque)
    s2s_ad.defvjp(r.opaque, r.opaque_fwd, r.opaque_bwd, check=True)
    try:
        got = s2s_ad.grad(r.uses_opaque)(0.8)
        assert close(got, fd_gradient(r.uses_opaque, [0.8], [0])[0])
    finally:
        del r.opaque.__s2s_ad_vjp__


def test_registration_without_importing_s2s_ad():
    got = s2s_ad.grad(r.uses_opaque2)(1.1)
    assert close(got, fd_gradient(r.uses_opaque2, [1.1], [0])[0])


def test_check_true_catches_a_wrong_rule():
    with pytest.raises(RuleError, match="disagrees with finite differences"):
        s2s_ad.defvjp(r.opaque, r.opaque_fwd, r.opaque_bwd_wrong, check=True)
    assert not hasattr(r.opaque, "__s2s_ad_vjp__")


def test_check_true_catches_a_malformed_bwd():
    with pytest.raises(RuleError, match="tuple"):
        s2s_ad.defvjp(r.opaque, r.opaque_fwd, r.opaque_bwd_not_tuple, check=True)


def test_check_at_given_points():
    rule_fn = s2s_ad.defvjp(r.opaque, r.opaque_fwd, r.opaque_bwd, check=True,
                            at=[(0.1,), (-2.0,), (5.0,)])
    try:
        assert rule_fn is r.opaque
        assert r.opaque.__s2s_ad_vjp__.checked_at == [(0.1,), (-2.0,), (5.0,)]
    finally:
        del r.opaque.__s2s_ad_vjp__


def test_rule_functions_must_be_importable():
    def local_fwd(x):
        return r.opaque(x), x

    with pytest.raises(RuleError, match="top level"):
        s2s_ad.defvjp(r.opaque, local_fwd, r.opaque_bwd)


def test_check_reports_that_the_gradient_rests_on_a_user_rule():
    verdict = s2s_ad.check(r.uses_logaddexp)
    assert verdict.ok, str(verdict)
    assert verdict.rules and "logaddexp" in verdict.rules[0]
    assert "checked against finite differences" in verdict.rules[0]
    assert "rests on user derivative rules" in str(verdict)
    unchecked = s2s_ad.check(r.uses_opaque2)
    assert "not checked" in unchecked.rules[0]


@pytest.mark.s2s_check(r.uses_logaddexp, wrt=("x", "y"))
@pytest.mark.s2s_check(r.rule_inside_helper, at={"x": 0.3, "y": 1.7})
def test_gradients_through_rules_agree_with_finite_differences():
    """assert_gradient (through the s2s_check markers) proves the chain rule
    around each rule and compares the whole gradient, rules included, with
    central differences of the function."""


def test_check_proves_the_chain_rule_around_a_rule():
    # The symbolic check keeps the rule's derivative as an unknown D0_...:
    # the chain rule around it is still proved.
    verdict = s2s_ad.check(r.rule_inside_helper)
    assert verdict.status == "proved", str(verdict)
    assert "D0_logaddexp" in str(verdict)


def test_cli_check_reports_the_rule():
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, os.path.join(ROOT, "tests")]))
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "check", "rules_src.uses_logaddexp"],
                          capture_output=True, text=True, env=env, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert "user derivative rules" in done.stdout


def test_the_vjp_of_a_rule_itself_matches_math():
    # logaddexp's partials are softmax weights: they sum to one.
    value, vjp_fn = s2s_ad.vjp(r.helper_with_rule, 0.3)
    assert close(value, r.helper_with_rule(0.3))
    wa = math.exp(0.3) / (math.exp(0.3) + math.exp(0.6))
    assert close(vjp_fn(1.0)[0], wa + 2.0 * (1.0 - wa))


def test_a_rule_given_as_an_attribute_does_not_defeat_the_cache():
    s2s_ad.clear_cache()
    s2s_ad.grad(r.uses_opaque2)
    s2s_ad.grad(r.uses_opaque2)
    assert s2s_ad.cache_info().misses == 1
