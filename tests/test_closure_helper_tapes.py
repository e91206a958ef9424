"""Gradient files of NumPy helpers called from a loop, read back: the
helper's tape as its backward function receives it.

Three shapes of generated code that the reader refused before (each from a
fuzzer program, ``--helpers``):

* a helper's loop tapes of any length, kept by the caller's loop and rebuilt
  for each backward call (``tape_flatten``): rebuilt by appending now, not
  by ``[0.0] * k`` written by index, which is refused for arrays;
* the forward's writes into an array undone by the backward function
  (``y[1:] = y_old.pop()``), ``y`` a tape item: a copy of its own first;
  and a last alias of an adjoint summed in place (``da = dy``), a copy;
* a ``while`` loop's index taped by the forward function
  (``i_tape.append(i)``) and popped by the backward one: an int there too.

Each file's gradient against central differences of the function, and its
JVP against central differences of the file's gradient."""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from tests.array_oracle import assert_file_jvp, make_function
from tests.modules import import_source

HELPERS = {
    "while_loop_tapes": """
def h(a, b, s, k):
    scale = np.sum(np.ones(k + 1)) * 0.5
    y = a.copy()
    z = np.ones(len(a))
    i = 0
    while i < len(a):
        y[1:] += y[:-1] * np.sin(s)
        if np.sum(y) > 0:
            y[i:] *= y[i] * 0.5
        else:
            y[:2] = np.sin(y[1:3]) * s
        i = i + 1
    return y * ((np.sum(np.sin(y) * b) + np.sum(z * b)) * scale)
""",
    "undone_writes": """
def h(a, b, s, k):
    scale = np.sum(np.ones(k + 1)) * 0.5
    y = a.copy()
    acc = 0.0
    for i in range(len(a)):
        y[1:] += np.tanh(y[1:] + np.sin(y[:-1]))
        y[1:] += b[1:] * 0.5
        acc = acc + np.sum(y * b) * 0.1
    y[0] = acc * s
    return (y @ b + acc) * scale
""",
    "while_index": """
def h(a, b, s, k):
    y = np.zeros(len(a))
    i = 0
    while i < len(a):
        y[i] -= np.tanh(np.mean(y * b) + s * a[i])
        i = i + 1
    return np.sum(np.sin(y) * b) * (k + 1.0)
""",
}

CALLER = """
def f(a, b, s):
    total = 0.0
    for k in range(2):
        total = total + np.sum(h(a, b, s, k)) * (k + 1.0)
    return total
"""

A = np.array([0.6972, -1.9107, 1.8965])
B = np.array([1.8693, 1.2036, 1.7928])
S = -0.9392


@pytest.mark.parametrize("name", sorted(HELPERS))
def test_file_read_back(tmp_path, name):
    h = make_function(HELPERS[name], "h")
    f = make_function(CALLER, "f", {"h": h})
    text = s2s_ad.gradient_source(f, wrt=[0, 1, 2])
    assert "h_fwd" in text and "h_bwd" in text  # the helper is a pair, called in the loop
    g = import_source(str(tmp_path), text, f"helper_tapes_{name}").grad_f
    assert_file_jvp(f, g, [A, B, S], [np.array([0.3, -0.5, 0.8]), np.array([-0.2, 0.4, 0.1]),
                                      0.7])


NUMBER_HELPER = """
def h0(u):
    z = u * ((u ** 3) * -1.5)
    z += abs(u)
    return (z / (1.0 + z * z)) ** 3 + z


def f(a, b, s: float):
    return np.sum(a * h0(a * s) * a) + h0(np.mean(b)) + h0(s)
"""


def test_number_helper_in_a_numpy_module(tmp_path):
    """A helper called with numbers and with arrays in NumPy code (fuzzer
    ``--numpy-kinds``, seed 18037): its number pair's backward function sums
    into its result's adjoint by ``+=`` (``dz = dout; dz += c``), a new
    number each time, which the reader read as a write into the caller's
    array."""
    f = make_function(NUMBER_HELPER)
    text = s2s_ad.gradient_source(f, wrt=[0, 1, 2])
    assert "+= " in text
    g = import_source(str(tmp_path), text, "helper_tapes_number_helper").grad_f
    assert_file_jvp(f, g, [A * 0.3, B * 0.3, 0.4], [np.array([0.3, -0.5, 0.8]),
                                                   np.array([-0.2, 0.4, 0.1]), 0.7])


ALIASED_SUMS = """
def h1(u):
    z = u * ((u * u) * -1.5)
    z -= (-u)
    return z / (1.0 + 1.5 * 1.5)


def f(a, b, s):
    acc = 0.0
    for i in range(len(a)):
        acc = acc + h1(s) * a[i]
    r = a * 0.0 + h1(s)
    return acc + a[0] * r[1] * b[1]
"""


def test_number_helper_sums_into_an_alias(tmp_path):
    """The number pair's backward binds one adjoint to two names (``dz = dz_1;
    du = dz_1``) and sums into one of them by ``+=`` (``du += dz * t2``), a
    new number; read as NumPy code, the ``+=`` went into the array ``dz``
    holds too, and the file's second derivative in ``s`` was wrong (-0.099
    where central differences give -0.628; fuzzer ``--numpy-kinds``, seed
    19063, wrong on the session's starting commit too)."""
    f = make_function(ALIASED_SUMS)
    text = s2s_ad.gradient_source(f, wrt=[0, 1, 2], arrays=["a", "b"])
    assert "du += " in text
    g = import_source(str(tmp_path), text, "helper_tapes_aliased_sums").grad_f
    assert_file_jvp(f, g, [A * 0.8, B * 0.4, 0.5961], [np.array([0.3, -0.5, 0.8]),
                                                      np.array([-0.2, 0.4, 0.1]), 0.7])


NESTED_IN_A_LOOP = """
def inner(x, w):
    s = 0.0
    for j in range(2):
        s = s + math.sin(x * w + j) * x
    return s


def mid(x, w):
    s = 0.0
    for k in range(3):
        s = s + inner(x, w + k) * w
    return s


def f(x, y):
    return mid(x, y) * 0.5 + inner(y, x) * x
"""


def test_a_helper_calling_a_loop_helper_in_its_loop(tmp_path):
    """``mid``'s backward pass reads each of ``inner``'s tapes from its tape
    of tapes and calls ``inner_bwd`` with it; the read was fused into the
    call (``inner_bwd(inner_1_tapes[k], ...)``), a form the reader does not
    follow, so the file was refused ("tape ... not split"). The read stays a
    statement of its own (``inner_1_tape = inner_1_tapes[k]``), and the
    file's Hessian, by reverse over it, agrees with central differences."""
    import math
    f = make_function(NESTED_IN_A_LOOP, "f", {"math": math})
    text = s2s_ad.gradient_source(f, wrt=[0, 1])
    assert "inner_1_tape = inner_1_tapes[k]" in text
    g = import_source(str(tmp_path), text, "helper_tapes_nested_loop").grad_f
    point, h = [0.7, 0.4], 1e-5

    def part0(x, y):
        return g(x, y)[0]

    def part1(x, y):
        return g(x, y)[1]
    for row, part in enumerate((part0, part1)):
        got = s2s_ad.grad(part, wrt=[0, 1])(*point)
        for col in range(2):
            up, down = list(point), list(point)
            up[col] += h
            down[col] -= h
            ref = (part(*up) - part(*down)) / (2 * h)
            assert abs(got[col] - ref) <= 1e-6 * (1 + abs(ref)), (row, col, got, ref)
