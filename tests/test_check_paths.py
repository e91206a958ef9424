"""`check` covers every path it finds: the comparisons are decided at the
sample point and at seeded random points, and the gradient is proved on each
distinct path (s2s_ad.verify_paths); loops of a few iterations are proved by
the exact normal form (s2s_ad.verify_proof); the time budget is shared."""

import os
import subprocess
import sys
import time

import pytest
import sympy

import check_paths_src as src
import s2s_ad
from s2s_ad import verify_proof
from s2s_ad.rules import RULES, Rule

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SVM_LENGTHS = {"xs0": 3, "xs1": 3, "ys": 3}


def run_cli(*args, cwd=ROOT):
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.run([sys.executable, "-m", "s2s_ad", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def test_every_branch_of_a_piecewise_function_is_found_and_proved():
    verdict = s2s_ad.check(src.piecewise)
    assert verdict.status == "proved", str(verdict)
    assert len(verdict.paths) == 3
    assert str(verdict).startswith("PROVED on 3 of 3 paths found: gradient of piecewise")
    taken = [" ; ".join(p.decisions) for p in verdict.paths]
    assert any("x > 1.0" in t for t in taken)
    assert any("x <= 0.0" in t for t in taken)
    assert verdict.paths[0].found == "the sample point"
    # Each path's derivative is that branch's own (sympy.diff on the path).
    by_branch = {p.decisions[-1]: {r.name: r.got for r in p.results} for p in verdict.paths}
    x, a = sympy.symbols("x a", real=True)
    assert sympy.simplify(by_branch["x > 1.0"]["x"] - (2 * a * x + 1)) == 0
    assert sympy.simplify(by_branch["x <= 0.0"]["x"]) == 0


def test_the_sample_point_alone_is_one_path():
    verdict = s2s_ad.check(src.piecewise, explore=0)
    assert len(verdict.paths) == 1 and verdict.paths[0].found == "the sample point"
    assert str(verdict).startswith("PROVED on 1 of 1 path found")
    assert "decided at the sample point;" in str(verdict)


def test_hinge_svm_is_proved_on_the_active_hinges_too():
    # At the sample point every hinge is inactive (every dxs = 0); random
    # points must find the paths where hinges are active.
    verdict = s2s_ad.check(src.svm, lengths=SVM_LENGTHS)
    assert verdict.status == "proved", str(verdict)
    assert len(verdict.paths) >= 4
    active = [p for p in verdict.paths if any("0.0 < " in d for d in p.decisions)]
    assert active, str(verdict)
    nonzero = {r.name for p in active for r in p.results if r.got != 0}
    assert {"xs0[0]", "ys[0]", "b"} <= nonzero, nonzero
    n = len(verdict.paths)
    assert str(verdict).startswith(f"PROVED on {n} of {n} paths found")


def test_random_points_outside_the_domain_are_skipped():
    verdict = s2s_ad.check(src.sqrt_then_branch)
    assert verdict.status == "proved" and len(verdict.paths) == 2, str(verdict)
    assert "outside the function's domain, skipped" in str(verdict)


def test_forward_mode_is_checked_path_by_path():
    verdict = s2s_ad.check(src.piecewise, mode="forward")
    assert verdict.status == "proved" and len(verdict.paths) == 3, str(verdict)


@pytest.fixture
def wrong_cos(monkeypatch):
    """d cos(x)/dx = +sin(x): wrong, and used only off the sample point's path."""
    s2s_ad.clear_cache()
    monkeypatch.setitem(RULES, "math.cos", Rule("math.cos", "math.cos(x)", ("math.sin(x)",)))
    yield
    s2s_ad.clear_cache()


def test_a_gradient_wrong_on_one_path_only_is_a_mismatch(wrong_cos):
    assert s2s_ad.check(src.cos_elsewhere, explore=0).status == "proved"  # the old blind spot
    verdict = s2s_ad.check(src.cos_elsewhere)
    assert verdict.status == "mismatch" and not verdict.ok, str(verdict)
    text = str(verdict)
    assert text.startswith("MISMATCH on 1 of 2 paths found (path 2; proved on 1)")
    assert "path 1 of 2: proved" in text and "path 2 of 2: MISMATCH" in text
    bad = {r.name: r for r in verdict.results}["x"]
    assert bad.detail.startswith("on path 2 of 2: at x=")


def test_assert_gradient_names_the_path(wrong_cos):
    from s2s_ad.testing import assert_gradient
    with pytest.raises(AssertionError) as caught:
        assert_gradient(src.cos_elsewhere, wrt="x")
    assert "on path 2 of 2" in str(caught.value)


def test_cli_exits_one_on_a_path_the_sample_point_misses(tmp_path):
    (tmp_path / "wrong_elsewhere.py").write_text(
        "import math\nfrom s2s_ad.rules import RULES, Rule\n"
        "RULES['math.cos'] = Rule('math.cos', 'math.cos(x)', ('math.sin(x)',))\n\n"
        "def f(x, y):\n    if x < 1.0:\n        return x * y * y\n"
        "    return math.cos(x) * y\n")
    target = str(tmp_path / "wrong_elsewhere.py") + ":f"
    r = run_cli("check", target)
    assert r.returncode == 1, r.stdout + r.stderr
    assert r.stdout.startswith("MISMATCH on 1 of 2 paths found"), r.stdout
    r = run_cli("check", target, "--explore", "0")
    assert r.returncode == 0 and r.stdout.startswith("PROVED on 1 of 1 path found"), r.stdout


@pytest.mark.parametrize("name,args", [("tanh_loop", None), ("sin_loop", None),
                                       ("while_counter", None), ("logistic", {"n": 5})])
def test_a_five_iteration_loop_is_proved_quickly(name, args):
    # CPU time, not wall clock: the machine is shared. A generous budget, so
    # that a loaded machine does not cut the proof short.
    started = time.process_time()
    verdict = s2s_ad.check(getattr(src, name), args=args, timeout=120)
    cpu = time.process_time() - started
    assert verdict.status == "proved", str(verdict)[:2000]
    assert cpu < 10, cpu  # 1-3 s alone (each waited out a 10 s budget before)


def test_the_exact_normal_form_is_a_proof_only_when_it_should_be():
    x, w = sympy.symbols("x w", real=True)
    t = sympy.tanh(w * x + 0.1)
    same = verify_proof.normal_form_equal
    assert same(w * (1 - t ** 2) * t, w * t - w * t * t * t)
    assert same((x + 1) ** 5 / x, sum(sympy.binomial(5, k) * x ** (k - 1) for k in range(6)))
    assert same(0.5 / sympy.sqrt(x), x ** sympy.Rational(-1, 2) / 2)
    assert not same(sympy.sin(x), sympy.cos(x))
    assert not same(x * t, x * sympy.tanh(w * x + 0.1000001))
    assert not same(x + 1e-9, x)
    assert not same(sympy.sqrt(x) ** 3, x * sympy.sqrt(x) + 1)
    assert not same(sympy.nan, sympy.nan)
    zero = sympy.Add((x + 1) ** 2, -x ** 2, -2 * x, -1, evaluate=False)  # 0, not at sight
    assert not same(sympy.Pow(zero, -1, evaluate=False), sympy.Pow(zero, -1, evaluate=False))


def test_the_budget_is_shared_by_the_paths(monkeypatch):
    # The exact steps made endlessly slow: each partial derivative on each
    # path gets its share, and then the later steps decide.
    def endless(a, b):
        time.sleep(3600)

    monkeypatch.setattr(verify_proof, "normal_form_equal", endless)
    started = time.monotonic()
    verdict = s2s_ad.check(src.branchy_loop, timeout=10)
    elapsed = time.monotonic() - started
    assert verdict.ok and len(verdict.paths) >= 2, str(verdict)[:3000]
    assert elapsed < 10 + 5, elapsed  # generous: a shared, noisy machine


def test_a_path_out_of_time_falls_back_to_central_differences(monkeypatch):
    def endless(*args, **kwargs):
        time.sleep(3600)

    monkeypatch.setattr(verify_proof, "EXACT", False)
    monkeypatch.setattr(verify_proof, "SIMPLIFY_LIMIT", -1)
    monkeypatch.setattr(verify_proof, "numeric", endless)
    # The deadline's timer fires again every 0.1 s until its block is left (a
    # finalizer drops an exception raised inside it); on a loaded machine one
    # may fire inside the interpreter's hook for such a dropped exception,
    # which pytest reports as a failure of its own: those are dropped here.
    monkeypatch.setattr(sys, "unraisablehook", lambda unraisable: None)
    started = time.monotonic()
    verdict = s2s_ad.check(src.branchy_loop, timeout=10)
    elapsed = time.monotonic() - started
    assert verdict.status == "agrees", str(verdict)[:3000]
    assert elapsed < 10 + 5, elapsed
    text = str(verdict)
    assert "checked numerically only" in text
    assert "50-digit comparison ran out of its share of the time budget" in text


def test_timeout_bounds_the_whole_check():
    for fn, kwargs in [(src.slow_paths, {}), (src.branchy_loop, {"explore": 64}),
                       (src.svm, {"lengths": SVM_LENGTHS, "explore": 200})]:
        started = time.monotonic()
        verdict = s2s_ad.check(fn, timeout=2, **kwargs)
        elapsed = time.monotonic() - started
        assert verdict.ok, str(verdict)[:3000]
        assert elapsed < 2 + 2, (fn.__name__, elapsed)  # generous: a noisy machine


def test_cli_timeout_bounds_the_whole_check():
    # The check itself is bounded (above); this adds the interpreter's start-up.
    started = time.monotonic()
    r = run_cli("check", "tests/check_paths_src.py:slow_paths", "--timeout", "5")
    elapsed = time.monotonic() - started
    assert r.returncode == 0, r.stdout + r.stderr
    assert elapsed < 5 + 20, elapsed  # start-up takes seconds on a loaded machine
    assert "not a proof" in r.stdout


def test_a_point_where_a_loop_never_ends_does_not_hang_the_check():
    started = time.monotonic()
    verdict = s2s_ad.check(src.walk, timeout=6)
    elapsed = time.monotonic() - started
    assert verdict.status == "proved", str(verdict)
    assert elapsed < 6 + 4, elapsed
    assert "where the run did not finish in its part of the time budget" in str(verdict)


def test_explore_must_not_be_negative():
    with pytest.raises(s2s_ad.S2SError, match="explore must be 0 or a positive"):
        s2s_ad.check(src.piecewise, explore=-1)
    r = run_cli("check", "tests/check_paths_src.py:piecewise", "--explore", "-1")
    assert r.returncode == 2 and "--explore" in r.stderr and "Traceback" not in r.stderr
