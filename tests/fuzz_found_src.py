"""Reproducers of what the fuzzer's wider checks found (tests/test_fuzz_found.py).

Issue 17's short-circuit conditions with conditional expressions in an
operand, nested conditional expressions and clamps (the --conditions family
of tests/fuzz.py draws such programs), and a function whose branch sides
compute values the reverse sweep reads (an ``elif``, a temporary inside a
side): its forward/backward pair, which ``vjp`` runs and every call of a
helper inside a loop or branch uses; and functions whose drawn reverse sweep
(``s2s-ad graph --backward``) did not run to the gradient.
"""

import numpy as np


def or_ifexp(x, y):
    if (x > 1.0) or ((x if x < 0.0 else 1.5) < 0.2):
        y = x * 3.0
    return y


def and_ifexp(x, y):
    if (x < 1.0) and ((x if x < 0.0 else 1.5) > 0.2):
        y = x * 3.0
    return y


def while_and_ifexp(x, y):
    k = 0
    while k < 3 and ((x if x < 0.0 else 1.5) > 0.2):
        y = y * x
        k = k + 1
    return y


def nested_ifexp(x):
    return x if x > 0.0 else (x * 2.0 if x < -1.0 else x * 3.0)


def ifexp_with_or_inside_or(x, y):
    if (x > 1.0) or ((x if (x < 0.2) or (x < 0.1) else 2.0) > 0.2):
        y = y * x
    return y


def clamp(t, s):
    t = t * s
    t = 0.0 if t < 0.0 else (1.0 if t > 1.0 else t)
    return t * t


def elif_chain(x, b):
    if b > 1.0:
        x = x * 2.0
    elif b > 0.0:
        x = x * 3.0
    else:
        x = x * 4.0
    return x * x


def temporary_in_a_side(x, b):
    if b > 0.0:
        x = x * (b * b + 1.0)
    return x * x


def helper_calls_elif_chain_in_a_loop(x, b):
    s = 0.0
    for i in range(2):
        s = s + elif_chain(x, b)
    return s


def break_after_a_dead_write(v):
    w = v
    for i in range(3):
        if w > 0.5:
            v = w * 3.0
            break
        v = v * v
        w = v
    return w * w


def carried_copied_from_carried(x, u):
    for i in range(3):
        x = u
        u = u + 0.25 * i
    return x * u


def branch_then_loop_returning_its_value(w):
    if w < 0.0:
        w = -w
    else:
        w = w * 3.0
    for i in range(2):
        w = w * w
    return w


def clamp_then_loop(w):
    w = 1.0 if w < 0.0 else -w
    for i in range(2):
        w = w * w
    return w


def numpy_subtracted_contribution(a, s):
    return np.sum(a * np.cos(s) + a * np.abs(s))


def numpy_subtracted_contribution_in_a_loop(a, s):
    t = 0.0
    for i in range(2):
        t = t + np.sum(a * np.cos(s) + a * np.abs(s))
    return t


def numpy_adjoint_copied_then_added_into(a):
    y = a * 1.0
    y -= y[::-1] * 0.5
    return np.sum(y * y)


def numpy_value_in_a_side(a, s):
    if s > 0.0:
        t = np.sum(a * a)
    else:
        t = np.sum(a * s)
    return t
