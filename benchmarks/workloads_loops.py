"""Loop workloads: Horner's rule over 100 coefficients and a 200-step
recurrence, each with a hand-written reverse-mode gradient, and HIPS
autograd (a tracing AD tool) as a contender when it is installed."""

import math

from harness import Workload


def horner(c, x):
    s = 0.0
    for i in range(len(c)):
        s = s * x + c[i]
    return s


def horner_hand(c, x):
    # Forward keeps every partial sum; reverse walks the coefficients backwards.
    n = len(c)
    partial = [0.0] * n
    s = 0.0
    for i in range(n):
        partial[i] = s
        s = s * x + c[i]
    dc = [0.0] * n
    dx = 0.0
    ds = 1.0
    for i in range(n - 1, -1, -1):
        dc[i] = ds
        dx += ds * partial[i]
        ds = ds * x
    return dc, dx


def recurrence(x, a, n):
    for i in range(n):
        x = x + 0.01 * (a * math.sin(x) - x * x * 0.1)
    return x


def recurrence_hand(x, a, n):
    xs = [0.0] * n
    for i in range(n):
        xs[i] = x
        x = x + 0.01 * (a * math.sin(x) - x * x * 0.1)
    dx, da = 1.0, 0.0
    for i in range(n - 1, -1, -1):
        xi = xs[i]
        da += dx * 0.01 * math.sin(xi)
        dx = dx * (1.0 + 0.01 * (a * math.cos(xi) - 0.2 * xi))
    return dx, da


COEFFS = [math.sin(0.1 * k) for k in range(100)]
HORNER_ARGS = (COEFFS, 0.97)
REC_ARGS = (0.3, 1.7, 200)

horner_others = {}
recurrence_others = {}
try:
    import autograd
    import autograd.numpy as anp

    def _horner_ag(c, x):
        s = 0.0
        for i in range(len(c)):
            s = s * x + c[i]
        return s

    def _recurrence_ag(x, a, n):
        for i in range(n):
            x = x + 0.01 * (a * anp.sin(x) - x * x * 0.1)
        return x

    _hg = autograd.grad(_horner_ag, argnum=[0, 1])
    _rg = autograd.grad(_recurrence_ag, argnum=[0, 1])
    horner_others["autograd"] = lambda: _hg(*HORNER_ARGS)
    recurrence_others["autograd"] = lambda: _rg(*REC_ARGS)
except ImportError:  # autograd is optional
    pass


WORKLOADS = [
    Workload("horner, 100 coefficients", horner, horner_hand, HORNER_ARGS, wrt=(0, 1),
             others=horner_others, lengths={"c": 100}),
    Workload("recurrence, 200 steps", recurrence, recurrence_hand, REC_ARGS, wrt=(0, 1),
             others=recurrence_others),
]

JVP = True
"""run.py also times ``s2s_ad.jvp`` of these workloads (forward mode)."""
