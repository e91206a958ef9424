"""A saddle point by nested gradient descent (GradBench's saddle eval).

f(x1, y1, x2, y2) = (x1² + y1²) − (x2² + y2²). The eval asks for
min over p = (x1, y1) of [max over q = (x2, y2) of f(p, q)], both by
gradient descent from one starting point: the outer descent's slope is a
derivative of `best_value`, whose inner ascent takes derivatives of f
itself inside a `while` loop with branches — nested differentiation, the
inner ascent's path differentiated with respect to p. Then q is found
again for the p found.

Each derivative may be reverse mode (``s2s_ad.grad``) or forward mode
(``s2s_ad.jvp``, one pass per direction): the eval's four variants name
the outer mode, then the inner.

    python examples/gradbench/saddle.py
"""

import math

import s2s_ad


def f(x1, y1, x2, y2):
    return (x1 ** 2 + y1 ** 2) - (x2 ** 2 + y2 ** 2)


def neg_f(x1, y1, x2, y2):
    return -f(x1, y1, x2, y2)


ascent_reverse = s2s_ad.grad(neg_f, wrt=("x2", "y2"))
neg_f_tangent = s2s_ad.jvp(neg_f, wrt=("x2", "y2"))


def ascent_forward(x1, y1, x2, y2):
    """∂(−f)/∂x2 and ∂(−f)/∂y2, one forward pass each."""
    _, g0 = neg_f_tangent(x1, y1, x2, y2, dx2=1.0, dy2=0.0)
    _, g1 = neg_f_tangent(x1, y1, x2, y2, dx2=0.0, dy2=1.0)
    return g0, g1


def best_value(slope, x1, y1, s0, s1):
    """max over (x2, y2) of f(x1, y1, x2, y2), by descent on −f from (s0, s1):
    a step that lowers −f is taken (ten in a row double the step), one that
    does not halves it; it stops on a small slope or a small step."""
    q0, q1 = s0, s1
    c = neg_f(x1, y1, q0, q1)
    g0, g1 = slope(x1, y1, q0, q1)
    eta = 1e-5
    run = 0
    while math.hypot(g0, g1) > 1e-5:
        if run == 10:
            eta = 2.0 * eta
            run = 0
        else:
            t0 = q0 - eta * g0
            t1 = q1 - eta * g1
            if math.hypot(t0 - q0, t1 - q1) <= 1e-5:
                break
            ct = neg_f(x1, y1, t0, t1)
            if ct < c:
                q0, q1, c = t0, t1, ct
                g0, g1 = slope(x1, y1, q0, q1)
                run = run + 1
            else:
                eta = eta / 2.0
                run = 0
    return f(x1, y1, q0, q1)


def best_value_reverse(x1, y1, s0, s1):
    return best_value(ascent_reverse, x1, y1, s0, s1)


def best_value_forward(x1, y1, s0, s1):
    return best_value(ascent_forward, x1, y1, s0, s1)


def descend(cost, slope, p0, p1):
    """The same descent, on a cost of two numbers, run as plain Python."""
    c, (g0, g1), eta, run = cost(p0, p1), slope(p0, p1), 1e-5, 0
    while math.hypot(g0, g1) > 1e-5:
        if run == 10:
            eta, run = 2.0 * eta, 0
            continue
        t0, t1 = p0 - eta * g0, p1 - eta * g1
        if math.hypot(t0 - p0, t1 - p1) <= 1e-5:
            break
        ct = cost(t0, t1)
        if ct < c:
            p0, p1, c, (g0, g1), run = t0, t1, ct, slope(t0, t1), run + 1
        else:
            eta, run = eta / 2.0, 0
    return p0, p1


def outer_slope(mode, value):
    """(∂value/∂x1, ∂value/∂y1) of value(x1, y1, s0, s1), reverse or forward."""
    if mode == "r":
        return s2s_ad.grad(value, wrt=("x1", "y1"))
    tangent = s2s_ad.jvp(value, wrt=("x1", "y1"))

    def slope(x1, y1, s0, s1):
        return (tangent(x1, y1, s0, s1, dx1=1.0, dy1=0.0)[1],
                tangent(x1, y1, s0, s1, dx1=0.0, dy1=1.0)[1])
    return slope


def saddle(variant, start=(1.0, 1.0)):
    """The eval's variants "rr", "rf", "fr", "ff": (x1, y1) then (x2, y2)."""
    s0, s1 = start
    value = best_value_reverse if variant[1] == "r" else best_value_forward
    slope = outer_slope(variant[0], value)
    p = descend(lambda a, b: value(a, b, s0, s1), lambda a, b: slope(a, b, s0, s1), s0, s1)
    inner = ascent_reverse if variant[1] == "r" else ascent_forward
    q = descend(lambda a, b: neg_f(p[0], p[1], a, b), lambda a, b: inner(p[0], p[1], a, b),
                s0, s1)
    return p, q


if __name__ == "__main__":
    for variant in ("rr", "rf", "fr", "ff"):
        print(variant, saddle(variant))
