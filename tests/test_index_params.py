"""A list read at an index the caller passes (``f(xs, i)`` reading
``xs[i]``, ``xs[i + 1]``, ``xs[(i + j) % len(xs)]``) is read where the code
runs, as a ``range`` bound is: at the top level, in helpers, loops, ``while``
loops and both arms of a branch, through ``grad``, ``vjp``, ``jvp`` and the
CLI's file in a fresh interpreter, each against central differences. A
gradient with respect to the index is refused, located; a float index raises
``TypeError`` as Python does."""

import json
import os
import subprocess
import sys

import pytest

import s2s_ad
from oracle import central_difference
import index_params_src as src

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

XS = [0.7, -1.3, 2.1, 0.4, 1.6]
CASES = [("at_param", 2), ("at_param", 4), ("around", 1), ("around", 3), ("circular", 3),
         ("through_helpers", 2), ("in_loop", 4), ("in_while", 1), ("in_branches", 3)]


def _fd_list(fn, xs, i):
    """Central differences of ``fn(xs, i)`` in each item of ``xs``."""
    def at(*v):
        return fn(list(v), i)
    return [central_difference(at, xs, k) for k in range(len(xs))]


def _close(a, b, tol=1e-6):
    return all(abs(x - y) <= tol * max(1.0, abs(y)) for x, y in zip(a, b)) and len(a) == len(b)


@pytest.mark.parametrize("name,i", CASES)
def test_grad_vjp_jvp_against_differences(name, i):
    fn = getattr(src, name)
    ref = _fd_list(fn, XS, i)
    got = s2s_ad.grad(fn)(list(XS), i)
    assert _close(got, ref), (got, ref)
    value, pull = s2s_ad.vjp(fn, list(XS), i)
    assert value == pytest.approx(fn(list(XS), i))
    assert _close(pull(1.0)[0], ref)
    t = [0.3, -0.2, 0.5, 1.0, -0.7]
    _, tangent = s2s_ad.jvp(fn)(list(XS), i, dxs=t)
    assert tangent == pytest.approx(sum(a * b for a, b in zip(ref, t)), rel=1e-6)


@pytest.mark.parametrize("n", [4, 7])
def test_one_generated_function_serves_every_length(n):
    xs = [0.1 * k - 0.2 for k in range(n)]
    g = s2s_ad.grad(src.circular)
    assert _close(g(xs, n - 1), _fd_list(src.circular, xs, n - 1))


def test_a_local_list_at_a_parameter():
    for i in (1, 2, 3):
        g = s2s_ad.grad(src.local_list, wrt=("x", "y"))(0.6, -0.4, i)
        ref = [central_difference(lambda x, y: src.local_list(x, y, i), [0.6, -0.4], k)
               for k in range(2)]
        assert _close(list(g), ref), (i, g, ref)


def test_a_gradient_with_respect_to_the_index_is_refused_located():
    with pytest.raises(s2s_ad.SourceError) as err:
        s2s_ad.grad(src.around, wrt="i")(list(XS), 2)
    text = str(err.value)
    assert "index_params_src.py:" in text and "`i`" in text and "list index" in text
    assert "^" in text


def test_a_float_index_raises_as_python_does():
    with pytest.raises(TypeError):
        src.at_param(list(XS), 2.0)
    with pytest.raises(TypeError):
        s2s_ad.grad(src.at_param)(list(XS), 2.0)


def test_cli_file_in_a_fresh_interpreter(tmp_path):
    out = tmp_path / "grad_around.py"
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "grad",
                           os.path.join("tests", "index_params_src.py") + ":around",
                           "--wrt", "xs", "-o", str(out)],
                          cwd=ROOT, env=dict(os.environ, PYTHONPATH=ROOT),
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    p = subprocess.run([sys.executable, "-c",
                        "import json, grad_around as g; "
                        f"print(json.dumps([list(g.grad_around({XS!r}, k)) for k in (1, 3)]))"],
                       cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(tmp_path)),
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    for got, k in zip(json.loads(p.stdout), (1, 3)):
        assert _close(got, _fd_list(src.around, XS, k)), (k, got)


@pytest.mark.parametrize("name", ["at_param", "circular", "through_helpers", "in_loop"])
def test_hvp_against_differences_of_the_gradient(name):
    fn = getattr(src, name)
    v = [1.0, 0.5, -0.3, 0.2, 0.1]
    got = s2s_ad.hvp(fn, wrt="xs")(list(XS), 2, v)
    g = s2s_ad.grad(fn, wrt="xs")
    e = 1e-5
    up = g([a + e * b for a, b in zip(XS, v)], 2)
    down = g([a - e * b for a, b in zip(XS, v)], 2)
    assert _close(got, [(a - b) / (2 * e) for a, b in zip(up, down)], tol=1e-6)
