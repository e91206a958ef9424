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
