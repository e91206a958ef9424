"""Functions whose gradient `check` must prove path by path (tests/test_check_paths.py)."""

import math


def piecewise(x, a):
    # The sample point (x=0.5) takes the middle branch only.
    if x > 1.0:
        y = a * x * x
    elif x > 0.0:
        y = a * math.sin(x)
    else:
        y = -x
    return y + x


def svm(w0, w1, b, xs0, xs1, ys):
    # At the sample point every margin is above 1: every hinge is inactive.
    loss = 0.0
    for x0, x1, y in zip(xs0, xs1, ys):
        margin = y * (w0 * x0 + w1 * x1 + b)
        loss += max(0.0, 1.0 - margin)
    return loss + 0.5 * (w0 * w0 + w1 * w1)


def cos_elsewhere(x, y):
    # math.cos only on the path the sample point (x=0.5) does not take.
    if x < 1.0:
        return x * y * y
    return math.cos(x) * y


def sqrt_then_branch(x):
    # Undefined for x < 0: random points there are skipped.
    r = math.sqrt(x)
    if r > 1.0:
        return r * x
    return r + x


def tanh_loop(x, w):
    for i in range(5):
        x = math.tanh(w * x + 0.1)
    return x


def sin_loop(x, a):
    for i in range(5):
        x = math.sin(a * x) + x
    return x


def while_counter(x, a):
    i = 0
    while i < 5:
        x = x * a + math.cos(x)
        i += 1
    return x


def logistic(x, r, n):
    for i in range(n):
        x = r * x * (1.0 - x)
    return x


def slow_paths(x, y):
    # Branches in every step of a recurrence whose expressions swell.
    for i in range(30):
        if x > y:
            x = math.sin(x) * x + y
        else:
            x = math.cos(y) * x + 0.5
    return x


def branchy_loop(x, w):
    # A branch in each of 4 steps: several paths, each a nested expression.
    for i in range(4):
        if x > 0.0:
            x = math.tanh(w * x + 0.1)
        else:
            x = math.sin(w * x) + x
    return x


def walk(x, a):
    # Ends at the sample point (a=0.7); runs forever where a <= 0.
    while x < 4.0:
        x = x + a
    return x * a
