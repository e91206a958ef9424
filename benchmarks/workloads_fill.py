"""Filling an array one element per iteration: a 1,000-step linear
recurrence ``y[i] = y[i - 1] * a + x[i]`` written into a NumPy array by
subscript assignment in a loop, against a hand-written gradient."""

import numpy as np

from harness import Workload


def fill_recurrence(x, a: float):
    y = np.zeros(len(x))
    y[0] = x[0]
    for i in range(1, len(x)):
        y[i] = y[i - 1] * a + x[i]
    return np.sum(y * y)


def fill_hand(x, a):
    n = len(x)
    y = np.zeros(n)
    y[0] = x[0]
    for i in range(1, n):
        y[i] = y[i - 1] * a + x[i]
    dy = 2.0 * y
    dx = np.zeros(n)
    da = 0.0
    for i in range(n - 1, 0, -1):
        g = dy[i]
        dx[i] += g
        da += g * y[i - 1]
        dy[i - 1] += g * a
    dx[0] += dy[0]
    return dx, da


ARGS = (np.random.default_rng(0).normal(size=1000), 0.99)
LONG = (np.random.default_rng(1).normal(size=4000), 0.99)

WORKLOADS = [
    Workload("y[i] = y[i-1]*a + x[i], 1,000 steps", fill_recurrence, fill_hand, ARGS, wrt=(0, 1)),
    Workload("y[i] = y[i-1]*a + x[i], 4,000 steps", fill_recurrence, fill_hand, LONG, wrt=(0, 1)),
]
