"""Shifts that cancel (s2s_ad/reverse/shifts.py): the maximum subtracted for a stable
log-sum-exp, softmax or log-softmax gets no adjoint where the result provably
does not depend on it, and keeps its adjoint everywhere else. Every gradient
against central finite differences (tests/array_oracle.py), ties included."""

import numpy as np
import pytest

import s2s_ad
from array_oracle import assert_gradients, make_function, rand

RNG = np.random.default_rng(2468)

CANCELS = {
    "log-sum-exp": "m = np.max(z, axis=1, keepdims=True)\n"
                   "    lse = m + np.log(np.sum(np.exp(z - m), axis=1, keepdims=True))\n"
                   "    return np.sum(w * (z - lse))",
    "log first": "m = np.max(z, axis=1, keepdims=True)\n"
                 "    return np.sum(w * (np.log(np.sum(np.exp(z - m), axis=1, keepdims=True)) + m))",
    "axis 0": "m = np.max(z, axis=0, keepdims=True)\n"
              "    return np.sum(w[0] * (m + np.log(np.sum(np.exp(z - m), axis=0, keepdims=True))))",
    "all axes": "m = np.max(z)\n    return m + np.log(np.sum(np.exp(z - m)))",
    "all axes, kept": "m = np.max(z, keepdims=True)\n"
                      "    return np.sum(m + np.log(np.sum(np.exp(z - m), axis=1)))",
    "method": "m = z.max(axis=1, keepdims=True)\n"
              "    return np.sum(w * (z - m - np.log(np.exp(z - m).sum(axis=1, keepdims=True))))",
    "log-softmax": "m = np.max(z, axis=-1, keepdims=True)\n    s = z - m\n"
                   "    return np.sum(w * (s - np.log(np.sum(np.exp(s), axis=-1, keepdims=True))))",
    "softmax": "m = np.max(z, axis=1, keepdims=True)\n    e = np.exp(z - m)\n"
               "    p = e / np.sum(e, axis=1, keepdims=True)\n    return np.sum(w * p)",
    "softmax, scaled": "m = np.max(z, axis=1, keepdims=True)\n    e = 2.0 * np.exp(z - m)\n"
                       "    return np.sum(w * np.log(e * 3.0 / np.sum(e, axis=1, keepdims=True)))",
    "minimum": "m = np.min(z, axis=1, keepdims=True)\n"
               "    return np.sum(w * (m + np.log(np.sum(np.exp(z - m), axis=1, keepdims=True))))",
    "negated shift": "m = np.max(z, axis=1, keepdims=True)\n"
                     "    return np.sum(w * (np.log(np.sum(np.exp(-(m - z)), axis=1, keepdims=True)) - -m))",
}

KEEPS = {
    "m returned too": "m = np.max(z, axis=1, keepdims=True)\n"
                      "    lse = m + np.log(np.sum(np.exp(z - m), axis=1, keepdims=True))\n"
                      "    return np.sum(w * (z - lse)) + np.sum(m)",
    "another axis": "m = np.max(z, axis=1, keepdims=True)\n"
                    "    return np.sum(w * (m + np.log(np.sum(np.exp(z - m), axis=0, keepdims=True))))",
    "axes dropped": "m = np.max(z, axis=1, keepdims=True)\n"
                    "    return np.sum(m + np.log(np.sum(np.exp(z - m), axis=1)))",
    "not a cancelling sum": "m = np.max(z, axis=1, keepdims=True)\n"
                            "    return np.sum(w * (m + np.log(np.sum(np.exp(z - m), axis=1, keepdims=True) + 1.0)))",
    "temperature": "m = np.max(z, axis=1, keepdims=True)\n"
                   "    return np.sum(w * (m + np.log(np.sum(np.exp((z - m) * 0.5), axis=1, keepdims=True))))",
    "shift alone": "m = np.max(z, axis=1, keepdims=True)\n    return np.sum(w * np.exp(z - m))",
    "other shape": "m = np.max(z, axis=1, keepdims=True)\n"
                   "    return np.sum(m + np.log(np.sum(np.exp(v - m), axis=1, keepdims=True)))",
    "sum of a shift": "m = np.max(z, axis=1, keepdims=True)\n"
                      "    return np.sum(np.log(np.sum(np.exp(z - m), axis=1, keepdims=True)) + np.sum(z - m, axis=1, keepdims=True))",
}


def _function(body: str):
    return make_function(f"def f(z, w, v):\n    {body}")


