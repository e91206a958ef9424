"""A function that never names NumPy, takes arrays, and rebinds a parameter
before indexing it (``A = A * 1.05`` then ``A[0, 0]``, in a loop, a branch,
a helper, a comprehension, by ``len``, iteration and unpacking): ``grad``
and ``jvp`` lowered it with ``A`` a number and refused "`A` is a number"
where ``vjp`` gave the gradient. The use of a number computed from a
parameter as a list or array now says which parameter it comes from, and
the gradient is generated for the arrays of the call. Each against central
differences through grad, vjp, jvp and the CLI file (``--array A``) in a
fresh interpreter."""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import s2s_ad
from s2s_ad.errors import SourceError
from tests import rebound_arrays_src as src

ROOT = Path(__file__).resolve().parent.parent
A = np.array([[0.7, 0.2], [0.1, 0.5]])
B = np.array([[0.4, 0.3], [0.9, 0.2]])
a = np.array([0.3, -0.8])

CASES = [(src.scaled_max, (A, B)), (src.scaled_max, (A, B + 0.5)), (src.scaled_read, (A, 0.3)),
         (src.twice, (A, 0.3)), (src.summed, (A, B)), (src.length, (a, 0.3)),
         (src.rows, (a, 0.3)), (src.unpacked, (a, 0.3)), (src.through_helper, (A, 0.3)),
         (src.in_branch, (A, 0.3)), (src.in_branch, (A, -0.3)), (src.in_loop, (A, 0.3)),
         (src.comprehension, (A, 0.3)), (src.conditional_expression, (A, 0.3)),
         (src.conditional_expression, (A, -0.3)), (src.in_a_lambda, (A, 0.3)),
         (src.rows_of_rows, (A, 0.3))]


def _fd(f, args, k, h=1e-6):
    x = args[k]
    if np.ndim(x) == 0:
        up, down = list(args), list(args)
        up[k], down[k] = x + h, x - h
        return (f(*up) - f(*down)) / (2 * h)
    out = np.zeros_like(x)
    for j in range(x.size):
        e = np.zeros_like(x)
        e.flat[j] = h
        up, down = list(args), list(args)
        up[k], down[k] = x + e, x - e
        out.flat[j] = (f(*up) - f(*down)) / (2 * h)
    return out


@pytest.mark.parametrize("f,args", CASES, ids=[f"{f.__name__}-{i}" for i, (f, _) in
                                                enumerate(CASES)])
def test_grad_vjp_jvp(f, args):
    refs = [_fd(f, args, k) for k in range(len(args))]
    got = s2s_ad.grad(f, wrt=(0, 1))(*args)
    for g, r in zip(got, refs):
        assert np.allclose(g, r, rtol=1e-6, atol=1e-8)
    assert np.allclose(s2s_ad.grad(f)(*args), refs[0], rtol=1e-6, atol=1e-8)
    value, pullback = s2s_ad.vjp(f, *args)
    assert np.isclose(value, f(*args), rtol=1e-12)
    for g, r in zip(pullback(1.0), refs):
        assert np.allclose(g, r, rtol=1e-6, atol=1e-8)
    names = f.__code__.co_varnames[:2]
    tangents = [np.linspace(0.5, -1.0, np.size(v)).reshape(np.shape(v)) if np.ndim(v)
                else 0.7 for v in args]
    value, tangent = s2s_ad.jvp(f)(*args, **{f"d{n}": t for n, t in zip(names, tangents)})
    assert np.isclose(value, f(*args), rtol=1e-12)
    expected = sum(float(np.sum(r * t)) for r, t in zip(refs, tangents))
    assert np.isclose(tangent, expected, rtol=1e-6, atol=1e-8)


def test_made_before_a_call_names_the_parameter():
    with pytest.raises(SourceError) as info:
        s2s_ad.gradient_source(src.scaled_read)
    text = str(info.value)
    assert "rebound_arrays_src.py:17:" in text and "parameter 'A'" in text
    assert "arrays=['A']" in text


def test_cli_file_in_a_fresh_interpreter(tmp_path):
    out = tmp_path / "grad_in_branch.py"
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "grad",
                           f"{ROOT / 'tests' / 'rebound_arrays_src.py'}:in_branch",
                           "--array", "A", "--wrt", "A,x", "-o", str(out)],
                          capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    points = [(A, 0.3), (A + 0.2, -0.4)]
    (tmp_path / "points.pkl").write_bytes(pickle.dumps(points))
    run = subprocess.run([sys.executable, "-c",
                          "import pickle, grad_in_branch as g; "
                          "print(pickle.dumps([g.grad_in_branch(*p) for p in "
                          "pickle.load(open('points.pkl', 'rb'))]).hex())"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    for p, got in zip(points, pickle.loads(bytes.fromhex(run.stdout.strip()))):
        for k in range(2):
            assert np.allclose(got[k], _fd(src.in_branch, p, k), rtol=1e-6, atol=1e-8)
