"""A loop inside no other loop that runs all its iterations, ``for i in
range(n)``, keeps each value it computes on every iteration in a slot
(``x_tape[i] = x`` / ``x = x_tape[i]``); the others push and pop. Each
program's gradient against central finite differences, and the generated
code for which tapes took which path."""

import math

import pytest

import s2s_ad
import slots_src as P
from oracle import central_difference, close

X = 0.7


def _source(f):
    return s2s_ad.source_of(s2s_ad.grad(f, wrt=0))


@pytest.mark.parametrize("f", [P.top_level, P.nested, P.stops_early, P.in_branch,
                               P.counted_while, P.from_one], ids=lambda f: f.__name__)
@pytest.mark.parametrize("n", [0, 1, 5, -2])
def test_gradient_matches_finite_differences(f, n):
    g = s2s_ad.grad(f, wrt=0)
    got = g(X, n)
    want = central_difference(lambda x: f(x, n), [X], 0)
    assert close(got, want, rtol=1e-6, atol=1e-8), (f.__name__, n, got, want)


def test_a_top_level_loop_writes_and_reads_slots():
    text = _source(P.top_level)
    assert "x_1_tape = [None] * n" in text
    assert "x_1_tape[i] = x_1" in text and "x_1 = x_1_tape[i]" in text
    assert "for i in reversed(range(n)):" in text
    assert ".append(" not in text and ".pop()" not in text


def test_an_inner_loop_pushes_and_pops_the_outer_one_keeps_slots():
    text = _source(P.nested)
    assert ".append(" in text and ".pop()" in text  # the inner loop, 3 values per outer one
    assert "= [None] * n" in text  # the outer loop's own values
    assert "[j]" not in text  # no slot at the inner loop's index


def test_loops_that_may_stop_early_and_whiles_push_and_pop():
    for f in (P.stops_early, P.counted_while):
        text = _source(f)
        assert "[None]" not in text and ".append(" in text and ".pop()" in text, text


def test_a_value_computed_in_a_branch_is_pushed_the_others_get_slots():
    text = _source(P.in_branch)
    assert "t_tape[i] = t" in text and "t = t_tape[i]" in text
    assert "u_tape.append(u)" in text and "u = u_tape.pop()" in text


def test_a_range_not_starting_at_zero_pushes_and_pops():
    text = _source(P.from_one)
    assert "[None]" not in text and ".pop()" in text


def test_vjp_runs_twice_and_value_and_grad_returns_the_value():
    value, pullback = s2s_ad.vjp(P.top_level, X, 6)
    first, second = pullback(1.0), pullback(1.0)
    assert first == second
    v, g = s2s_ad.value_and_grad(P.top_level, wrt=0)(X, 6)
    assert v == P.top_level(X, 6) == value
    assert close(g, central_difference(lambda x: P.top_level(x, 6), [X], 0), rtol=1e-6)
