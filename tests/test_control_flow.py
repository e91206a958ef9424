"""Gradients through branches and loops, against independent references:
central finite differences for every program in ``cf_programs`` (at points
away from branch switches), and sympy (``s2s_ad.check``, loops unrolled with
concrete trip counts, branches decided at the sample point) where the
symbolic expression stays small."""

import math

import pytest

import s2s_ad
from cf_programs import PROGRAMS
import cf_programs as P
from oracle import central_difference, close


def _fd(f, args, i):
    a = args[i]
    if isinstance(a, (list, tuple)):
        out = []
        for k in range(len(a)):
            def g(t, k=k):
                b = list(a)
                b[k] = t
                new = list(args)
                new[i] = type(a)(b)
                return f(*new)
            out.append(central_difference(g, [a[k]], 0))
        return out
    return central_difference(f, args, i)


def _flat(values):
    out = []
    for v in values:
        out += list(v) if isinstance(v, (list, tuple)) else [v]
    return out


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_gradient_matches_finite_differences(name):
    f, args, wrt = PROGRAMS[name]
    got = s2s_ad.grad(f, wrt=tuple(wrt))(*args)
    want = [_fd(f, args, i) for i in wrt]
    for g, w in zip(got, want):
        if isinstance(w, list):
            assert isinstance(g, type(args[wrt[got.index(g)]])), "a list gradient has its shape"
    got, want = _flat(got), _flat(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert close(g, w, rtol=1e-5, atol=1e-7), f"{name}: s2s-ad {got}, central differences {want}"


@pytest.mark.parametrize("name", list(PROGRAMS))
def test_value_and_grad_value_is_the_function_value(name):
    f, args, wrt = PROGRAMS[name]
    value, _ = s2s_ad.value_and_grad(f, wrt=tuple(wrt))(*args)
    assert close(value, f(*args), rtol=1e-12, atol=1e-12)


SYMPY_CASES = [
    (P.branch_if_else, {}, None),
    (P.branch_elif, {}, None),
    (P.branch_elif, {}, {"x": 1.5}),
    (P.branch_one_sided, {}, None),
    (P.branch_and_or, {}, None),
    (P.ternary, {}, None),
    (P.branch_nested, {}, None),
    (P.for_range_const, {}, None),
    (P.for_range_arg, {"n": 5}, None),
    (P.for_range_start_step, {"a": 2, "b": 13}, None),
    (P.for_range_negative_step, {"n": 3}, None),
    (P.logistic, {"n": 3}, None),
    (P.two_carried_swap, {"n": 4}, None),
    (P.nested_loops, {"n": 4}, None),
    (P.loop_with_branch, {"n": 5}, None),
    (P.break_loop, {"n": 6}, None),
    (P.continue_loop, {"n": 6}, None),
    (P.return_in_nested_loop, {"n": 3}, None),
    (P.return_in_branch, {}, None),
    (P.return_in_branch, {}, {"x": -0.5, "y": 0.3}),
    (P.bisection, {}, None),
    (P.augmented, {"n": 3}, None),
    (P.sequential_loops, {"n": 3}, None),
    (P.branch_in_while, {}, None),
]


@pytest.mark.parametrize("f,args,at", SYMPY_CASES,
                         ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(SYMPY_CASES)])
def test_sympy_proves_or_agrees(f, args, at):
    verdict = s2s_ad.check(f, args=args, at=at)
    assert verdict.ok, str(verdict)


@pytest.mark.parametrize("f,lengths,at", [
    (P.horner, {"c": 4}, None),
    (P.sum_list, {"c": 3}, None),
    (P.for_each, {"xs": 3}, None),
    (P.for_each_product, {"xs": 4}, None),
    (P.return_in_loop, {"xs": 4}, {"t": 0.9}),
    (P.return_in_loop, {"xs": 3}, {"t": 2.0}),
    (P.max_in_loop, {"xs": 3}, None),
], ids=["horner", "sum_list", "for_each", "product", "return_early", "return_late", "max"])
def test_sympy_proves_list_programs(f, lengths, at):
    verdict = s2s_ad.check(f, lengths=lengths, at=at)
    assert verdict.status == "proved", str(verdict)


def test_check_names_the_branch_it_took():
    verdict = s2s_ad.check(P.branch_elif, at={"x": 0.4})
    text = str(verdict)
    assert "x > 0.0" in text and "x <= 1.0" in text


def test_check_with_trip_count_reports_it():
    verdict = s2s_ad.check(P.for_range_arg, args={"n": 5})
    assert verdict.status == "proved"
    assert "n=5" in str(verdict)


def test_newton_gradient_is_that_of_the_root():
    # x converges to sqrt(a): the derivative of the iterations converges to 1/(2 sqrt a).
    g = s2s_ad.grad(P.newton_sqrt)
    for a in (0.5, 2.0, 9.0):
        assert close(g(a), 0.5 / math.sqrt(a), rtol=1e-9)


def test_zero_trip_loop_passes_the_adjoint_through():
    g = s2s_ad.grad(P.for_range_arg)
    assert g(0.7, 0) == 0.0
    g2 = s2s_ad.grad(P.logistic, wrt=0)
    assert g2(0.3, 3.0, 0) == 1.0


def test_integer_argument_is_refused_with_its_location():
    with pytest.raises(s2s_ad.SourceError) as err:
        s2s_ad.grad(P.for_range_arg, wrt="n")(0.5, 3)
    message = str(err.value)
    assert "cannot differentiate with respect to `n`" in message
    assert "range" in message and "cf_programs.py:" in message


def test_integer_arguments_are_left_out_of_the_default_wrt():
    g = s2s_ad.grad(P.for_range_arg, wrt=None)
    assert close(g(0.7, 4), central_difference(P.for_range_arg, [0.7, 4], 0))


def test_list_gradient_has_the_list_shape():
    g = s2s_ad.grad(P.horner, wrt=("c", "x"))
    dc, dx = g([1.0, 2.0, 3.0], 0.5)
    assert isinstance(dc, list) and len(dc) == 3
    assert dc == [0.25, 0.5, 1.0]


REFUSALS = [
    (P.refused_for_else, "for ... else", "x = x + 1.0"),
    (P.refused_loop_local_after, "assigned inside the loop", "return t"),
    (P.refused_one_branch, "only one branch", "return y"),
    (P.refused_truthiness, "must be a comparison", "if x and x > 1.0:"),
    (P.refused_missing_return, "every path", "def refused_missing_return"),
]


@pytest.mark.parametrize("f,message,line", REFUSALS, ids=[r[0].__name__ for r in REFUSALS])
def test_refusal_names_the_construct_and_its_line(f, message, line):
    with pytest.raises(s2s_ad.SourceError) as err:
        s2s_ad.gradient_source(f, 0)
    text = str(err.value)
    assert message in text and "cf_programs.py:" in text
    assert line in text.splitlines()[1]
