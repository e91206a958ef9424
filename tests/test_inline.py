"""Small straight-line helpers are inlined into their caller (s2s_ad/frontend/inline.py):
the gradient is the same as through the pair, the code has no pair for them,
and helpers with control flow or many ops keep theirs."""
import pytest

import inline_src as s
import s2s_ad
from oracle import close, fd_gradient

CASES = [
    (s.rosen, [0.3, -0.7, 1.1, 0.4]),
    (s.with_branch, [0.8, -1.2]),
    (s.uses_long, [0.6, 0.3]),
    (s.in_loop, [0.7, 4]),
    (s.shared, [0.9, -0.4]),
]


def _fd_check(fn, args):
    wrt = tuple(i for i, a in enumerate(args) if isinstance(a, float))
    got = s2s_ad.grad(fn, wrt=wrt)(*args)
    got = got if isinstance(got, tuple) else (got,)
    want = fd_gradient(fn, args, list(wrt))
    assert all(close(g, w) for g, w in zip(got, want)), (got, want)


@pytest.mark.parametrize("fn,args", CASES, ids=[f.__name__ for f, _ in CASES])
def test_inlined_gradient_matches_finite_differences(fn, args):
    _fd_check(fn, args)


@pytest.mark.parametrize("fn,args", CASES, ids=[f.__name__ for f, _ in CASES])
def test_the_same_through_pairs(fn, args, pairs):
    _fd_check(fn, args)


def test_a_small_straight_line_helper_has_no_pair():
    text = s2s_ad.gradient_source(s.rosen)
    assert "term_fwd" not in text and "term_bwd" not in text
    # its lines say where they come from
    assert "term: " in text


def test_helpers_with_a_branch_or_many_ops_keep_their_pair():
    assert "def clipped_fwd(" in s2s_ad.gradient_source(s.with_branch)
    assert "def long_helper_fwd(" in s2s_ad.gradient_source(s.uses_long)


def test_inlined_in_a_loop_matches_vjp_and_sympy():
    assert s2s_ad.check(s.in_loop, args={"n": 3}).status in ("proved", "agrees")
    fwd = s2s_ad.vjp(s.shared, 0.9, -0.4)
    value, pullback = fwd
    assert close(value, s.shared(0.9, -0.4))
    got = pullback(1.0)
    want = fd_gradient(s.shared, [0.9, -0.4], [0, 1])
    assert all(close(g, w) for g, w in zip(got, want)), (got, want)


def test_explain_names_the_helper_of_each_inlined_row():
    text = s2s_ad.explain(s.rosen)
    assert "term: " in text and "by term's backward pass" not in text
