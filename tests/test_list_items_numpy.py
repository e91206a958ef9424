"""Items of a list of any length replaced in NumPy code: ``hs[k] = v`` on a
list grown by ``append`` (or made by ``[c] * n``), its items arrays.

Each program's gradient against central differences, with the arguments'
shapes (an item whose adjoint the reverse of a replacement left at ``0.0``
still gives an array of its value's shape); its JVP against the gradient;
the same program called from a loop of a caller; the gradient module's file
read back, its JVP against central differences of the file's gradient; the
CLI's file run in a fresh interpreter without s2s-ad; and
``hs[k] += v`` refused, located (NumPy adds into the item's array in place,
which other names and the caller would see)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

import s2s_ad
from s2s_ad import SourceError
from tests.array_oracle import assert_gradients, fd_gradient, make_function
from tests.modules import import_source, run_generated
from tests.soak import beyond

A = np.array([0.31, -0.22, 0.54])
B = np.array([0.71, 0.12, -0.43])

PROGRAMS = {
    # every item replaced in a loop, read after
    "each_item": "def f(a, b, n):\n    hs = [a, b]\n    for i in range(n):\n"
                 "        hs.append(np.sin(hs[-1]) * b)\n    for k in range(len(hs)):\n"
                 "        hs[k] = hs[k] * hs[0]\n    return np.sum(hs[-1]) + np.sum(hs[1])",
    # a replaced item never read again: its old value's adjoint is zero, of a's shape
    "first_dropped": "def f(a, b, n):\n    ys = [a, b]\n    for i in range(n):\n"
                     "        ys.append(ys[-1] * 0.5)\n    ys[0] = b * 3.0\n"
                     "    return np.sum(ys[0]) + np.sum(ys[-1])",
    # items replaced from their neighbours, at negative and computed indices
    "neighbours": "def f(a, b, n):\n    ys = [a, b]\n    for i in range(n):\n"
                  "        ys.append(ys[-1] * 0.5)\n    for k in range(n):\n"
                  "        ys[k] = np.sin(ys[k + 1]) * ys[0]\n    ys[-1] = ys[-1] + a\n"
                  "    return np.sum(ys[0] * ys[1]) + np.sum(ys[-1])",
    # replaced in a branch
    "branch": "def f(a, b, n):\n    hs = [a]\n    for i in range(n):\n"
              "        hs.append(np.tanh(hs[-1] * b))\n    for k in range(len(hs)):\n"
              "        if np.sum(hs[k]) > 0.0:\n            hs[k] = hs[k] * b + a\n"
              "    t = 0.0\n    for h in hs:\n        t = t + np.sum(h * h)\n    return t",
    # a list of zeros made by [0.0] * n, then items that are arrays
    "zeros_list": "def f(a, b, n):\n    hs = [a]\n    for i in range(n):\n"
                  "        hs.append(np.tanh(hs[-1] * b))\n    ds = [0.0] * len(hs)\n"
                  "    for k in range(len(hs)):\n        ds[k] = ds[k] + hs[k] * b\n"
                  "    for k in range(len(hs) - 1):\n        ds[k + 1] = ds[k + 1] + ds[k] * a\n"
                  "    return np.sum(ds[0]) + np.sum(ds[-1] * a)",
    # one slot left at 0.0 (a number) beside arrays
    "zeros_left": "def f(a, b, n):\n    hs = [a]\n    for i in range(n):\n"
                  "        hs.append(np.tanh(hs[-1] * b))\n    ds = [0.0] * (len(hs) + 1)\n"
                  "    for k in range(len(hs)):\n        ds[k] = hs[k] * b\n"
                  "    return np.sum(ds[0]) + np.sum(ds[-1]) + np.sum(ds[-2] * a) + len(ds)",
    # stacked, then a list of zeros summed into in a loop (the fuzzer's --lists
    # seed 18021: its file read back took the list's item for an array's element)
    "stacked_then_zeros": "def f(a, b, n):\n    hs = [a, b * 0.5]\n    i = 0\n"
                          "    while i < n:\n        hs.append(np.tanh(hs[-1] * 0.5 + b))\n"
                          "        i = i + 1\n    H = np.stack(hs)\n    t = np.sum(H * H)\n"
                          "    ds = [0.0] * len(hs)\n    for j in range(len(hs)):\n"
                          "        ds[j] = ds[j] + hs[j] * 0.5\n"
                          "    return t + np.sum(ds[-1] * b) + np.sum(ds[0])",
    # a helper that fills a list [0.0] * n with arrays and returns it, called in a loop
    "helper_fills_list": "def build(a, b, n: int):\n    ds = [0.0] * n\n"
                         "    for k in range(n):\n        ds[k] = np.sin(a * (k + 1.0)) * b\n"
                         "    return ds\n\n"
                         "def f(a, b, n: int):\n    t = 0.0\n    for r in range(2):\n"
                         "        ds = build(a, b * (r + 1.0), n + 1)\n"
                         "        t = t + np.sum(ds[-1] * ds[0])\n    return t",
    # replaced in a while loop, then break
    "replaced_before_break": "def f(a, b, n):\n    hs = [a]\n    i = 0\n    while i < n:\n"
                             "        hs.append(hs[-1] * b + 0.1)\n"
                             "        if np.sum(hs[-1]) > 0.5:\n            hs[i] = hs[i] * 2.0\n"
                             "            break\n        i = i + 1\n"
                             "    return np.sum(hs[0] * hs[-1])",
    # items taken from another list, which is then replaced itself
    "items_of_another_list": "def f(a, b, n):\n    hs = [a, b]\n    gs = [b, a]\n"
                             "    for i in range(n):\n        hs.append(a * 0.5)\n"
                             "        gs.append(b * 0.5)\n    for k in range(2):\n"
                             "        hs[k] = gs[k]\n        gs[k] = gs[k] * 3.0\n"
                             "    return np.sum(hs[0] * gs[0]) + np.sum(hs[1] * gs[1] * a)",
    # an item replaced by one of another shape (a vector by a matrix), then stacked
    "item_changes_shape": "def f(a, b, n):\n    M = np.outer(a, b)\n    hs = [a, b]\n"
                          "    for i in range(n):\n        hs.append(hs[-1] * 0.5)\n"
                          "    hs[0] = hs[0] * M\n    hs[1] = hs[1]\n"
                          "    return np.sum(np.stack(hs[1:]) * b) + np.sum(hs[0] * M)",
    # backwards over the list, each item from the next
    "backwards_neighbours": "def f(a, b, n):\n    hs = [a]\n    for i in range(n):\n"
                            "        hs.append(np.tanh(hs[-1]) * b)\n"
                            "    for k in range(len(hs) - 1, 0, -1):\n"
                            "        hs[k - 1] = hs[k - 1] + hs[k] * 0.5\n"
                            "    return np.sum(hs[0])",
    # items replaced in a helper of a helper, called in a loop under a branch
    "helper_of_helper": "def inner(hs, b):\n    out = [h * 1.0 for h in hs]\n"
                        "    for k in range(len(out)):\n        out[k] = np.tanh(out[k]) * b\n"
                        "    return out\n\n"
                        "def middle(a, b, n: int):\n    hs = [a]\n    for i in range(n):\n"
                        "        hs.append(hs[-1] * 0.5 + b)\n    gs = inner(hs, b)\n"
                        "    ks = [g * 1.0 for g in gs]\n    ks[0] = ks[0] + a\n"
                        "    return np.sum(ks[0] * ks[-1])\n\n"
                        "def f(a, b, n: int):\n    t = 0.0\n    for r in range(2):\n"
                        "        if r > 0:\n            t = t + middle(a * (r + 1.0), b, n)\n"
                        "        else:\n            t = t - middle(b, a, n)\n    return t",
    # a list passed to a helper before and after its items are replaced
    "helper": "def tot(xs, b):\n    s = 0.0\n    for x in xs:\n"
              "        s = s + np.sum(np.sin(x) * b)\n    return s\n\n"
              "def f(a, b, n):\n    hs = [a, b]\n    for i in range(n):\n"
              "        hs.append(hs[-1] * 0.7 + a)\n    t = 0.0\n    for r in range(2):\n"
              "        t = t + tot(hs, b) * (r + 1.0)\n        for k in range(len(hs)):\n"
              "            hs[k] = np.cos(hs[k]) * b\n    return t + np.sum(hs[0] * hs[-1])",
}

CALLER = "def g(a, b, n):\n    t = 0.0\n    for r in range(2):\n" \
         "        t = t + f(a, b, n) * (r + 0.5)\n    return t"


@pytest.mark.parametrize("n", [0, 1, 3])
@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_gradient_and_jvp_against_differences(name, n):
    f = make_function(PROGRAMS[name])
    got = assert_gradients(f, [A, B, n], [0, 1], rtol=1e-6, atol=1e-8)
    da, db = np.linspace(-1.0, 1.0, 3), np.array([0.5, -0.3, 0.2])
    _, tangent = s2s_ad.jvp(f, wrt=(0, 1))(A, B, n, da=da, db=db)
    assert np.isclose(tangent, np.sum(got[0] * da) + np.sum(got[1] * db), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_called_from_a_loop(name):
    f = make_function(PROGRAMS[name])
    g = make_function(CALLER, "g", {"f": f})
    assert_gradients(g, [A, B, 3], [0, 1], rtol=1e-6, atol=1e-8)


# Every program, also a list a helper returns kept per iteration of the
# caller's loop (`ds_tape[r] = ds`: a tape of lists, rebuilt item by item in
# the reverse sweep) and a helper's tape holding such a list, under a branch.
READ_BACK = sorted(PROGRAMS)


@pytest.mark.parametrize("name", READ_BACK)
def test_gradient_file_read_back(tmp_path, name):
    f = make_function(PROGRAMS[name])
    text = s2s_ad.gradient_source(f, wrt=[0, 1])
    grad_f = import_source(str(tmp_path), text, f"list_items_{name}").grad_f
    first = grad_f(A, B, 3)
    for i, got in enumerate(first):
        np.testing.assert_allclose(got, fd_gradient(f, [A, B, 3], i), rtol=1e-6, atol=1e-8)
    da, db, h = np.linspace(-1.0, 1.0, 3), np.array([0.5, -0.3, 0.2]), 1e-6
    _, tangent = s2s_ad.jvp(grad_f, wrt=(0, 1))(A, B, 3, da=da, db=db)
    up, down = grad_f(A + h * da, B + h * db, 3), grad_f(A - h * da, B - h * db, 3)
    for t, u, d in zip(tangent, up, down):
        np.testing.assert_allclose(t, (u - d) / (2 * h), rtol=1e-5, atol=1e-6)


def test_augmented_item_write_is_refused_located():
    f = make_function("def f(a, b, n):\n    hs = [a]\n    for i in range(n):\n"
                      "        hs.append(hs[-1] * b)\n    hs[0] += b\n    return np.sum(a)")
    with pytest.raises(SourceError, match=r":5:\d+: error: ") as caught:
        s2s_ad.grad(f, wrt=0)(A, B, 2)
    assert "`hs[0] = hs[0] + ...`" in str(caught.value) and "^" in str(caught.value)


@pytest.mark.parametrize("name", beyond(["each_item", "zeros_list", "item_changes_shape"], 1))
def test_cli_file_in_a_fresh_interpreter(name, tmp_path):
    """The program written to a file, its gradient module written by the CLI
    (`s2s-ad grad FILE:f --wrt a,b -o OUT`) and run in a fresh interpreter
    without s2s-ad, at two lengths: the same gradient as the API's, and as
    central differences (each_item in the default run, all three with
    ``--soak``: every program's gradient and JVP are checked in-process in
    test_gradient_and_jvp_against_differences)."""
    source = tmp_path / f"items_{name}.py"
    source.write_text("import numpy as np\n\n\n" + PROGRAMS[name] + "\n", encoding="utf-8")
    out = tmp_path / f"grad_items_{name}.py"
    run = subprocess.run([sys.executable, "-m", "s2s_ad", "grad", f"{source}:f", "--wrt", "a,b",
                          "-o", str(out)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    f = make_function(PROGRAMS[name])
    for n in (1, 3):
        got = run_generated(tmp_path, out.stem, "grad_f", [A, B, n])
        api = s2s_ad.grad(f, wrt=(0, 1))(A, B, n)
        for i, g in enumerate(got):
            np.testing.assert_allclose(g, api[i], rtol=1e-12, atol=1e-14)
            np.testing.assert_allclose(g, fd_gradient(f, [A, B, n], i), rtol=1e-6, atol=1e-8)


def test_write_into_a_returned_list_is_refused_located():
    """A list a helper returned is read as it is, in NumPy code as in code of
    numbers: a write into it is refused with the rewrite."""
    f = make_function("def h(a, n):\n    hs = [a]\n    for i in range(n):\n"
                      "        hs.append(hs[-1] * 0.5)\n    return hs\n\n"
                      "def f(a, b, n):\n    gs = h(a, n)\n    gs[0] = gs[0] + b\n"
                      "    return np.sum(gs[0])", "f")
    with pytest.raises(SourceError, match=r":9:\d+: error: ") as caught:
        s2s_ad.grad(f, wrt=0)(A, B, 2)
    assert "a list of any length a helper returned" in str(caught.value)
