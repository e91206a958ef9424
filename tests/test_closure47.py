"""Closure under differentiation, everywhere (issue 14): second derivatives of
every example and GradBench objective by every route, and what the fuzzer's
second-order check found.

* A name assigned in one arm of an ``if`` stays readable under a later test
  of the same condition after a short-circuit operator has tested it
  (``c and (not t and u) or not c and ...``): the reverse sweep of the
  fuzzer's ``--conditions`` seed 180002 reads ``t52`` so, and its second
  lowering refused "`t52` may be undefined here".
"""

from __future__ import annotations

import math

import pytest

import s2s_ad
from tests.fuzz import run_one
from tests.modules import import_source
from tests.programs import RandomDraw
from tests.programs_conditions import condition_program

ARMS = '''
import math


def f(x):
    c = x > 0.5
    if c:
        t = x > 1.0
        y = math.sin(x) * x
    else:
        y = x * x
    if not (c and not t or not c and x < -1.0):
        y = y * math.cos(x)
    if c and t:
        y = y * x
    return y
'''


def _fd(fn, x: float, h: float = 1e-6) -> float:
    return (fn(x + h) - fn(x - h)) / (2 * h)


@pytest.mark.parametrize("x", [1.5, 0.7, 0.2, -1.3])
def test_a_name_of_one_arm_read_again_after_an_or_testing_its_condition(tmp_path, x):
    # `t` is read under `c` inside the `or`, then under `c` again: the `or`'s
    # own branches must not narrow where `t` can be read (refused on main:
    # "`t` may be undefined here")
    f = import_source(str(tmp_path), ARMS, "closure47_arms").f
    g = s2s_ad.grad(f)
    assert math.isclose(g(x), _fd(f, x), rel_tol=1e-6, abs_tol=1e-8)
    assert math.isclose(s2s_ad.hessian(f)(x), _fd(g, x, 1e-5), rel_tol=1e-5, abs_tol=1e-7)


def test_the_conditions_seed_whose_gradient_file_was_refused(tmp_path):
    # The fuzzer's --conditions seed 180002: its gradient file reads `t52`
    # (assigned under `if cond_12:`) in `not (cond_12 and (not t52 and t55) or not
    # cond_12 and ...)`, twice; the file's JVP and reverse over it are compared
    # with central differences of the file's gradient (tests.fuzz_checks.check_second)
    prog = condition_program(RandomDraw(180002), max_stmts=5, max_depth=3)
    out = run_one(prog, str(tmp_path), "seed180002", use_sympy=False,
                  checks=("grad", "second"))
    assert out.status == "ok", out.detail
    assert out.checks["second"].status == "agree", out.checks["second"].detail

