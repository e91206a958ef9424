"""Third derivatives through the second gradient file of a function calling
a looping helper with an int parameter (``h(x, n)``, ``n`` a range's bound):
``s2s-ad grad f.py:f -o g1.py``, ``s2s-ad grad g1.py:grad_f -o g2.py``, then
``s2s_ad.grad`` and ``s2s_ad.jvp`` of ``g2``'s function. In ``g2``,
``h_fwd_fwd`` returns ``h_fwd``'s value and tape, a tuple holding lists (the
loop's tapes), so ``h_fwd_bwd`` takes their cotangents as one tuple
(``ds_3, dn, ds_tape_1, dt1_tape_1 = cotangents``), which a list of any
length cannot be passed in: the tuple is split into parameters
(``s2s_ad/frontend/pairs.py``, ``pair_layout.cotangent_items``); and
``h_bwd_fwd`` keeps its own list parameters on its tape, read as the
arguments (``s2s_ad/frontend/tape_params.py``). Each derivative against
central differences (float64) of the one below, the first against the
function, the second also against ``s2s_ad.hessian`` of the function; the
third module written by the CLI runs without s2s-ad."""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from s2s_ad import cli
from tests.modules import import_source, run_generated

SOURCE = '''import math


def h(x, n):
    s = x
    for i in range(n):
        s = s * math.sin(s) + x
    return s


def f(x):
    return h(x, 3) * x


def given_n(x, n):
    return h(x, n) * x + h(x * 0.5, n)


def hw(x, tol):
    s, n = x, 0
    while n < 4 and abs(s) > tol:
        n += 1
        s = s * 0.6 + 0.2 * math.sin(s)
    return s


def whiled(x):
    return hw(x, 0.01) * x


def two(x, n):
    a = x
    b = x * 0.5
    for i in range(n):
        a, b = a * math.cos(b), b + a * 0.3
    return a, b


def pair_result(x):
    a, b = two(x, 3)
    return a * b + x


def branchy(x, n):
    s = x
    for i in range(n):
        if s > 0.5:
            s = s * math.sin(s)
        else:
            s = s + 0.3 * x
    return s


def branched(x):
    return branchy(x, 3) * x
'''

CASES = [
    ("f", (), (0.6, 0.3)),
    ("given_n", (3,), (0.6, 0.3)),  # the int bound a parameter
    ("whiled", (), (0.6, 0.3)),  # a while loop's count
    ("pair_result", (), (0.6, 0.3)),  # a helper returning a tuple
    ("branched", (), (0.6, 0.45)),  # a branch in the helper's loop
]


def _fd(fn, x, rest, h=1e-4):
    return (fn(x + h, *rest) - fn(x - h, *rest)) / (2 * h)


def _files(folder, name):
    """The first and second gradient modules, written by the CLI, imported."""
    path = folder / "third_helpers_src.py"
    if not path.exists():
        path.write_text(SOURCE, encoding="utf-8")
    first, second = folder / f"third_helpers_1_{name}.py", folder / f"third_helpers_2_{name}.py"
    assert cli.main(["grad", f"{path}:{name}", "--wrt", "x", "-o", str(first)]) == 0
    assert cli.main(["grad", f"{first}:grad_{name}", "--wrt", "x", "-o", str(second)]) == 0
    g1 = getattr(import_source(str(folder), first.read_text(encoding="utf-8"),
                               f"third_helpers_1m_{name}"), f"grad_{name}")
    g2 = getattr(import_source(str(folder), second.read_text(encoding="utf-8"),
                               f"third_helpers_2m_{name}"), f"grad_grad_{name}")
    return second, g1, g2


@pytest.mark.parametrize("name,rest,points", CASES, ids=[c[0] for c in CASES])
def test_third_derivative_through_the_second_file(name, rest, points, tmp_path):
    f = getattr(import_source(str(tmp_path), SOURCE, f"third_helpers_f_{name}"), name)
    second, g1, g2 = _files(tmp_path, name)
    assert "h_fwd_bwd(" in second.read_text(encoding="utf-8") or name != "f"
    third_grad = s2s_ad.grad(g2, wrt="x")
    third_jvp = s2s_ad.jvp(g2, wrt="x")
    hessian = s2s_ad.hessian(f, wrt="x")
    for x in points:
        np.testing.assert_allclose(g1(x, *rest), _fd(f, x, rest, 1e-6), rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(g2(x, *rest), _fd(g1, x, rest), rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(g2(x, *rest), hessian(x, *rest), rtol=1e-12, atol=1e-12)
        want = _fd(g2, x, rest)
        np.testing.assert_allclose(third_grad(x, *rest), want, rtol=1e-5, atol=1e-6,
                                   err_msg=f"{name} at {x}")
        value, tangent = third_jvp(x, *rest, dx=1.0)
        np.testing.assert_allclose(value, g2(x, *rest), rtol=1e-15)
        np.testing.assert_allclose(tangent, want, rtol=1e-5, atol=1e-6)


def test_the_third_module_from_the_cli_runs_alone(tmp_path):
    second, _, g2 = _files(tmp_path, "f")
    third = tmp_path / "third_helpers_3_f.py"
    assert cli.main(["grad", f"{second}:grad_grad_f", "--wrt", "x", "-o", str(third)]) == 0
    for x in (0.6, 0.3):
        got = run_generated(tmp_path, "third_helpers_3_f", "grad_grad_grad_f", [x])
        np.testing.assert_allclose(np.array(got, dtype=float).ravel(), [_fd(g2, x, ())],
                                   rtol=1e-5, atol=1e-6)
