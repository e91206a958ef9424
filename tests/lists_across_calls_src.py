"""Lists of any length crossing calls (tests/test_lists_across_calls.py):
NumPy lists grown in a loop passed to helpers (the LSTM pattern), helpers
returning lists grown at run time, and `sorted`/`min`/`max` over lists of any
length. Every function here is plain Python: the tests compare s2s-ad's
gradients with central differences of these."""

import math

import numpy as np


# -- 1. a NumPy list grown in a loop, passed to helpers -----------------------

def _total(states):
    s = 0.0
    for h in states:
        s = s + np.sum(h * h)
    return s


def _loss(states, targets):
    s = 0.0
    for i in range(len(states)):
        s = s + np.sum((states[i] - targets[i]) ** 2)
    return s


def _weighted(states, w):
    s = 0.0
    for i, h in enumerate(states):
        s = s + np.sum(np.sin(h) * w) * (i + 1.0)
    for h, g in zip(states, reversed(states)):
        s = s + np.dot(h, g)
    return s + np.sum(sum(states)) + np.sum(states[-1] * states[0])


def _through(states, w):
    return _weighted(states, w) + 0.5 * _total(states)


def lstm_total(W, x, n):
    h = x
    states = []
    for t in range(n):
        h = np.tanh(W @ h)
        states.append(h)
    return _total(states)


def lstm_loss(W, U, x, targets, n):
    h = x
    c = x * 0.5
    states = []
    for t in range(n):
        c = np.tanh(U @ c) * 0.5 + c * 0.5
        h = np.tanh(W @ h + c)
        states.append(h)
    return _loss(states, targets)


def grown_through_helpers(W, x, w, n):
    h = x
    states = [x * 1.0]
    for t in range(n):
        h = np.sin(W @ h) + 0.1 * states[t]
        states.append(h)
    a = _through(states, w)
    states.append(h * a)  # after the call: the helper saw the list as it was then
    return a + _total(states)


def grown_and_called_in_loop(W, x, n):
    h = x
    states = []
    s = 0.0
    for t in range(n):
        h = np.tanh(W @ h)
        states.append(h)
        s = s + _total(states) * (t + 1.0)
    return s


def called_in_branch(W, x, targets, n, sel):
    h = x
    states = []
    for t in range(n):
        h = np.tanh(W @ h)
        states.append(h)
    if sel > 0.5:
        r = _total(states) * 2.0
    else:
        r = _loss(states, targets) - 1.0
    return r


# in-place writes to an item of a list that crossed a call: refused, located

def _grow(W, x, n):
    h = x
    states = []
    for t in range(n):
        h = np.tanh(W @ h)
        states.append(h)
    return states


def _writes_item(states):
    states[0][0] = 2.0
    return np.sum(states[0] * states[-1])


def _writes_alias(states):
    h = states[-1]
    h[1] = 2.0
    return np.sum(states[0] * h)


def _adds_in_place(states):
    h = states[0]
    h += 1.0
    return np.sum(h * states[-1])


def _adds_in_loop(states):
    s = 0.0
    for i in range(len(states)):
        h = states[i]
        h *= 2.0
        s = s + np.sum(h)
    return s


def _writes_in_loop(states):
    s = 0.0
    for h in states:
        h[0] = 1.0
        s = s + np.sum(h)
    return s


def _replaces_item(states):
    states[0] = states[0] * 2.0
    return np.sum(states[0])


def _passes_on(states):
    return _writes_item(states) + 1.0


WRITERS = {"_writes_item": "states[0][0] = 2.0", "_writes_alias": "h[1] = 2.0",
           "_adds_in_place": "h += 1.0", "_adds_in_loop": "h *= 2.0",
           "_writes_in_loop": "def _writes_in_loop(states):",
           "_replaces_item": "states[0] = states[0] * 2.0",
           "_passes_on": "states[0][0] = 2.0"}


def caller_writes_after(W, x, n):
    h = x
    states = []
    for t in range(n):
        h = np.tanh(W @ h)
        states.append(h)
    a = _total(states)
    states[0][0] = 3.0
    return a + np.sum(states[0])


def caller_writes_alias_after(W, x, n):
    h = x
    states = []
    for t in range(n):
        h = np.tanh(W @ h)
        states.append(h)
    a = _total(states)
    h[0] = 3.0
    return a + np.sum(h)


def caller_adds_after(W, x, n):
    h = x
    states = []
    for t in range(n):
        h = np.tanh(W @ h)
        states.append(h)
    a = _total(states)
    last = states[-1]
    last += 1.0
    return a + np.sum(last)


