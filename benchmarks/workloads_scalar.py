"""Scalar workloads: Rosenbrock on 10 floats and a 50-term expression."""

import math

from harness import Workload


def rosenbrock10(x0, x1, x2, x3, x4, x5, x6, x7, x8, x9):
    return (100.0 * (x1 - x0 * x0) ** 2 + (1.0 - x0) ** 2
            + 100.0 * (x2 - x1 * x1) ** 2 + (1.0 - x1) ** 2
            + 100.0 * (x3 - x2 * x2) ** 2 + (1.0 - x2) ** 2
            + 100.0 * (x4 - x3 * x3) ** 2 + (1.0 - x3) ** 2
            + 100.0 * (x5 - x4 * x4) ** 2 + (1.0 - x4) ** 2
            + 100.0 * (x6 - x5 * x5) ** 2 + (1.0 - x5) ** 2
            + 100.0 * (x7 - x6 * x6) ** 2 + (1.0 - x6) ** 2
            + 100.0 * (x8 - x7 * x7) ** 2 + (1.0 - x7) ** 2
            + 100.0 * (x9 - x8 * x8) ** 2 + (1.0 - x8) ** 2)


def rosenbrock10_hand(x0, x1, x2, x3, x4, x5, x6, x7, x8, x9):
    x = (x0, x1, x2, x3, x4, x5, x6, x7, x8, x9)
    g = [0.0] * 10
    for i in range(9):
        r = x[i + 1] - x[i] * x[i]
        g[i] += -400.0 * x[i] * r - 2.0 * (1.0 - x[i])
        g[i + 1] += 200.0 * r
    return tuple(g)


def fifty_terms(a, b, c, d, e):
    s1 = a * b + math.sin(c) * d - math.exp(-e * e) + a / (1.0 + b * b)
    s2 = math.log(1.0 + a * a) * c + math.tanh(d * e) - b * c * d + math.sqrt(1.0 + e * e)
    s3 = math.cos(a - b) * math.sin(c + d) + e ** 3 - a * e + math.atan(b * d)
    s4 = s1 * s2 - s3 / (2.0 + s1 * s1) + math.exp(0.1 * s2) * a
    s5 = s4 * s4 + s3 * b - math.log1p(c * c) + d * e * a
    return s5 + s4 * s1 - s2 * s3


def fifty_terms_hand(a, b, c, d, e):
    # Written out by hand, reverse mode, sharing common subexpressions.
    ee = math.exp(-e * e)
    q = 1.0 + b * b
    s1 = a * b + math.sin(c) * d - ee + a / q
    l = math.log(1.0 + a * a)
    th = math.tanh(d * e)
    r = math.sqrt(1.0 + e * e)
    s2 = l * c + th - b * c * d + r
    cab = math.cos(a - b)
    scd = math.sin(c + d)
    s3 = cab * scd + e ** 3 - a * e + math.atan(b * d)
    den = 2.0 + s1 * s1
    ex = math.exp(0.1 * s2)
    s4 = s1 * s2 - s3 / den + ex * a
    # out = s5 + s4*s1 - s2*s3, s5 = s4² + s3 b - log1p(c²) + d e a
    g4 = 2.0 * s4 + s1
    g1 = s4
    g2 = -s3
    g3 = b - s2
    ga = d * e
    gb = s3
    gc = -2.0 * c / (1.0 + c * c)
    gd = e * a
    ge = d * a
    # s4 = s1 s2 - s3/den + ex a
    g1 += g4 * (s2 + s3 / (den * den) * 2.0 * s1)
    g2 += g4 * (s1 + 0.1 * ex * a)
    g3 += -g4 / den
    ga += g4 * ex
    # s3 = cab scd + e³ - a e + atan(b d)
    sab = math.sin(a - b)
    ccd = math.cos(c + d)
    at = 1.0 / (1.0 + b * b * d * d)
    ga += g3 * (-sab * scd - e)
    gb += g3 * (sab * scd + d * at)
    gc += g3 * cab * ccd
    gd += g3 * (cab * ccd + b * at)
    ge += g3 * (3.0 * e * e - a)
    # s2 = l c + th - b c d + r
    ga += g2 * c * 2.0 * a / (1.0 + a * a)
    gb += g2 * (-c * d)
    gc += g2 * (l - b * d)
    gd += g2 * ((1.0 - th * th) * e - b * c)
    ge += g2 * ((1.0 - th * th) * d + e / r)
    # s1 = a b + sin(c) d - ee + a/q
    ga += g1 * (b + 1.0 / q)
    gb += g1 * (a - a * 2.0 * b / (q * q))
    gc += g1 * math.cos(c) * d
    gd += g1 * math.sin(c)
    ge += g1 * 2.0 * e * ee
    return ga, gb, gc, gd, ge


ROSEN_ARGS = (0.5, -0.3, 1.2, 0.8, -0.6, 0.1, 0.9, -1.1, 0.4, 0.7)
FIFTY_ARGS = (0.3, -0.7, 0.5, 1.1, -0.4)

WORKLOADS = [
    Workload("rosenbrock, 10 floats", rosenbrock10, rosenbrock10_hand, ROSEN_ARGS, wrt=None),
    Workload("50-term expression, 5 floats", fifty_terms, fifty_terms_hand, FIFTY_ARGS, wrt=None),
]

JVP = True
"""run.py also times ``s2s_ad.jvp`` of these workloads (forward mode)."""
