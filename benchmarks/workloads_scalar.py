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


def rosenbrock10_jvp_hand(x0, x1, x2, x3, x4, x5, x6, x7, x8, x9,
                          d0, d1, d2, d3, d4, d5, d6, d7, d8, d9):
    # Forward mode by hand, written out as the function is: each term's residuals
    # r = x[i+1] - x[i]^2 and u = 1 - x[i] once, their tangents beside them.
    f = 0.0
    df = 0.0
    r = x1 - x0 * x0
    u = 1.0 - x0
    f += 100.0 * r ** 2 + u ** 2
    df += 200.0 * r * (d1 - 2.0 * x0 * d0) - 2.0 * u * d0
    r = x2 - x1 * x1
    u = 1.0 - x1
    f += 100.0 * r ** 2 + u ** 2
    df += 200.0 * r * (d2 - 2.0 * x1 * d1) - 2.0 * u * d1
    r = x3 - x2 * x2
    u = 1.0 - x2
    f += 100.0 * r ** 2 + u ** 2
    df += 200.0 * r * (d3 - 2.0 * x2 * d2) - 2.0 * u * d2
    r = x4 - x3 * x3
    u = 1.0 - x3
    f += 100.0 * r ** 2 + u ** 2
    df += 200.0 * r * (d4 - 2.0 * x3 * d3) - 2.0 * u * d3
    r = x5 - x4 * x4
    u = 1.0 - x4
    f += 100.0 * r ** 2 + u ** 2
    df += 200.0 * r * (d5 - 2.0 * x4 * d4) - 2.0 * u * d4
    r = x6 - x5 * x5
    u = 1.0 - x5
    f += 100.0 * r ** 2 + u ** 2
    df += 200.0 * r * (d6 - 2.0 * x5 * d5) - 2.0 * u * d5
    r = x7 - x6 * x6
    u = 1.0 - x6
    f += 100.0 * r ** 2 + u ** 2
    df += 200.0 * r * (d7 - 2.0 * x6 * d6) - 2.0 * u * d6
    r = x8 - x7 * x7
    u = 1.0 - x7
    f += 100.0 * r ** 2 + u ** 2
    df += 200.0 * r * (d8 - 2.0 * x7 * d7) - 2.0 * u * d7
    r = x9 - x8 * x8
    u = 1.0 - x8
    f += 100.0 * r ** 2 + u ** 2
    df += 200.0 * r * (d9 - 2.0 * x8 * d8) - 2.0 * u * d8
    return f, df

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


def fifty_terms_jvp_hand(a, b, c, d, e, da, db, dc, dd, de):
    # Forward mode by hand: each intermediate's tangent beside it, every shared
    # factor computed once, the tangents grouped by hand (2e as e + e, each
    # input's terms gathered: not the rounding of the rules' terms, which the
    # generated JVP keeps). The tightest form found: 150 arithmetic operations
    # and 13 calls against the function's 49 and 10 (docs/benchmarks.md).
    ee = math.exp(-e * e)
    q = 1.0 + b * b
    sc = math.sin(c)
    aq = a / q
    s1 = a * b + sc * d - ee + aq
    ds1 = (da * b + a * db + math.cos(c) * d * dc + sc * dd + (e + e) * ee * de
           + (da - (b + b) * aq * db) / q)
    aa1 = 1.0 + a * a
    l = math.log(aa1)
    de_ = d * e
    th = math.tanh(de_)
    r = math.sqrt(1.0 + e * e)
    bc = b * c
    s2 = l * c + th - bc * d + r
    ds2 = ((a + a) * c / aa1 * da + l * dc + (1.0 - th * th) * (dd * e + d * de)
           - (db * c + b * dc) * d - bc * dd + e / r * de)
    amb = a - b
    cab = math.cos(amb)
    cpd = c + d
    scd = math.sin(cpd)
    bd = b * d
    ee2 = e * e
    s3 = cab * scd + ee2 * e - a * e + math.atan(bd)
    ds3 = (-math.sin(amb) * scd * (da - db) + cab * math.cos(cpd) * (dc + dd)
           + (3.0 * ee2 - a) * de - e * da + (db * d + b * dd) / (1.0 + bd * bd))
    den = 2.0 + s1 * s1
    t39 = s3 / den
    ex = math.exp(0.1 * s2)
    s4 = s1 * s2 - t39 + ex * a
    ds4 = ds1 * s2 + s1 * ds2 - (ds3 - (s1 + s1) * t39 * ds1) / den + (0.1 * a * ds2 + da) * ex
    cc = c * c
    s5 = s4 * s4 + s3 * b - math.log1p(cc) + de_ * a
    ds5 = ((s4 + s4) * ds4 + ds3 * b + s3 * db - (c + c) / (1.0 + cc) * dc
           + (dd * e + d * de) * a + de_ * da)
    return (s5 + s4 * s1 - s2 * s3,
            ds5 + ds4 * s1 + s4 * ds1 - ds2 * s3 - s2 * ds3)


ROSEN_ARGS = (0.5, -0.3, 1.2, 0.8, -0.6, 0.1, 0.9, -1.1, 0.4, 0.7)
FIFTY_ARGS = (0.3, -0.7, 0.5, 1.1, -0.4)

WORKLOADS = [
    Workload("rosenbrock, 10 floats", rosenbrock10, rosenbrock10_hand, ROSEN_ARGS, wrt=None,
             hand_jvp=rosenbrock10_jvp_hand),
    Workload("50-term expression, 5 floats", fifty_terms, fifty_terms_hand, FIFTY_ARGS, wrt=None,
             hand_jvp=fifty_terms_jvp_hand),
]

JVP = True
"""run.py also times ``s2s_ad.jvp`` of these workloads (forward mode)."""
