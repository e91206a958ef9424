"""Verification itself: it proves right gradients and catches wrong ones."""

import math

import pytest

import corpus_scalar
import s2s_ad
from s2s_ad.rules import RULES, Rule


@pytest.mark.s2s_check(corpus_scalar.seed, proof=True)
@pytest.mark.s2s_check(corpus_scalar.trig_mix, proof=True)
@pytest.mark.s2s_check(corpus_scalar.maximum, at={"x": 0.9, "y": 0.2, "z": 0.5}, proof=True)
def test_proves_the_seed_and_corpus_functions():
    """The s2s_check markers (s2s_ad.pytest_plugin) prove each gradient."""


@pytest.fixture
def wrong_cos(monkeypatch):
    """d cos(x)/dx = +sin(x): a sign error in one rule."""
    monkeypatch.setitem(RULES, "math.cos", Rule("math.cos", "math.cos(x)", ("math.sin(x)",)))


def test_catches_a_wrong_rule(wrong_cos):
    verdict = s2s_ad.check(corpus_scalar.trig_mix)
    assert verdict.status == "mismatch" and not verdict.ok
    assert "MISMATCH" in str(verdict)


def test_catches_a_wrong_rule_numerically_too(wrong_cos, monkeypatch):
    # With the exact steps and simplify disabled, the numeric fallback alone
    # must still refute it.
    from s2s_ad import verify_proof
    monkeypatch.setattr(verify_proof, "EXACT", False)
    monkeypatch.setattr(verify_proof, "SIMPLIFY_LIMIT", -1)
    verdict = s2s_ad.check(corpus_scalar.trig_mix)
    assert verdict.status == "mismatch"


def test_numeric_fallback_says_so(monkeypatch):
    from s2s_ad import verify_proof
    monkeypatch.setattr(verify_proof, "EXACT", False)
    monkeypatch.setattr(verify_proof, "SIMPLIFY_LIMIT", -1)
    verdict = s2s_ad.check(corpus_scalar.rosenbrock2)
    assert verdict.status == "agrees"
    assert "agrees numerically at 8 random points" in str(verdict)


def test_branches_are_reported():
    verdict = s2s_ad.check(corpus_scalar.maximum, at={"x": 0.9, "y": 0.2, "z": 0.5})
    assert verdict.ok
    assert "decided at" in str(verdict) and "x >= y" in str(verdict)


def swelling(x):
    # Each step squares the size of the symbolic expression's derivative.
    for _ in range(40):
        x = math.sin(x) * x + 0.5
    return x


SWELLING_BUDGET = 3.0
"""Seconds for checking ``swelling``: its symbolic derivative never finishes,
while lowering it and evaluating it at the points must (0.5 s was too little
on a loaded machine)."""


def test_symbolic_time_budget_falls_back_to_finite_differences():
    verdict = s2s_ad.check(swelling, timeout=SWELLING_BUDGET)
    assert verdict.status == "agrees", str(verdict)
    assert "not a proof" in str(verdict) and "central differences" in str(verdict)


def test_fallback_still_catches_a_wrong_rule(monkeypatch):
    # Compiled gradients are cached on the function's source, not on the rule
    # table: clear the cache around a deliberately broken table.
    s2s_ad.clear_cache()
    monkeypatch.setitem(RULES, "math.sin", Rule("math.sin", "math.sin(x)", ("-math.cos(x)",)))
    try:
        verdict = s2s_ad.check(swelling, timeout=SWELLING_BUDGET)
    finally:
        s2s_ad.clear_cache()
    assert verdict.status == "mismatch", str(verdict)
