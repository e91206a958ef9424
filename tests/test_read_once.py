"""Array parameters read by index in a loop, each element once
(s2s_ad/reverse/fresh_writes.py: read_once): the reverse sweep assigns each
element's adjoint instead of adding it. Every gradient against central
differences, through grad, vjp, a helper and the CLI's file in a fresh
interpreter; and where an element may be read twice (overlapping offsets, a
read outside the loop, a whole use, nested loops), the adjoint still adds."""

import os
import re
import subprocess
import sys

import numpy as np
import pytest

import read_once_src as src
import s2s_ad
from array_oracle import assert_gradients, fd_gradient

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RNG = np.random.default_rng(2026)


def _args(fn):
    x = RNG.uniform(-1.2, 1.2, (6, 3) if fn in (src.rows_through_a_helper, src.outer) else (8,))
    return [x, 0.7] + ([3] if fn is src.nested else [])


@pytest.mark.parametrize("fn", src.ONCE + src.ADDED, ids=lambda f: f.__name__)
def test_against_finite_differences(fn):
    args = _args(fn)
    assert_gradients(fn, args, [0, 1])
    value, pull = s2s_ad.vjp(fn, *args)
    assert np.isclose(value, fn(*args))
    np.testing.assert_allclose(pull(2.0)[0], 2.0 * fd_gradient(fn, args, 0), rtol=1e-5,
                               atol=1e-7)


def _adjoint_writes(fn):
    """"=" for each element of ``dx`` assigned (``dx[i] = g``), "+=" for each
    added into (``dx[i] += g`` or ``dx[i] = dx[i] + g``, the sweep's
    out-of-place form)."""
    text = s2s_ad.gradient_source(fn, wrt="x")
    ops = []
    for name, index, op, rhs in re.findall(r"^\s*(dx(?:_\d+)?)\[([^\]]+)\] (\+?=) (.*)$", text,
                                          re.M):
        ops.append("+=" if op == "+=" or rhs.startswith(f"{name}[{index}] + ") else "=")
    return ops, text


@pytest.mark.parametrize("fn", src.ONCE, ids=lambda f: f.__name__)
def test_each_element_read_once_is_assigned(fn):
    ops, text = _adjoint_writes(fn if fn is not src.outer else src.rows_through_a_helper)
    assert ops and set(ops) == {"="}, text


@pytest.mark.parametrize("fn", src.ADDED, ids=lambda f: f.__name__)
def test_an_element_that_may_be_read_twice_is_added(fn):
    ops, text = _adjoint_writes(fn)
    assert "=" not in ops, text


def test_cli_file_in_a_fresh_interpreter(tmp_path):
    out = tmp_path / "grad_rows.py"
    subprocess.run([sys.executable, "-m", "s2s_ad", "grad",
                    os.path.join(ROOT, "tests", "read_once_src.py") + ":outer", "--wrt", "x",
                    "-o", str(out)], check=True, cwd=ROOT)
    assert re.search(r"dx\[\w+\] = ", out.read_text())
    x = RNG.uniform(-1.2, 1.2, (6, 3))
    code = (f"import sys, numpy as np; sys.path.insert(0, {str(tmp_path)!r}); "
            f"import grad_rows; x = np.load({str(tmp_path / 'x.npy')!r}); "
            f"np.save({str(tmp_path / 'g.npy')!r}, grad_rows.grad_outer(x, 0.7))")
    np.save(tmp_path / "x.npy", x)
    subprocess.run([sys.executable, "-c", code], check=True)
    np.testing.assert_allclose(np.load(tmp_path / "g.npy"), fd_gradient(src.outer, [x, 0.7], 0),
                               rtol=1e-5, atol=1e-7)
