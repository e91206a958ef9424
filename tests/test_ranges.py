"""A ``range`` bound to a name (``_range = range(0, len(seq) - 1)``, then
``for t in _range`` and ``_range[0]``, as GradBench's LSTM objective writes
it behind ``_range=None``): iterated and read at a constant index, against
central differences, at the top level, in a helper called in a loop, through
vjp and the CLI's ``-o`` file in a fresh interpreter; anything else done
with it refused, located."""

import subprocess
import sys

import numpy as np
import pytest

import s2s_ad
from array_oracle import fd_gradient, make_function

SEQ = np.random.default_rng(5).normal(size=(5, 2))
X0 = np.array([0.3, -0.2])

ARRAYS = ("import numpy as np\n"
          "def f(x, seq, _range=None):\n"
          "    if _range is None:\n"
          "        _range = range(0, len(seq) - 1)\n"
          "    total = 0.0\n"
          "    states = [x]\n"
          "    inp = seq[_range[0]]\n"
          "    for t in _range:\n"
          "        s = np.tanh(states[t] * inp)\n"
          "        states.append(s)\n"
          "        total += np.sum(s * seq[t + 1])\n"
          "        inp = seq[t + 1]\n"
          "    return total\n")


def test_a_range_bound_to_a_name_in_numpy_code():
    f = make_function(ARRAYS)
    np.testing.assert_allclose(s2s_ad.grad(f, wrt=0)(X0, SEQ), fd_gradient(f, [X0, SEQ], 0),
                               rtol=1e-6, atol=1e-9)
    value, pull = s2s_ad.vjp(f, X0, SEQ)
    assert value == pytest.approx(f(X0, SEQ), rel=1e-12)
    np.testing.assert_allclose(pull(1.0)[0], fd_gradient(f, [X0, SEQ], 0), rtol=1e-6, atol=1e-9)


def test_a_range_with_a_step_in_a_helper_called_in_a_loop():
    f = make_function("def walk(x, n):\n    r = range(1, n, 2)\n    s = x * r[1]\n"
                      "    for k in r:\n        s = s * x + k\n    return s\n\n"
                      "def f(x, n: int = 7):\n    t = 0.0\n    for j in range(3):\n"
                      "        t = t + walk(x + 0.1 * j, n)\n    return t\n")
    x = 0.7
    h = 1e-6
    assert s2s_ad.grad(f, wrt=0)(x, 7) == pytest.approx((f(x + h, 7) - f(x - h, 7)) / (2 * h),
                                                        rel=1e-6)


def test_a_range_bound_to_a_name_through_the_cli(tmp_path):
    (tmp_path / "walk.py").write_text("def f(x, n: int):\n    r = range(n)\n    s = 0.0\n"
                                      "    for k in r:\n        s = s + x ** (k + 1)\n    return s\n")
    out = tmp_path / "grad_walk.py"
    subprocess.run([sys.executable, "-m", "s2s_ad", "grad", str(tmp_path / "walk.py") + ":f",
                    "--wrt", "x", "-o", str(out)], check=True, cwd=tmp_path)
    code = (f"import sys\nsys.path.insert(0, {str(tmp_path)!r})\nfrom grad_walk import grad_f\n"
            "print(repr(grad_f(0.8, 4)))\n")
    got = float(subprocess.run([sys.executable, "-c", code], check=True, capture_output=True,
                               text=True).stdout)
    assert got == pytest.approx(sum((k + 1) * 0.8 ** k for k in range(4)), rel=1e-12)


@pytest.mark.parametrize("use, why", [
    ("len(r)", "a range"), ("r[-1]", "constant index >= 0"), ("r[x > 0]", "constant index"),
    ("r * 2", "a range")])
def test_other_uses_of_a_range_are_refused_located(use, why):
    f = make_function(f"def f(x, n: int = 3):\n    r = range(n)\n    return x * ({use})\n")
    with pytest.raises(s2s_ad.SourceError, match=why) as info:
        s2s_ad.grad(f, wrt=0)(0.5, 3)
    assert info.value.line == 3


def test_a_range_of_an_unannotated_int_in_numpy_code():
    # the bounds a `for` over range(n) takes, n an int parameter without annotation
    f = make_function("import numpy as np\ndef f(x, n):\n    r = range(n)\n    s = 0.0\n"
                      "    for k in r:\n        s = s + np.sum(x ** (k + 1))\n    return s\n")
    x = np.array([0.5, 0.8])
    np.testing.assert_allclose(s2s_ad.grad(f, wrt=0)(x, 3), fd_gradient(f, [x, 3], 0),
                               rtol=1e-6)


@pytest.mark.parametrize("rebind", ["    for j in range(2):\n        r = range(1, n)\n",
                                    "    if x > 0.0:\n        r = range(1, n)\n"])
def test_a_range_bound_again_in_a_loop_or_branch_is_refused_located(rebind):
    # its bounds are read while lowering: one binding, before loops and branches
    f = make_function("def f(x, n: int = 3):\n    r = range(n)\n" + rebind
                      + "    t = 0.0\n    for i in r:\n        t = t + x * i\n    return t\n")
    with pytest.raises(s2s_ad.SourceError, match="`r` is a range bound again in a loop or "
                       "branch") as info:
        s2s_ad.grad(f)(0.5, 3)
    assert info.value.line == 6 and "bind it once" in str(info.value)