CALLER_WRITES = {"caller_writes_after": "states[0][0] = 3.0",
                 "caller_writes_alias_after": "h = np.tanh(W @ h)",
                 "caller_adds_after": "last += 1.0"}


# -- 2. a helper returning a list grown at run time ----------------------------

def _rollout(x0, w, n):
    xs = [x0]
    for i in range(n):
        xs.append(math.sin(xs[-1]) * w + 0.1 * xs[i])
    return xs


def _energy(xs, w):
    s = 0.0
    for v in xs:
        s = s + v * w
    return s


def _rollout_half(x, w, n):
    return _rollout(x * 0.5, w, n)  # a helper's list returned again


def rollout_indexed(x, w, n):
    xs = _rollout(x, w, n)
    return xs[-1] * xs[0] + xs[len(xs) // 2] * w


def rollout_summed(x, w, n):
    xs = _rollout(x, w, n)
    return sum(xs) + len(xs) * x


def rollout_iterated(x, w, n):
    s = 0.0
    xs = _rollout(x, w, n)
    for i, v in enumerate(xs):
        s = s + v * v * (i + 1.0)
    for a, b in zip(xs, reversed(xs)):
        s = s + a * b
    return s


def rollout_passed_on(x, w, n):
    xs = _rollout_half(x, w, n)
    return _energy(xs, w) + _energy(_rollout(w, x, n), x) + xs[-1]


def rollout_under_the_same_condition(x, w, n):
    """A list a helper returns in one branch, read again under the same
    condition after the `if`."""
    big = x > 0.0
    if big:
        xs = _rollout(x, w, n)
        s = x
    else:
        s = x * w
    if big:
        s = s + sum(xs) * w + xs[-1]
    return s


def rollout_copied_and_grown(x, w, n):
    ys = []
    for v in _rollout(x, w, n):
        ys.append(v * 2.0)
    ys.append(x * w)
    return sum(ys) * ys[-1]


def _np_rollout(W, h, n):
    hs = [h * 1.0]
    for t in range(n):
        h = np.tanh(W @ h)
        hs.append(h)
    return hs


def np_rollout_used(W, x, n):
    hs = _np_rollout(W, x, n)
    s = 0.0
    for h in hs:
        s = s + np.sum(h * h)
    return s + np.sum(hs[-1]) * len(hs) + np.sum(sum(hs))


def np_rollout_passed_on(W, x, targets, n):
    hs = _np_rollout(W, x, n)
    return _loss(hs, targets) + np.sum(hs[0] * hs[-1])


def rollout_called_in_loops(x, w, n):
    # a call inside a loop, a while loop, nested loops and a branch: each run
    # of the body has a list of its own, and an adjoint list of its own
    s = 0.0
    for k in range(2):
        xs = _rollout(x * (k + 1.0), w, n + k)
        s = s + xs[-1] * xs[0] + sum(xs) * 0.1 + _energy(xs, w)
        for j in range(2):
            ys = _rollout(w + j * 0.5, x, n)
            if ys[-1] > 0.0:
                s = s + ys[-1] * ys[0]
    t = 0.0
    while t < 2.0:
        zs = _rollout(x + t * 0.1, w, n)
        t = t + zs[-1] * zs[-1] + 0.5
    return s + t


def _smallest(xs):
    return sorted(xs)[0]


def np_rollout_in_loop(W, x, n):
    s = 0.0
    for k in range(2):
        hs = _np_rollout(W, x * (k + 1.0), n + k)
        s = s + np.sum(hs[-1] * hs[0]) + np.sum(sum(hs))
    return s


# refused, located: the line each is refused at

def rollout_appended(x, w, n):
    xs = _rollout(x, w, n)
    xs.append(x * w)
    return sum(xs)


def rollout_in_both_branches(x, w, n):
    if x > 0.0:
        xs = _rollout(x, w, n)
    else:
        xs = _rollout(w, x, n)
    return xs[-1]


def rollout_carried(x, w, n):
    xs = _rollout(x, w, n)
    for k in range(2):
        xs = _rollout(xs[-1], w, n)
    return xs[-1]


def rollout_unpacked(x, w, n):
    a, b = _rollout(x, w, 1)
    return a * b


def rollout_returned(x, w, n):
    return _rollout(x, w, n)


def _gives_back(xs):
    return xs


def rollout_given_back(x, w, n):
    return sum(_gives_back(_rollout(x, w, n)))


def _returns_in_loop(x, n):
    xs = [x]
    for i in range(n):
        xs.append(xs[-1] * x)
        if i > 2:
            return xs
    return xs


def rollout_returned_in_loop(x, w, n):
    return sum(_returns_in_loop(x, n))


RETURN_REFUSED = {
    "rollout_appended": ("xs.append(x * w)", "a list of any length a helper returned"),
    "rollout_in_both_branches": ("if x > 0.0:", "is a different list in each branch"),
    "rollout_carried": ("for k in range(2):", "reassigned in the loop"),
    "rollout_unpacked": ("a, b = _rollout(x, w, 1)", "it cannot be unpacked"),
    "rollout_returned": ("return _rollout(x, w, n)", "from the function differentiated"),
    "rollout_given_back": ("return xs", "the caller passed"),
    "rollout_returned_in_loop": ("return xs", "once, at the end of its body"),
}


# -- 3. sorted, min and max over lists of any length ----------------------------

def _grow(x, n):
    xs = [x]
    for i in range(n):
        xs.append(math.sin(xs[-1] + i) * 0.9)
    return xs


def sorted_grown(x, w, n):
    xs = [x]
    for i in range(n):
        xs.append(math.sin(xs[-1] + i) * 0.9 + w * 0.1)
    ys = sorted(xs)
    s = 0.0
    for i in range(len(ys)):
        s = s + ys[i] * (i + 1.0) * w
    return s + sorted(xs)[-1]


def sorted_key_reverse(x, w, n):
    ys = sorted(_grow(x, n), key=lambda t: (t - w) ** 2, reverse=True)
    s = 0.0
    for i, v in enumerate(ys):
        s = s + v * (i + 1.0)
    return s + ys[0] * ys[-1] * w


def _nearest(xs, t):
    return min(xs, key=lambda v: abs(v - t))


def min_max_keyed(x, w, n):
    xs = _grow(x, n)
    best = max(xs, key=lambda t: -(t - w) ** 2)
    return best * 2.0 + _nearest(xs, w * 0.5) * w + max(xs) * w - min(xs)


def sorted_param(xs, w):
    ys = sorted(xs, key=lambda t: t * w)
    return ys[0] * 3.0 + ys[-1] + min(xs, key=lambda t: t * t) * w + max(xs)


def sorted_ties(xs):
    ys = sorted(xs, key=lambda t: t * t)
    zs = sorted(xs, reverse=True)
    s = 0.0
    for i in range(len(ys)):
        s = s + ys[i] * (i + 1.0) + zs[i] * (i + 1.0) ** 2
    return s + max(xs, key=lambda t: t * t) * 100.0 + min(xs) * 1000.0


def sorted_in_helper_in_loop(x, w, n):
    xs = _grow(x, n)
    s = 0.0
    for k in range(3):
        s = s + _smallest(xs) * (k + 1.0) + max(xs) * w  # max(xs): no list built
    return s


def sorted_in_loops_and_branches(x, w, n):
    # each run of a loop's body (or a branch) sorts into a list of its own
    xs = _grow(x, n)
    s = 0.0
    for k in range(3):
        ys = sorted(xs, key=lambda t: (t - w * k) ** 2)
        s = s + ys[0] * (k + 1.0) + ys[-1] * w
        s = s + max(xs, key=lambda t: t * (k - 1.0)) * w
    if w > 0.5:
        zs = sorted(xs, reverse=True)
        s = s + zs[0] * w + zs[-1]
    else:
        s = s + sorted(xs)[0] * w
    t = 0.0
    while t < 2.0:
        us = sorted(xs, key=lambda v: abs(v - t))
        s = s + us[0] * us[-1] * w
        t = t + 0.7
    return s


def sorted_carried(x, w, n):
    ys = sorted(_grow(x, n))
    for k in range(2):
        ys = sorted(ys, reverse=True)
    return ys[0]


def sorted_of_arrays(x, n):
    hs = []
    for t in range(n):
        hs.append(np.sin(x * t))
    return np.sum(sorted(hs, key=lambda h: np.sum(h))[0])


SORT_REFUSED = {
    "sorted_carried": ("for k in range(2):", "given another list inside the loop",
                       (0.3, 0.8, 3)),
    "sorted_of_arrays": ("return np.sum(sorted(hs, key=lambda h: np.sum(h))[0])",
                         "in NumPy code, sort an array", (np.ones(3) * 0.3, 3)),
}