def _args(ties: bool):
    z = rand(RNG, (3, 4))
    if ties:  # rows whose maximum (and minimum) occurs twice
        z[0, 1] = z[0, 3] = z[0].max() + 0.5
        z[1, 0] = z[1, 2] = z[1].min() - 0.5
    return [z, rand(RNG, (3, 4)), rand(RNG, (3, 4))]


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("name", sorted(CANCELS))
def test_the_shift_gets_no_adjoint_and_the_gradient_is_right(name, ties):
    f = _function(CANCELS[name])
    text = s2s_ad.gradient_source(f, wrt=[0, 1])
    assert "extreme_adjoint" not in text
    assert "m gets no adjoint: the result does not depend on it" in text
    assert_gradients(f, _args(ties), [0, 1])


@pytest.mark.parametrize("ties", [False, True])
@pytest.mark.parametrize("name", sorted(KEEPS))
def test_a_shift_that_does_not_cancel_keeps_its_adjoint(name, ties):
    f = _function(KEEPS[name])
    text = s2s_ad.gradient_source(f, wrt=[0, 1, 2])
    assert "extreme_adjoint" in text and "no adjoint" not in text
    if ties and name in ("shift alone", "m returned too", "another axis", "axes dropped",
                         "not a cancelling sum", "temperature", "other shape", "sum of a shift"):
        return  # the function has a kink at a tie: finite differences do not apply
    assert_gradients(f, _args(ties), [0, 1, 2])


def test_softmax_cross_entropy_example_matches_finite_differences():
    from softmax_xent import softmax_xent
    rng = np.random.default_rng(5)
    args = [rng.normal(size=(6, 3)), rng.normal(size=(8, 6)), np.eye(3)[rng.integers(0, 3, 8)]]
    text = s2s_ad.gradient_source(softmax_xent, wrt=[0])
    assert "extreme_adjoint" not in text and "dm" not in text
    assert_gradients(softmax_xent, args, [0])


@pytest.mark.parametrize("y, cancels", [("z", True), ("z * i", True)])
def test_shift_inside_a_loop(y, cancels):
    # z * i inside the loop has z's shape (shapes are tracked inside loops, the
    # index a number): the shift cancels there too, and m gets no adjoint
    f = make_function("def f(z, w, n: int):\n    s = 0.0\n    for i in range(n):\n"
                      f"        m = np.max({y}, axis=1, keepdims=True)\n"
                      f"        s = s + np.sum(w * i * (m + np.log(np.sum(np.exp({y} - m), axis=1, "
                      "keepdims=True))))\n    return s")
    args = [rand(RNG, (3, 4)), rand(RNG, (3, 4)), 3]
    text = s2s_ad.gradient_source(f, wrt=[0, 1])
    assert ("extreme_adjoint" not in text) == cancels
    assert_gradients(f, args, [0, 1])


def test_a_shift_carried_out_of_a_loop_keeps_its_adjoint():
    f = make_function("def f(z, w, n: int):\n    m = np.max(z, axis=1, keepdims=True)\n"
                      "    for i in range(n):\n        m = m + 0.0\n"
                      "    return np.sum(w * (m + np.log(np.sum(np.exp(z - m), axis=1, keepdims=True))))")
    args = [rand(RNG, (3, 4)), rand(RNG, (3, 4)), 2]
    assert_gradients(f, args, [0, 1])


def test_check_proves_the_gradient_with_the_shift_left_out():
    f = _function(CANCELS["log-sum-exp"])
    verdict = s2s_ad.check(f, wrt=[0, 1], args=dict(zip("zwv", _args(False))))
    assert verdict.ok, verdict


@pytest.mark.parametrize("use", ["np.exp(y - m) * w", "np.exp(y - m + 0.0 * w)"])
def test_an_operand_of_higher_rank_keeps_the_adjoint(use):
    # y is (3, 4), w (2, 3, 4): axis 1 of the exponentials is y's axis 0, along
    # which m varies, so the sum does not cancel m
    f = make_function("def f(w, c, r):\n    y = c * r\n    m = np.max(y, axis=1, keepdims=True)\n"
                      f"    e = {use}\n"
                      "    return np.sum(m + np.log(np.sum(e, axis=1, keepdims=True)))")
    args = [RNG.uniform(0.5, 2.0, (2, 3, 4)), rand(RNG, (3, 1)), rand(RNG, (1, 4))]
    assert "extreme_adjoint" in s2s_ad.gradient_source(f, wrt=[0, 1, 2])
    assert_gradients(f, args, [0, 1, 2])
