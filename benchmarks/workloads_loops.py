"""Loop workloads: Horner's rule over 100 coefficients (through
``s2s_ad.grad`` as a user calls it, on a list of any length, and generated
for length 100), a 200-step recurrence, a 1,000-step trajectory appended
to a list then summed (the trip count a constant, and a parameter ``n``: a
list grown at run time either way) and a 1,000-item list made by
``[0.0] * n`` and written by index (``ys[i] = ...``, ``ys[i] += ys[i - 1] * a``), each with a hand-written reverse-mode
gradient and a hand-written forward-mode JVP, and
HIPS autograd (a tracing AD tool) as a contender when it is installed."""

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


def horner_jvp_hand(c, x, dc, dx):
    # Forward mode by hand: the coefficients and their tangents walked together.
    s = 0.0
    ds = 0.0
    for ci, dci in zip(c, dc):
        ds = ds * x + s * dx + dci
        s = s * x + ci
    return s, ds


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


def recurrence_jvp_hand(x, a, n, dx, da):
    # sin computed once, the tangent factored and its constants scaled before
    # the loop (0.01 * a): seven operations and a cos a step beside the step's
    # six and a sin, the tightest form found (docs/benchmarks.md)
    ca, cda = 0.01 * a, 0.01 * da
    for i in range(n):
        sx = math.sin(x)
        dx = dx + cda * sx + dx * (ca * math.cos(x) - 0.002 * x)
        x = x + 0.01 * (a * sx - x * x * 0.1)
    return x, dx


STEPS = 1000


def trajectory(x0, v0, k):
    xs = []
    x, v = x0, v0
    for i in range(1000):
        v = v - 0.01 * k * math.sin(x)
        x = x + 0.01 * v
        xs.append(x)
    return sum(xs)


def trajectory_hand(x0, v0, k):
    # Forward keeps each step's old position; reverse runs the steps backwards.
    old = [0.0] * STEPS
    xs = []
    x, v = x0, v0
    for i in range(STEPS):
        old[i] = x
        v = v - 0.01 * k * math.sin(x)
        x = x + 0.01 * v
        xs.append(x)
    dx, dv, dk = 0.0, 0.0, 0.0
    for i in range(STEPS - 1, -1, -1):
        dx += 1.0                       # sum(xs) reads the new position once
        dv += 0.01 * dx                 # x = x + 0.01 * v
        xo = old[i]
        dk -= 0.01 * math.sin(xo) * dv  # v = v - 0.01 * k * sin(x)
        dx -= 0.01 * k * math.cos(xo) * dv
    return dx, dv, dk


def trajectory_jvp_hand(x0, v0, k, dx0, dv0, dk):
    return trajectory_n_jvp_hand(x0, v0, k, STEPS, dx0, dv0, dk)


def trajectory_n(x0, v0, k, n):
    xs = []
    x, v = x0, v0
    for i in range(n):
        v = v - 0.01 * k * math.sin(x)
        x = x + 0.01 * v
        xs.append(x)
    return sum(xs)


def trajectory_n_hand(x0, v0, k, n):
    old = [0.0] * n
    xs = []
    x, v = x0, v0
    for i in range(n):
        old[i] = x
        v = v - 0.01 * k * math.sin(x)
        x = x + 0.01 * v
        xs.append(x)
    dx, dv, dk = 0.0, 0.0, 0.0
    for i in range(n - 1, -1, -1):
        dx += 1.0
        dv += 0.01 * dx
        xo = old[i]
        dk -= 0.01 * math.sin(xo) * dv
        dx -= 0.01 * k * math.cos(xo) * dv
    return dx, dv, dk


def trajectory_n_jvp_hand(x0, v0, k, n, dx0, dv0, dk):
    xs, dxs = [], []
    x, v, dx, dv = x0, v0, dx0, dv0
    for i in range(n):
        sx = math.sin(x)
        dv = dv - 0.01 * (dk * sx + k * math.cos(x) * dx)
        v = v - 0.01 * k * sx
        dx = dx + 0.01 * dv
        x = x + 0.01 * v
        xs.append(x)
        dxs.append(dx)
    return sum(xs), sum(dxs)


def prefix_writes(xs, a):
    n = len(xs)
    ys = [0.0] * n
    for i in range(n):
        ys[i] = xs[i] * a
    for i in range(1, n):
        ys[i] += ys[i - 1] * a
    return sum(ys)


def prefix_writes_hand(xs, a):
    # The forward pass keeps the item each step reads (ys[i - 1], final by then);
    # the reverse walks the steps backwards, then the first loop.
    n = len(xs)
    ys = [0.0] * n
    for i in range(n):
        ys[i] = xs[i] * a
    read = [0.0] * n
    for i in range(1, n):
        read[i] = ys[i - 1]
        ys[i] += ys[i - 1] * a
    dys = [1.0] * n
    da = 0.0
    for i in range(n - 1, 0, -1):
        g = dys[i]
        dys[i - 1] += g * a
        da += g * read[i]
    dxs = [0.0] * n
    for i in range(n):
        dxs[i] = dys[i] * a
        da += dys[i] * xs[i]
    return dxs, da


def prefix_writes_jvp_hand(xs, a, dxs, da):
    n = len(xs)
    ys = [0.0] * n
    dys = [0.0] * n
    for i in range(n):
        ys[i] = xs[i] * a
        dys[i] = dxs[i] * a + xs[i] * da
    for i in range(1, n):
        dys[i] += dys[i - 1] * a + ys[i - 1] * da
        ys[i] += ys[i - 1] * a
    return sum(ys), sum(dys)


COEFFS = [math.sin(0.1 * k) for k in range(100)]
PREFIX_ARGS = ([math.cos(0.01 * k) for k in range(1000)], 0.5)
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
             others=horner_others, hand_jvp=horner_jvp_hand),
    Workload("horner, 100, lengths={'c': 100}", horner, horner_hand, HORNER_ARGS, wrt=(0, 1),
             lengths={"c": 100}, hand_jvp=horner_jvp_hand),
    Workload("trajectory, 1,000 appends, sum", trajectory, trajectory_hand, (0.3, 0.1, 2.0),
             wrt=(0, 1, 2), hand_jvp=trajectory_jvp_hand),
    Workload("trajectory, n=1,000 appends, sum", trajectory_n, trajectory_n_hand,
             (0.3, 0.1, 2.0, STEPS), wrt=(0, 1, 2), hand_jvp=trajectory_n_jvp_hand),
    Workload("recurrence, 200 steps", recurrence, recurrence_hand, REC_ARGS, wrt=(0, 1),
             others=recurrence_others, hand_jvp=recurrence_jvp_hand),
    Workload("[0.0] * n written by index, n=1,000", prefix_writes, prefix_writes_hand,
             PREFIX_ARGS, wrt=(0, 1), hand_jvp=prefix_writes_jvp_hand),
]

JVP = True
"""run.py also times ``s2s_ad.jvp`` of these workloads (forward mode)."""
