"""Recursion whose depth depends on the arguments: the pair calls itself,
each call keeping its own tape; checked against central differences through
grad, vjp, jvp, a loop, a helper and the CLI. A recursion without a base
case is refused, located."""

import os
import subprocess
import sys

import pytest

import recursion_src as r
import s2s_ad
from modules import run_generated
from oracle import close, fd_gradient

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = os.path.dirname(os.path.abspath(__file__))

CASES = [
    (r.series, [0.7, 6], [0]),
    (r.series, [-1.3, 0], [0]),
    (r.ping, [0.7, 5], [0]),
    (r.halve, [13.0], [0]),          # depth from the data: log2(x) calls
    (r.halve, [0.3], [0]),
    (r.tree, [0.6, 4], [0]),         # two calls per level: 2^4 tapes
    (r.series_in_loop, [0.4, 4], [0]),
    (r.uses_series, [0.4, 1.2], [0, 1]),
    (r.uses_pair, [0.7, 0.4], [0, 1]),   # a recursion returning a tuple
    (r.uses_nested, [0.7, 0.9], [0, 1]),  # ... nested tuples
]


@pytest.mark.parametrize("fn, point, wrt", CASES)
def test_recursion_against_finite_differences(fn, point, wrt):
    got = s2s_ad.grad(fn, wrt=tuple(wrt))(*point)
    want = fd_gradient(fn, point, wrt)
    assert all(close(g, w) for g, w in zip(got, want)), (got, want)
    value, pull = s2s_ad.vjp(fn, *point)
    assert close(value, fn(*point))
    assert all(close(pull(2.0)[i], 2.0 * w) for i, w in zip(wrt, want))
    value, tangent = s2s_ad.jvp(fn, wrt=wrt[0])(*point)
    assert close(tangent, want[0])


@pytest.mark.parametrize("fn, point", [(r.uses_pair, [0.7, 0.4]), (r.uses_nested, [0.7, 0.9]),
                                       (r.uses_series, [0.4, 1.2]), (r.tree, [0.6, 3])])
def test_second_derivatives_against_differences_of_the_gradient(fn, point):
    """hvp and hessian read the JVP module back, whose recursive helper returns
    (value, tangent) as nested tuples: was refused, with a message about a
    parameter used as a list."""
    wrt = (0, 1) if fn is not r.tree else (0,)
    grad = s2s_ad.grad(fn, wrt=wrt)
    h = 1e-5
    columns = []
    for k in wrt:
        up, down = list(point), list(point)
        up[k] += h
        down[k] -= h
        columns.append([(u - d) / (2 * h) for u, d in zip(grad(*up), grad(*down))])
    hessian = s2s_ad.hessian(fn, wrt=wrt)(*point)
    for i in range(len(wrt)):
        for j in range(len(wrt)):
            assert close(hessian[i][j], columns[j][i], rtol=1e-5, atol=1e-7), (hessian, columns)
    v = (0.3, -0.8)[:len(wrt)]
    product = s2s_ad.hvp(fn, wrt=wrt)(*point, v)
    for i in range(len(wrt)):
        want = sum(columns[j][i] * v[j] for j in range(len(wrt)))
        assert close(product[i], want, rtol=1e-5, atol=1e-7), (product, want)


def test_nested_tuples_a_recursive_call_cannot_read_are_refused_located():
    with pytest.raises(s2s_ad.SourceError, match="unpacked as nested tuples") as info:
        s2s_ad.grad(r.uses_nested_by_name)(0.7)
    assert "nested_by_name(math.sin(x) * 1.1, n - 1)" in info.value.source_line
    assert "return (a, b), c" in str(info.value)


def test_sympy_proves_a_recursive_series():
    verdict = s2s_ad.check(r.series, wrt="x", args={"n": 4})
    assert verdict.status == "proved", str(verdict)


def test_cli_file_in_a_fresh_interpreter(tmp_path):
    out = tmp_path / "g_rec.py"
    env = dict(os.environ, PYTHONPATH=ROOT)
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "grad", "recursion_src.tree",
                           "--wrt", "x", "-o", str(out)], cwd=HERE, env=env,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    got = run_generated(tmp_path, "g_rec", "grad_tree", (0.6, 5))
    assert close(float(got[0]), fd_gradient(r.tree, [0.6, 5], [0])[0])


def test_recursion_without_a_base_case_is_refused():
    with pytest.raises(s2s_ad.SourceError, match="made on every path") as info:
        s2s_ad.grad(r.no_base_case)
    assert "no_base_case(x * 0.5)" in info.value.source_line
