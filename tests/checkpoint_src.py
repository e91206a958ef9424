"""Loops for tests/test_checkpoint.py: the same programs taped and checkpointed."""

import math

import numpy as np


def recurrence(x, a, n):
    y = x
    for i in range(n):
        y = math.sin(y) * a + y * 0.5
    return y


def marked(x, a, n):
    y = x
    for i in range(n):  # s2s-ad: checkpoint(3)
        y = math.sin(y) * a + y * 0.5
    return y


def marked_default(x, a, n):
    y = x
    for i in range(n):  # s2s-ad: checkpoint
        y = math.sin(y) * a + y * 0.5
    return y


def two_carried(x, v, dt, n):
    for i in range(2, n + 2):
        a = -math.sin(x) - 0.1 * v
        x, v = x + dt * v, v + dt * a
    return x * v


def strided(x, n):
    s = x
    for i in range(n, 0, -2):
        s = s * math.cos(s + i * 0.01) + x
    return s


def branchy(x, n):
    y = x
    for i in range(n):
        if math.sin(y) > 0.0:
            y = y * 1.1 - 0.2 * math.cos(y)
        else:
            y = y + 0.3 * math.sin(y * y)
    return y


def nested(x, n, m):
    s = x
    for i in range(n):
        t = s
        for j in range(m):
            t = math.sin(t) + s * 0.25
        s = s * 0.5 + t
    return s


def breaks(x, n):
    s = x
    for i in range(n):
        s = s * 1.25 + math.sin(s)
        if s > 40.0:
            break
    return s


def returns_early(x, n):
    s = x
    for i in range(n):
        s = s * 1.5 + math.cos(s)
        if s > 30.0:
            return s * x
    return s


def newton(c):
    x = 1.0
    while abs(x * x * x - c) > 1e-12 * c:  # s2s-ad: checkpoint
        x = x - (x * x * x - c) / (3.0 * x * x)
    return x


def grows(x, limit):
    y = x
    k = 0.0
    while y < limit:
        y = y * 1.1 + 0.1 * math.sin(y)
        k = k + y
    return y + 0.01 * k


def step(y, a):
    return math.sin(y) * a + y * 0.5


def calls_in_loop(x, a, n):
    y = x
    for i in range(n):
        y = step(y, a) + 0.1 * y * y
    return y


def looping_helper(x, a, n):
    for i in range(n):  # s2s-ad: checkpoint(2)
        x = math.tanh(x * a + 0.3)
    return x


def calls_looping_helper(x, a, n):
    y = looping_helper(x, a, n) * x
    if y > 0.0:
        y = y + looping_helper(y, 0.5, n)
    return y


def over_list(c, x):
    s = 0.0
    for v in c:
        s = math.sin(s * x) + v
    return s


def horner(c, x):
    s = 0.0
    for i in range(len(c)):
        s = s * x + c[i]
    return s


def in_branch(x, n):
    y = x
    if x > 0.0:
        for i in range(n):
            y = y * math.cos(y) + x
    else:
        y = -x
    return y


def array_state(u, w, n):
    for i in range(n):
        u = np.tanh(u * w + 0.1) + 0.5 * u
    return np.sum(u * u)


def array_branchy(u, n):
    s = 0.0
    for i in range(n):
        if np.sum(u) > 0.0:
            u = np.sin(u) * 1.1
        else:
            u = np.cos(u) + u
        s = s + np.sum(u) * 0.1
    return s


def nested_marked(x, n):
    s = x
    for i in range(n):
        for j in range(n):  # s2s-ad: checkpoint
            s = math.sin(s) + 0.5
    return s


def writes_in_place(x, n):
    y = np.zeros(n)
    for i in range(n):  # s2s-ad: checkpoint
        y[i] = np.sin(x[i])
    return np.sum(y)


def unrolled(x):
    xs = []
    for i in range(3):  # s2s-ad: checkpoint
        xs.append(x * i)
    return xs[0] + xs[2]


import s2s_ad  # noqa: E402
from s2s_ad import checkpoint  # noqa: E402


def with_block(x, a, n):
    y = x
    with s2s_ad.checkpoint(4):
        for i in range(n):
            y = math.sin(y) * a + y * 0.5
    z = y
    with checkpoint():
        while z < 3.0:
            z = z * 1.2 + 0.1
    return z * y


def with_no_loop(x):
    with s2s_ad.checkpoint():
        y = x * 2.0
    return y


def with_other(x):
    with open("f") as f:
        y = x
    return y


def branch_yields_outer(x, a, n):
    b = a * 2.0
    y = x
    for i in range(n):  # s2s-ad: checkpoint(2)
        if y > 0.5:
            t = b
        else:
            t = a
        y = math.sin(y) * t + 0.3
    return y


def calls_branch_yields_outer(x, a, n):
    return branch_yields_outer(x, a, n) * x


def helper_of_helper(x, a, n):
    return calls_looping_helper(x, a, n) + 0.5 * x


def helper_in_loop(x, a, n):
    s = x
    for k in range(3):
        s = looping_helper(s, a, n) + 0.1 * s
    return s


def appends_at_run_time(x, n):
    # the snapshot would hold the list itself, which later appends change: the
    # recomputation would read xs[-1] of the final list (a wrong gradient)
    xs = [x]
    for i in range(n):  # s2s-ad: checkpoint(3)
        xs.append(math.sin(xs[-1]) * 1.1 + 0.1 * x)
    return sum(xs)
