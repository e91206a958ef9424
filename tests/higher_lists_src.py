"""Functions whose loops make a list in their body each iteration (so the
reverse sweep keeps a tape of those lists), and functions of a list
parameter of any length, for tests/test_higher_lists.py: second derivatives
of their generated modules read back from the files."""

import math


def rows_in_loop(x, n: int):
    """``[0.0] * n`` made and written by index in each iteration."""
    total = 0.0
    for k in range(3):
        ys = [0.0] * n
        for j in range(n):
            ys[j] = math.sin(x * (j + 1) + k)
        for j in range(n):
            total = total + ys[j] * ys[j] * x
    return total


def _row(x, k, n: int):
    ys = [0.0] * n
    for j in range(n):
        ys[j] = math.exp(-x * (j + k) * 0.1)
    return ys


def helper_list_in_loop(x, n: int):
    """A list a helper returns, made in each iteration of the caller's loop."""
    total = 0.0
    for k in range(3):
        ys = _row(x, k, n)
        total = total + sum(ys) * x
    return total


def while_rows(x, n: int):
    """``[c] * n`` in the body of a ``while`` loop."""
    total = 0.0
    k = 0
    while total < 4.0 and k < 6:
        ys = [x] * n
        for j in range(n):
            ys[j] = ys[j] * math.sin(x + j + k)
        for y in ys:
            total = total + y * y + 0.1
        k = k + 1
    return total


def _rows_total(x, n: int, m: int):
    total = 0.0
    for k in range(m):
        ys = [0.0] * n
        for j in range(n):
            ys[j] = math.sin(x * (j + 1) - k)
        for y in ys:
            total = total + y * x
    return total


def helper_rows_once(x, n: int, m: int):
    """The looping helper, called once: its tape holds the lists' tape."""
    return _rows_total(x, n, m) * x


def helper_rows_in_loop_and_branch(x, n: int, m: int):
    """The looping helper, called in a loop, under a branch."""
    out = 0.0
    for r in range(2):
        if x > 0.0:
            out = out + _rows_total(x * (r + 1), n, m)
        else:
            out = out - _rows_total(x, n, m)
    return out


def _settle(x):
    k = 0
    s = x
    while s < 3.0 and k < 10:
        s = s * 1.3 + math.sin(s)
        k = k + 1
    return s


def while_helper_in_loop(x, n: int):
    """A helper whose ``while`` loop keeps a tape, called in a loop."""
    out = 0.0
    for r in range(n):
        out = out + _settle(x + 0.1 * r) * x
    return out


def _waves(x, n: int):
    s = 0.0
    for j in range(n):
        s = s + math.sin(x * j)
    return s


def for_helper_in_loop(x, n: int):
    """A helper whose ``for`` loop of a run-time length keeps a tape, called in a loop."""
    out = 0.0
    for r in range(3):
        out = out + _waves(x * (r + 1), n)
    return out


def _rows_fixed(x, n: int):
    total = 0.0
    for k in range(2):
        ys = [0.0] * n
        for j in range(n):
            ys[j] = math.sin(x * (j + 1) - k)
        for y in ys:
            total = total + y * x
    return total


def helper_rows_fixed_count(x, n: int):
    """The outer loop of the helper runs a constant number of times: its
    tape mixes lists of a known length with lists of any length."""
    return _rows_fixed(x, n) * x


def _horner(c, x):
    s = 0.0
    for i in range(len(c)):
        s = s * x + c[i]
    return s


def list_through_helper(c, x):
    """A list parameter passed to a helper, in a loop and under a branch."""
    total = 0.0
    for k in range(2):
        if x > 0.0:
            total = total + _horner(c, x + 0.1 * k) * math.sin(x)
        else:
            total = total + _horner(c, x)
    return total
