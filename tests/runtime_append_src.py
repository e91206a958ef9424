"""Lists grown at run time: `xs = []` then `xs.append(...)` inside loops
over `range(n)` with a parameter `n`, inside `while` loops and branches,
read back by index (loop variables, integer arithmetic, negative indices),
`len`, `sum`, and iterated (`for`, `enumerate`, `zip`, `reversed`)
(tests/test_runtime_append.py). Each takes floats `x`, `w` and an int `n`."""

import math

import numpy as np


def trajectory(x, w, n):
    xs = [x]
    for i in range(n):
        xs.append(math.sin(xs[-1]) * w + xs[i] * 0.1)
    return sum(xs) + xs[len(xs) // 2] * len(xs)


def history_while(x, w, n):
    s = x
    hs = []
    while s < 5.0 + n:
        s = s * (w + 0.4) + 0.3
        hs.append(s * s)
    t = 0.0
    for i, h in enumerate(hs):
        t = t + h * (i + 1)
    for a, b in zip(hs, reversed(hs)):
        t = t + a * b * 0.01
    for v in hs:
        t = t + math.cos(v)
    return t


def all_states(x, w, n):
    states = [x]
    for t in range(n):
        states.append(math.tanh(states[t] * w + 0.2))
    loss = 0.0
    for t in range(len(states) - 1):
        loss = loss + (states[t + 1] - states[t]) ** 2
    return loss + states[-1]


def branch_append(x, w, n):
    hs = []
    s = x
    for t in range(n):
        s = math.tanh(s * w + 0.1)
        if s > 0.2:
            hs.append(s * 2.0)
        else:
            hs.append(s)
    total = 0.0
    for i in range(len(hs) - 1):
        total = total + hs[i] * hs[i + 1]
    return total + sum(hs)


def two_lists(x, w, n):
    xs = []
    ys = [w]
    for i in range(n):
        xs.append(x * (i + 1))
        ys.append(ys[i] * x + xs[i])
    t = 0.0
    for a, b in zip(xs, ys):
        t = t + a * b
    return t + ys[-1]


def appended_later(x, w, n):
    xs = [x * w]
    for i in range(n):
        xs.append(xs[-1] * 0.5 + w)
    xs.append(x * x)
    total = 0.0
    for v in reversed(xs):
        total = total * 0.9 + v
    return total


def early_stop(x, w, n):
    xs = [x]
    for i in range(n):
        if xs[-1] > 3.0:
            break
        xs.append(xs[-1] * w + 0.5)
    return sum(xs) * xs[-1]


def inner(x, w, n):
    return trajectory(x, w, n) * 2.0 + branch_append(w, x, n)


def in_helper(x, w, n):
    return inner(x, w, n) + all_states(w, x, n) * x


def _states(A, x, n):
    states = [x]
    for t in range(n):
        states.append(np.tanh(A @ states[t]))
    out = 0.0
    for s in states:
        out = out + np.sum(s * s)
    return out + np.sum(states[-1]) + np.sum(sum(states))


def array_states(A, x, n):
    return _states(A, x, n)


def array_states_helper(A, x, n):
    return _states(A, x, n) * 0.5 + np.sum(A * A)


def array_while(A, x, n):
    hs = []
    h = x
    k = 0
    while k < n:
        h = np.tanh(A @ h + 0.1)
        hs.append(h)
        k = k + 1
    total = 0.0
    for i, h2 in enumerate(hs):
        total = total + np.sum(h2 * hs[len(hs) - 1 - i]) * (i + 1)
    return total


def branch_break(x, w, n):
    xs = []
    s = x
    k = 0
    while k < n:
        k = k + 1
        s = math.sin(s * w) + 0.5
        if s > 0.9:
            xs.append(s * s)
            if s > 1.3:
                break
        else:
            xs.append(s)
            xs.append(s * w)
    t = 0.0
    for i in range(len(xs)):
        t = t + xs[i] * xs[len(xs) - 1 - i]
    return t + x

def nested(x, w, n):
    xs = [w]
    for i in range(n):
        xs.append(xs[-1] * x)
        for j in range(i):
            xs.append(xs[j] * 0.5 + xs[-1] * w)
    return sum(xs)

def extend_const(x, w, n):
    xs = []
    for i in range(n):
        xs.extend([x * i, w])
        xs.append(1.0)
        xs.append(i)
    t = 0.0
    for i in range(n):
        t = t + xs[4 * i] * xs[4 * i + 1] + xs[-1 - i]
    return t + x * w

def while_len(x, w, n):
    xs = [x, w]
    while len(xs) < n + 2:
        xs.append(xs[-1] * xs[-2] * 0.9 + 0.1)
    return xs[-1] + sum(xs)

def inactive(x, w, n):
    xs = []
    for i in range(n):
        xs.append(0.5)
    return len(xs) * x * w + sum(xs)

def static_then_grown(x, w, n):
    xs = [x]
    xs.append(w * x)
    for i in range(n):
        xs.append(xs[i] + xs[i + 1])
    xs.append(x)
    return xs[-1] * xs[-2] + xs[1]

def after_loop_append(x, w, n):
    hs = []
    for i in range(n):
        hs.append(x * w * i)
    hs.append(hs[0] if n > 0 else x)
    return sum(hs) * hs[-1]


def created_inside_loop(x, n):
    t = 0.0
    for i in range(n):
        hs = []
        for j in range(n):
            hs.append(x * j)
        t = t + sum(hs)
    return t


def sliced(x, n):
    xs = []
    for i in range(n):
        xs.append(x * x * i)
    return sum(xs[1:])


# -- refused -----------------------------------------------------------------

def stored_by_index(x, n):
    xs = [x]
    for i in range(n):
        xs[0] = xs[0] * x
    return xs[0]


def iterated_and_appended(x, n):
    xs = [x]
    for v in xs:
        if len(xs) < n:
            xs.append(v * x)
    return sum(xs)


def returned(x, n):
    xs = []
    for i in range(n):
        xs.append(x * i)
    return xs


def _cell(W, h, x):
    z = np.tanh(W @ h + x)
    return z * 0.5, z


def lstm_like(W, h0, xs):
    all_states = [h0]
    total = 0.0
    for t in range(len(xs)):
        y, s = _cell(W, all_states[t], xs[t])
        all_states.append(s)
        total = total + np.sum(y * y)
    return total + np.sum(all_states[-1])


def sum_after_loop(c, x):
    s = 0.0
    for i in range(len(c)):
        s = s * x + c[i]
    return s + sum(c) * x


def sum_before_loop(c, x):
    t = sum(c) * x
    s = 0.0
    for i in range(len(c)):
        s = s * x + c[i]
    return s + t


def aliased(x, w, n):
    xs = [x]
    ys = xs
    for i in range(n):
        xs.append(ys[-1] * w + 0.1)
    return sum(ys) + len(ys) * x


def in_a_dict(x, w, n):
    xs = [x]
    d = {"h": xs}
    for i in range(n):
        xs.append(xs[-1] * w)
    return sum(d["h"])


def picked_by_a_branch(x, w, n):
    xs = []
    ys = [x]
    for i in range(n):
        xs.append(x * w)
        ys.append(w)
    if x > 0.5:
        zs = xs
    else:
        zs = ys
    return sum(zs) + len(zs)
