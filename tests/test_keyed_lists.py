"""A list of dicts of arrays read as ``params[0]["W"]``, ``layer["W"]`` after
``layer = params[0]``, ``params[i]["W"]`` in a loop, or walked by slices in
a recursion whose base case is ``not params`` or ``len(params) == 0``:
``grad`` and ``jvp`` lowered such a function before seeing the arguments,
with ``params`` an array, and refused ``"W"`` as a string used where a
number is expected; they now generate the code for the structure they are
called with, as ``vjp`` does. Gradients (a list of dicts of the arguments'
shapes) against central differences through grad, vjp, jvp and the CLI's
file (``--like params=EXAMPLE``) in a fresh interpreter; a length alone
(``lengths=``) is refused naming the reason."""

from __future__ import annotations

import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import s2s_ad
from s2s_ad.errors import SourceError
from tests import keyed_lists_src as src

ROOT = Path(__file__).resolve().parent.parent

FUNCTIONS = [src.by_slices, src.by_slices_len, src.by_chained_keys, src.first_layer,
             src.by_index_loop, src.by_bound_layer]


def _params(seed=0):
    rng = np.random.default_rng(seed)
    return [{"W": rng.normal(size=(3, 2)), "b": rng.normal(size=3)},
            {"W": rng.normal(size=(2, 3)), "b": rng.normal(size=2)}]


def _fd(f, params, x, h=1e-6):
    """Central differences of f with respect to every leaf of params, and x."""
    out = []
    for layer in params:
        grads = {}
        for key, leaf in layer.items():
            g = np.zeros_like(leaf)
            for j in range(leaf.size):
                keep = leaf.flat[j]
                leaf.flat[j] = keep + h
                up = f(params, x)
                leaf.flat[j] = keep - h
                down = f(params, x)
                leaf.flat[j] = keep
                g.flat[j] = (up - down) / (2 * h)
            grads[key] = g
        out.append(grads)
    dx = np.zeros_like(x)
    for j in range(x.size):
        e = np.zeros_like(x)
        e[j] = h
        dx[j] = (f(params, x + e) - f(params, x - e)) / (2 * h)
    return out, dx


def _same(got, ref):
    assert isinstance(got, list) and len(got) == len(ref)
    for g, r in zip(got, ref):
        assert isinstance(g, dict) and list(g) == list(r)
        for key in r:
            assert np.allclose(g[key], r[key], rtol=1e-6, atol=1e-8), key


@pytest.mark.parametrize("f", FUNCTIONS, ids=[f.__name__ for f in FUNCTIONS])
def test_grad_vjp_jvp(f):
    params, x = _params(), np.array([0.7, -0.4])
    ref, ref_x = _fd(f, params, x)
    dparams, dx = s2s_ad.grad(f, wrt=(0, 1))(params, x)
    _same(dparams, ref)
    assert np.allclose(dx, ref_x, rtol=1e-6, atol=1e-8)
    _same(s2s_ad.grad(f)(params, x), ref)
    value, pullback = s2s_ad.vjp(f, params, x)
    assert np.isclose(value, f(params, x), rtol=1e-12)
    _same(pullback(1.0)[0], ref)
    tangent = _params(1)
    v = np.array([0.3, 0.9])
    expected = sum(np.sum(ref[k][key] * tangent[k][key]) for k in range(2) for key in ref[k])
    expected += float(ref_x @ v)
    got_value, got = s2s_ad.jvp(f)(params, x, dparams=tangent, dx=v)
    assert np.isclose(got_value, f(params, x), rtol=1e-12)
    assert np.isclose(got, expected, rtol=1e-6, atol=1e-8)


def test_one_layer_and_none():
    x = np.array([0.7, -0.4])
    params = _params()[:1]
    ref, _ = _fd(src.by_chained_keys, params, x)
    _same(s2s_ad.grad(src.by_chained_keys)(params, x), ref)
    assert s2s_ad.grad(src.by_slices, wrt=1)([], x).tolist() == (2 * x).tolist()


def test_a_length_alone_is_refused_naming_why():
    with pytest.raises(SourceError) as info:
        s2s_ad.gradient_source(src.by_slices, lengths={"params": 2})
    text = str(info.value)
    assert "keyed_lists_src.py:13:" in text and "indexed by a key" in text
    assert "None" not in text and "--like" in text


def test_cli_file_in_a_fresh_interpreter(tmp_path):
    out = tmp_path / "grad_by_chained_keys.py"
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "grad",
                           f"{ROOT / 'tests' / 'keyed_lists_src.py'}:by_chained_keys",
                           "--like", "params=EXAMPLE", "--wrt", "params", "-o", str(out)],
                          capture_output=True, text=True, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    params, x = _params(2), np.array([0.2, 1.1])
    (tmp_path / "point.pkl").write_bytes(pickle.dumps((params, x)))
    run = subprocess.run([sys.executable, "-c",
                          "import pickle, grad_by_chained_keys as g; "
                          "p, x = pickle.load(open('point.pkl', 'rb')); "
                          "print(pickle.dumps(g.grad_by_chained_keys(p, x)).hex())"],
                         capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    ref, _ = _fd(src.by_chained_keys, params, x)
    _same(pickle.loads(bytes.fromhex(run.stdout.strip())), ref)


def test_a_list_of_dicts_inside_a_dict_read_at_a_loop_index():
    layers, x = _params(3), np.array([0.7, -0.4])
    params = {"layers": layers, "scale": 1.5}

    def f(ls, xx):
        return src.nested_layers({"layers": ls, "scale": 1.5}, xx)
    ref, ref_x = _fd(f, layers, x)
    got = s2s_ad.grad(src.nested_layers, wrt=(0, 1))(params, x)
    _same(got[0]["layers"], ref)
    assert np.isclose(got[0]["scale"], src.nested_layers(params, x) / 1.5, rtol=1e-12)
    assert np.allclose(got[1], ref_x, rtol=1e-6, atol=1e-8)
    _same(s2s_ad.vjp(src.nested_layers, params, x)[1](1.0)[0]["layers"], ref)
