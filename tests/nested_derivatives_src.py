"""Functions that call a derivative s2s-ad made of a function reading module
constants (a helper, a number): tests/test_nested_derivatives.py."""

import math

import s2s_ad

SCALE = 1.0


def bowl(x1, y1, x2, y2):
    return SCALE * (x1 ** 2 + y1 ** 2) - (x2 ** 2 + y2 ** 2) + 0.25 * x1 * x2


def steeper(x1, y1, x2, y2):
    return 3.0 * (x1 ** 2 + y1 ** 2) - (x2 ** 2 + y2 ** 2) + math.sin(x1 * x2)


shape = bowl


def neg(x1, y1, x2, y2):
    return -shape(x1, y1, x2, y2)


climb = s2s_ad.grad(neg, wrt=("x2", "y2"))
climb_tangent = s2s_ad.jvp(neg, wrt=("x2", "y2"))


def best_reply(x1, y1, s0, s1, steps=40, rate=0.2):
    """f at the end of a fixed number of ascent steps in (x2, y2)."""
    q0, q1 = s0, s1
    for _ in range(steps):
        g0, g1 = climb(x1, y1, q0, q1)
        q0, q1 = q0 - rate * g0, q1 - rate * g1
    return shape(x1, y1, q0, q1)


def best_reply_forward(x1, y1, s0, s1, steps=40, rate=0.2):
    """The same, the ascent's slope by two forward passes."""
    q0, q1 = s0, s1
    for _ in range(steps):
        _, g0 = climb_tangent(x1, y1, q0, q1, dx2=1.0, dy2=0.0)
        _, g1 = climb_tangent(x1, y1, q0, q1, dx2=0.0, dy2=1.0)
        q0, q1 = q0 - rate * g0, q1 - rate * g1
    return shape(x1, y1, q0, q1)


def adaptive_reply(x1, y1, s0, s1):
    """Ascent with a step that doubles after ten gains and halves after a
    loss, stopping on a small slope or a small step (a `while` loop whose
    branches and trip count depend on the arguments)."""
    q0, q1 = s0, s1
    c = neg(x1, y1, q0, q1)
    g0, g1 = climb(x1, y1, q0, q1)
    eta = 1e-3
    run = 0
    while math.hypot(g0, g1) > 1e-6:
        if run == 10:
            eta = 2.0 * eta
            run = 0
        else:
            t0 = q0 - eta * g0
            t1 = q1 - eta * g1
            if math.hypot(t0 - q0, t1 - q1) <= 1e-9:
                break
            ct = neg(x1, y1, t0, t1)
            if ct < c:
                q0, q1, c = t0, t1, ct
                g0, g1 = climb(x1, y1, q0, q1)
                run = run + 1
            else:
                eta = eta / 2.0
                run = 0
    return shape(x1, y1, q0, q1)


def ascend_with(slope, x1, y1, s0, s1, steps=30, rate=0.2):
    """Fixed-step ascent with the slope function it is given."""
    q0, q1 = s0, s1
    for _ in range(steps):
        g0, g1 = slope(x1, y1, q0, q1)
        q0, q1 = q0 - rate * g0, q1 - rate * g1
    return shape(x1, y1, q0, q1)


def passed_reply(x1, y1, s0, s1):
    """The derivative passed to a helper as its slope argument."""
    return ascend_with(climb, x1, y1, s0, s1)


def only_climb(x1, y1, s0, s1):
    """Reads `shape` only through the derivative it calls."""
    q0, q1 = s0, s1
    for _ in range(5):
        g0, g1 = climb(x1, y1, q0, q1)
        q0, q1 = q0 - 0.2 * g0, q1 - 0.2 * g1
    return q0 * q0 + q1 * q1 + x1 * q0
