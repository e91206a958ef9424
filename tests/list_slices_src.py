"""Slices of lists of any length (tests/test_list_slices.py): `xs[1:]`,
`xs[:-1]`, `xs[a:b]`, `xs[::-1]`, `xs[-k:]` of a list parameter or of a list
grown at run time, summed, iterated, zipped, indexed, stacked. Plain Python:
the tests compare s2s-ad's derivatives with central differences of these."""

import math

import numpy as np


def tail(xs, w):
    return sum(xs[1:]) * w + xs[0] * len(xs[:-1])


def differences(xs, w):
    # the common one: differences of consecutive states
    s = 0.0
    for a, b in zip(xs[:-1], xs[1:]):
        s = s + (b - a) ** 2 * w
    return s


def backwards(xs, w):
    s = 0.0
    for i, v in enumerate(xs[::-1]):
        s = s + v * w ** i
    return s


def window(xs, w, a: int, b: int):
    ys = xs[a:b]
    return sum(ys) * w + len(ys) * w * w


def window_steps(xs, w, a: int, b: int):
    # Python's clamping of each bound differs with the step's sign
    s = 0.0
    for j, v in enumerate(xs[a:b:-1]):
        s = s + v * w ** (j + 1)
    for j, v in enumerate(xs[a:b:2]):
        s = s + v * v * w * (j + 2)
    for j, v in enumerate(xs[a:b:-2]):
        s = s + v * w ** (j + 3)
    return s + sum(xs[a::-1]) * w + sum(xs[:b:-3]) * w * w


def last_k(xs, w, k: int):
    ys = xs[-k:]
    s = 0.0
    for v in ys:
        s = s + math.sin(v * w)
    return s + ys[0] * ys[-1] if ys else s


def every_other(xs, w):
    ys = xs[1::2]
    return sum([v * v for v in ys]) * w + sum(xs[::-2])


def extremes(xs, w):
    return max(xs[1:]) * w + min(xs[:-1]) * w * w + sorted(xs[::-1])[0]


# a list grown at run time: f(x, w, n)

def grown(x, w, n):
    hs = [x]
    for i in range(n):
        hs.append(math.sin(hs[-1] * w) + 0.5 * hs[i])
    s = 0.0
    for a, b in zip(hs[:-1], hs[1:]):
        s = s + (b - a) ** 2
    last = hs[-2:]
    return s + sum(last) * last[0] + sum(hs[::2]) * w


def grown_in_loop(x, w, n):
    s = 0.0
    for t in range(3):
        hs = [x * (t + 1.0)]
        for i in range(n):
            hs.append(hs[-1] * w + 0.1)
        for a, b in zip(hs[:-1], hs[1:]):
            s = s + a * b
        if t == 1:
            s = s + sum(hs[1:]) * x
    return s


def _energy(states):
    s = 0.0
    for a, b in zip(states[:-1], states[1:]):
        s = s + (b - a) ** 2
    return s


def passed_to_helper(x, w, n):
    hs = [x]
    for i in range(n):
        hs.append(math.cos(hs[-1]) * w)
    return _energy(hs[1:]) + _energy(hs[::-1]) * x


# NumPy code: a list of arrays grown at run time; f(x, n), x an array

def np_stacked(x, n):
    hs = [x]
    for i in range(n):
        hs.append(np.tanh(hs[-1] * 1.3 + 0.1 * i))
    m = np.stack(hs[1:])
    d = 0.0
    for a, b in zip(hs[:-1], hs[1:]):
        d = d + np.sum((b - a) ** 2)
    return np.sum(m * m) + d + np.sum(hs[::-1][0] * x)


# still refused, located

def run_time_step(xs, w, k: int):
    return sum(xs[::k]) * w
