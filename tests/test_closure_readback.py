"""Closure under differentiation, the forms of generated module read back
here: a helper's tape holding the lists of a loop that s2s-ad unrolls, under
a branch and in a loop (with a recorded decision beside the lists). Each
gradient module is written to a file and imported under a new name, then
differentiated again; every second derivative is compared with central
differences (float64) of the file's gradient, itself checked against
central differences of the original function."""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from tests.fuzz import import_program
from tests.modules import import_source
from tests.programs import RandomDraw
from tests.programs_helpers import helper_program
from tests.test_closure import (NESTED_TAPES, RNG, _second_from_file, central_jacobian,
                                checked_file_gradient, tangent_keywords)

TAPES_SRC = '''
import math


def h(b, u):
    for i in range(4, 0, -2):
        u = u - u * 0.5
        u = u * math.fabs(u) + b
    if u > 0.1:
        u = u * b
    return b - u


def under_branch(b, u):
    if b > 0.0:
        r = h(b, u)
    else:
        r = h(b * 0.5, u * 0.5) * 2.0
    return r


def in_loop(b, u):
    s = 0.0
    for i in range(3):
        s = s + h(b * (i + 1.0), u) * (i + 1.0)
    return s
'''


def second_against_differences(g, args, wrt):
    """``grad``, ``jvp`` and ``vjp`` of the file's gradient ``g``, each
    against central differences of ``g``."""
    H = central_jacobian(g, args, wrt)
    tol = dict(rtol=1e-5, atol=1e-6 * max(1.0, float(np.max(np.abs(H)))))
    for k in range(len(wrt)):
        row = s2s_ad.grad(g, wrt=tuple(wrt), output=k)(*args)
        np.testing.assert_allclose(np.array(row, dtype=float), H[k], **tol)
    v = RNG.normal(size=len(wrt))
    forward = s2s_ad.jvp(g, wrt=tuple(wrt))
    _, tangent = forward(*args, **dict(zip(tangent_keywords(forward, len(wrt)), v)))
    np.testing.assert_allclose(np.array(tangent, dtype=float), H @ v, **tol)
    c = RNG.normal(size=len(wrt))
    _, back = s2s_ad.vjp(g, *args)
    np.testing.assert_allclose(np.array(back(tuple(c))[:len(wrt)], dtype=float), H.T @ c, **tol)


@pytest.mark.parametrize("name,args", [
    ("under_branch", [0.7, 0.4]), ("under_branch", [-0.6, 0.3]),
    ("in_loop", [0.7, 0.4]), ("in_loop", [0.3, -0.2]),
])
def test_helper_tape_of_unrolled_loop_lists_under_a_branch_and_in_a_loop(name, args, tmp_path):
    """``h``'s loop over a constant range is unrolled: its tape holds lists of
    a known length (and, in ``h_fwd``'s tuple, the recorded decision of its
    ``if``, a bool). Called under a branch, those lists are read again under
    the same recorded decision in the reverse sweep; called in a loop, the
    tuple holding lists and a bool goes on a tape of tapes."""
    fn = getattr(import_source(str(tmp_path), TAPES_SRC, f"tapes_{name}"), name)
    g = checked_file_gradient(fn, args, ("b", "u"), tmp_path, f"tapes_grad_{name}")
    second_against_differences(g, args, ("b", "u"))


@pytest.mark.parametrize("seed,compares", [(780027, True), (780251, True), (780056, False)])
def test_closure_soak_programs_once_refused_for_unlisted_reasons(seed, compares, tmp_path):
    """Three helper programs of the closure soak: 780027 (a looping helper's
    tape read again under a branch) and 780251 (a tape holding a recorded
    decision beside lists, in a loop) compare; 780056 (a list grown at run
    time beside lists of a known length in a helper's tape) is refused for a
    listed reason, located."""
    prog = helper_program(RandomDraw(seed))
    fn = import_program(prog, str(tmp_path), f"soak_{seed}")
    got = _second_from_file(prog, fn, tmp_path, f"soak_grad_{seed}", NESTED_TAPES)
    assert (got > 0) if compares else (got == -1), got
