"""Lists of any length: one generated function serves every length.

Every gradient is compared with central differences of the original function
(tests/oracle.py style, float64), at lengths 0 (where the function allows
it), 1, 3 and 100, through the API and through the command line without
``--length``."""

import os
import random
import subprocess
import sys

import numpy as np
import pytest

import runtime_lists_src as src
import s2s_ad
from test_iterables import _fd as _reference
from soak import rows_beyond

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "tests", "runtime_lists_src.py")


def _close(got, want):
    if isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want)
        for g, w in zip(got, want):
            _close(g, w)
    else:
        assert got == pytest.approx(want, rel=1e-5, abs=1e-6)


def _args(name, n, rng):
    xs = [rng.uniform(-0.9, 0.9) for _ in range(n)]
    if name == "enumerate_zip":
        return [xs, [rng.uniform(-0.9, 0.9) for _ in range(n + 1)], 0.7]
    return [xs, 0.8]


CASES = [("horner", (0, 1, 3, 100)), ("horner_iter", (0, 1, 3, 100)),
         ("indices", (2, 3, 100)), ("enumerate_zip", (0, 1, 3, 100)),
         ("backwards", (0, 1, 3, 100)), ("nested_helper", (0, 1, 3, 30)),
         ("empty_ok", (0, 1, 3, 100))]


@pytest.mark.parametrize("name, lengths", CASES)
def test_one_generated_function_serves_every_length(name, lengths):
    f = getattr(src, name)
    s2s_ad.clear_cache()
    g = s2s_ad.grad(f, wrt=None)
    rng = random.Random(len(name))
    for n in lengths:
        args = _args(name, n, rng)
        _close(list(g(*args)), _reference(f, args))
    assert s2s_ad.cache_info().misses == 1  # generated once, for every length
    text = s2s_ad.source_of(g)
    assert "ValueError" not in text and "has 3 items" not in text


def test_the_generated_code_reads_the_length_at_run_time():
    text = s2s_ad.gradient_source(src.horner, wrt=None)
    assert "len(coeffs)" in text and "raise" not in text


@pytest.mark.parametrize("name, lengths", rows_beyond(CASES, 1))  # horner; all with --soak:
def test_cli_without_length(name, lengths, tmp_path):  # each is checked in-process above
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.path.join(ROOT, "tests"))
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "grad", f"{SRC}:{name}"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    namespace: dict = {}
    exec(compile(done.stdout, f"grad_{name}.py", "exec"), namespace)
    g = namespace[f"grad_{name}"]
    f = getattr(src, name)
    rng = random.Random(7)
    for n in lengths:
        args = _args(name, n, rng)
        _close(list(g(*args)), _reference(f, args))


def test_value_and_grad_and_seed():
    vg = s2s_ad.value_and_grad(src.horner, wrt=(0, 1))
    args = [[0.3, -0.2, 0.9], 0.7]
    value, (dc, dx) = vg(*args, ds=2.0)
    assert value == pytest.approx(src.horner(*args))
    _close([dc, dx], [[2 * r for r in _reference(src.horner, args)[0]],
                      2 * _reference(src.horner, args)[1]])


def test_a_tuple_gets_a_tuple_gradient_and_a_string_item_is_refused():
    g = s2s_ad.grad(src.horner)
    got = g((0.3, -0.2, 0.9), 0.7)
    assert isinstance(got, tuple)
    _close(list(got), _reference(src.horner, [[0.3, -0.2, 0.9], 0.7])[0])
    # (a list holding arrays is a structure parameter: tests/test_pytrees.py)
    with pytest.raises(s2s_ad.SourceError, match="'a' is used where a number is expected"):
        g([0.3, "a"], 0.7)


def test_an_index_out_of_range_raises_as_the_function_does():
    g = s2s_ad.grad(src.indices)
    with pytest.raises(IndexError):
        g([0.5], 1.0)


def test_a_program_needing_the_length_falls_back_to_code_per_length():
    g = s2s_ad.grad(src.unpacks, wrt=None)
    _close(list(g([0.3, 0.6], 2.0)), _reference(src.unpacks, [[0.3, 0.6], 2.0]))
    with pytest.raises(s2s_ad.SourceError, match="of any length"):
        s2s_ad.gradient_source(src.unpacks)


def test_vjp_of_a_list_read_at_run_time_indices_with_its_length_known():
    """The backward pass of a pair generated for a list of known length makes
    the list's adjoint from that length (it read len(c) of a list its tape
    does not hold: NameError)."""
    c, x = [0.3, -1.2, 0.8, 2.0], 0.7
    value, back = s2s_ad.vjp(src.fixed_trips, c, x)
    assert value == pytest.approx(src.fixed_trips(c, x), rel=1e-15)
    dc, dx = back(1.0)
    want_dc, want_dx = _reference(src.fixed_trips, [c, x])
    _close(dc, want_dc)
    _close(dx, want_dx)
    _close(back(-2.0)[0], [-2.0 * d for d in dc])


@pytest.mark.parametrize("xs", [[], [1.0], [1.0, -2.0, 3.0]])
def test_a_list_parameter_nothing_differentiable_reaches_gets_a_list_of_zeros(xs):
    """A list read only for its length or its signs still gets an adjoint
    of its own length (a caller adds gradients item by item), in the API
    and in the module a helper's backward pass is."""
    from array_oracle import make_function
    f = make_function("def f(xs, y):\n    s = 0.0\n    for v in xs:\n        if v > 0.0:\n"
                      "            s = s + y\n    return s * len(xs)\n")
    dxs, dy = s2s_ad.grad(f, wrt=(0, 1))(xs, 2.0)
    assert dxs == [0.0] * len(xs)
    h = 1e-6
    _close(dy, (f(xs, 2.0 + h) - f(xs, 2.0 - h)) / (2 * h))
    text = s2s_ad.gradient_source(f, wrt=(0, 1))
    assert "[0.0] * len(xs)" in text
