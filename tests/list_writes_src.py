"""Lists of a run-time length made by ``[c] * n`` and written by index
(``ys[k] = v``, ``ys[k] += v``) in loops and branches: ``f(xs, a)`` with
``xs`` a list of floats of any length, or ``f(x, n)`` with ``n`` an int."""

import math

import numpy as np


def prefix(xs, a):
    n = len(xs)
    ys = [0.0] * n
    for i in range(n):
        ys[i] = xs[i] * a
    for i in range(1, n):
        ys[i] += ys[i - 1] * a
    return sum(ys)


def shifted(xs, a):
    ys = [0.0] * (len(xs) + 1)
    for i in range(len(xs)):
        ys[i + 1] = ys[i] * a + math.sin(xs[i])
    ys[-1] = ys[-1] * a
    ys[len(ys) - 1] += ys[0] + a
    return ys[-1] * ys[len(ys) // 2]


def overwritten(xs, a):
    """Values read from the list, then overwritten, then needed by the
    reverse sweep (products of the old and the new item)."""
    n = len(xs)
    ys = [a] * n
    s = 0.0
    for i in range(n):
        t = ys[i]
        ys[i] = t * xs[i] + 0.5
        s = s + t * ys[i]
    for i in range(n):
        ys[i] *= ys[i]
    first = ys[0]
    ys[0] = first * a
    return s + sum(ys) * first + ys[0]


def branch_writes(xs, a):
    n = len(xs)
    ys = [1.0] * n
    for i in range(n):
        if xs[i] > 0.0:
            ys[i] = xs[i] * a
        else:
            ys[i] -= a * a
        if i > 0:
            ys[i] += ys[i - 1] * 0.5
    if a > 0.0:
        ys[0] = ys[-1] * a
    return sum(ys)


def while_writes(xs, a):
    n = len(xs)
    ys = [0.0] * n
    k = 0
    while k < n:
        ys[k] = math.exp(xs[k] * a)
        k += 1
    t = 0.0
    for i, v in enumerate(ys):
        t = t + v * float(i + 1)
    for v in ys:
        t = t + v * v
    return t


def iterated_while_written(xs, a):
    """A loop over the list writing the item its next iteration reads."""
    n = len(xs)
    ys = [0.5] * n
    for i in range(n):
        ys[i] = xs[i]
    for i, v in enumerate(ys):
        if i + 1 < n:
            ys[i + 1] = v * a + ys[i + 1]
    return sum(ys) * ys[-1]


def summed_between_writes(xs, a):
    ys = [a] * len(xs)
    s = 0.0
    for i in range(len(xs)):
        s = s + sum(ys) * xs[i]
        ys[i] = ys[i] * xs[i] + s
    return s + ys[0]


def written_until_break(xs, a):
    ys = [0.0] * len(xs)
    t = 0.0
    for i in range(len(xs)):
        ys[i] = math.sin(xs[i] * a) + t
        t = t + ys[i] * ys[i]
        if t > 1.5:
            break
    return t + sum(ys)


def scaled(xs, a):
    """Returned from a helper."""
    ys = [0.0] * len(xs)
    for i in range(len(xs)):
        ys[i] = xs[i] * a + a
    return ys


def energy(ys):
    s = 0.0
    for v in ys:
        s = s + v * v
    return s


def energy_of_scaled(ys, a):
    """A helper calling a helper with a list it made."""
    zs = [0.0] * len(ys)
    for i in range(len(ys)):
        zs[i] = ys[i] * a
    return energy(zs)


def passed_then_written(xs, a):
    """Passed to helpers, then written again: each call sees the list as it was."""
    ys = scaled(xs, a)
    zs = [0.0] * len(ys)
    for i in range(len(ys)):
        zs[i] = ys[i] * ys[i]
    s1 = energy(zs)
    for i in range(len(zs)):
        zs[i] = zs[i] * a + 1.0
        s1 = s1 + energy(zs) * 0.1
    zs[0] = a * a
    return s1 * energy(zs) + energy_of_scaled(zs, a)


def repeated_number(x, n):
    ys = [x] * n
    for i in range(1, n):
        ys[i] = ys[i - 1] * x + math.sin(ys[i])
    return ys[-1] + sum(ys)


def zeros_written(x, n):
    ys = [0.0] * n
    for i in range(n):
        ys[i] = x * float(i) + x * x
    return sum(ys) * ys[-1]


def grown_then_written(x, n):
    xs = [x]
    for i in range(n):
        xs.append(xs[-1] * 0.9 + x)
    for i in range(len(xs)):
        xs[i] = xs[i] * xs[i]
    xs[-1] += x
    return sum(xs)


def static_written_in_loop(x, n):
    ys = [0.0, x]
    for i in range(n):
        ys[i % 2] += ys[(i + 1) % 2] * x + 0.25
    return ys[0] * ys[1]


def in_helper(xs, a):
    return prefix(xs, a) * 2.0 + overwritten(xs, a)


def helper_of_helper(xs, a):
    return in_helper(xs, a * 0.5) - a


def in_loop(xs, a):
    t = 0.0
    for k in range(3):
        t = t + branch_writes(xs, a + float(k)) * shifted(xs, a)
    return t


def in_branch(xs, a):
    if a > 0.0:
        return while_writes(xs, a)
    return prefix(xs, a) + passed_then_written(xs, a)


# --- refused, located -------------------------------------------------------

def aliased(xs, a):
    ys = [0.0] * len(xs)
    zs = ys
    zs[0] = a
    return sum(ys)


def into_parameter(xs, a):
    for i in range(len(xs)):
        xs[i] = xs[i] * a
    return sum(xs)


def into_returned(xs, a):
    ys = scaled(xs, a)
    ys[0] = a
    return sum(ys)


def write_callers(ys, a):
    ys[0] = a
    return a


def into_callers(xs, a):
    ys = [0.0] * len(xs)
    return write_callers(ys, a) + sum(ys)


def made_in_loop(xs, a):
    t = 0.0
    for i in range(len(xs)):
        ys = [0.0] * len(xs)
        ys[i] = a
        t = t + sum(ys)
    return t


def slice_written(xs, a):
    ys = [0.0] * len(xs)
    ys[1:] = [a, a]
    return sum(ys) * a


def list_repeated(xs, a):
    ys = [xs] * len(xs)
    return a


def in_numpy(x, n: int):
    ys = [0.0] * n
    for i in range(n):
        ys[i] = np.sum(x * x) * float(i)
    return ys[0] + ys[-1]


def float_index(xs, a):
    ys = [0.0] * len(xs)
    ys[a] = 1.0
    return sum(ys)
