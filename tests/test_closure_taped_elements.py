"""Gradient files whose forward pass tapes elements of an array it writes
into, read back.

s2s-ad puts an element ``y[i]`` of an array written in place on a tape (or
on the stack of overwritten values, ``y_old.append(y[i])``), or reads it
after a later write into the array, without a copy where it knows the piece
is one element, a NumPy scalar no write changes. The module read back does
not know the array's rank, and refused the piece as a view; it now reads it
through the module's ``own`` helper, or ``* 1.0``: the same value. Each
program (reduced from the fuzzer's ``--numpy-loops`` seeds 18034 and 18059
and ``--helpers`` seed 18043; one with a matrix's elements): the file's
gradient against central differences of the function, its JVP against
central differences of the file's gradient."""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from tests.array_oracle import assert_file_jvp, make_function
from tests.modules import import_source

PROGRAMS = {
    "element_in_a_branch": """
def f(a, b, s):
    y = a.copy()
    z = np.ones(len(a))
    acc = np.sum(y * a) * 0.5
    i = 0
    while i < len(a):
        acc = acc + s * b[i] * s
        if (y[i] + y[i - 1]) > 0:
            z[i] = y[i] * np.tanh(y[len(a) - 1 - i]) + z[i - 1]
        else:
            y[i:] *= b[i]
        y[:2] = np.sin(y[1:3]) * (b[i] * s)
        i = i + 1
    y[0] = acc * s
    return np.sum(y * y) + acc + np.sum(z * b)
""",
    "element_put_back": """
def f(a, b, s):
    y = np.copy(a)
    H = np.zeros((len(a), 2))
    for i in range(1, len(a)):
        y[i] *= np.tanh(y[i])
        if np.tanh(y[i]) > 0:
            for j in range(2):
                H[i, j] = H[i - 1, j] * 0.5 + np.sin(H[i, 1 - j]) + y[i] * s
        else:
            y[i] = np.cos(np.mean(y * b) + b[i])
        H[i, :] = np.tanh(H[i - 1] * np.sin(0.5) + b[:2])
    return np.sum(y * y) + np.sum(H * H)
""",
    # an adjoint's element read after a write into the adjoint (dt = dz[i];
    # dz[i - 1] = dz[i - 1] + dt; then dt again), in a helper called twice
    # (reduced from the fuzzer's --helpers seed 18043)
    "adjoint_element_after_write": """
def h(a, b, s):
    y = np.copy(a)
    z = np.ones(len(a))
    for i in range(1, len(a)):
        y[i] += s - b[i]
        if 0.5 * a[i] > 0:
            y[1:] += np.tanh(b[1:] + y[1:])
        else:
            z[i] = y[i] * np.tanh(y[i - 1]) + z[i - 1]
    return y * (y @ b + np.sum(z * b))


def f(a, b, s):
    return np.sum(h(a, b, s) * b) - 0.5 * np.sum(h(a + 0.25, b, s))
""",
    "matrix_elements": """
def f(a, b, s):
    H = np.zeros((len(a), 2))
    H[0, :] = a[:2] * s
    for i in range(1, len(a)):
        for j in range(2):
            H[i, j] = H[i - 1, j] * np.tanh(a[i]) + np.sin(H[i, 1 - j]) * b[i]
    return np.sum(H * H)
""",
}

A = np.array([0.7, -0.4, 1.1, 0.3])
B = np.array([0.5, 1.2, -0.6, 0.9])
S = 0.8


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_file_read_back(tmp_path, name):
    f = make_function(PROGRAMS[name])
    text = s2s_ad.gradient_source(f, wrt=[0, 1, 2])
    g = import_source(str(tmp_path), text, f"taped_elements_{name}").grad_f
    assert_file_jvp(f, g, [A, B, S], [np.array([0.3, -0.5, 0.8, 0.2]),
                                      np.array([-0.2, 0.4, 0.1, -0.6]), 0.7])
