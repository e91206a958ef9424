"""A JVP's tangent keyword is d<name> (docs/forward.md) also where the
function, or a helper inlined into it, has a variable of that name (a step
`dt` beside a time `t`): it was d<name>_1 and the documented call raised
TypeError. Tangents against central differences."""

import math
import os
import subprocess
import sys

import numpy as np

import s2s_ad
from tests.modules import import_source

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import tangent_keywords_src as src  # noqa: E402


def fd(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)


def test_time_beside_its_step():
    value, tangent = s2s_ad.jvp(src.decay, wrt="t")(0.8, 0.3, dt=1.0)
    assert value == src.decay(0.8, 0.3)
    assert abs(tangent - fd(lambda t: src.decay(0.8, t), 0.3)) < 1e-8
    value, tangents = s2s_ad.jvp(src.decay, wrt=None)(0.8, 0.3, dy=0.5, dt=2.0)
    ref = 0.5 * fd(lambda y: src.decay(y, 0.3), 0.8) + 2.0 * fd(lambda t: src.decay(0.8, t), 0.3)
    assert abs(tangents - ref) < 1e-8


def test_variable_of_an_inlined_helper():
    for fn in (src.doubled, src.uses_helper):
        value, tangent = s2s_ad.jvp(fn)(0.5, dx=1.0)
        assert abs(tangent - fd(fn, 0.5)) < 1e-8
        assert abs(s2s_ad.hessian(fn)(0.5) - 4.0) < 1e-12  # 2x² (+ x)
        assert abs(s2s_ad.jacfwd(fn)(0.5) - fd(fn, 0.5)) < 1e-8


def test_arrays():
    x = np.array([0.3, -0.2, 0.9, 1.4])
    v = np.array([1.0, 0.5, -1.0, 2.0])
    _, tangent = s2s_ad.jvp(src.field, wrt=0)(x, dx=v)
    assert abs(tangent - fd(lambda s: src.field(x + s * v), 0.0)) < 1e-7


def test_cli_module_takes_the_keyword(tmp_path):
    out = tmp_path / "jvp_decay.py"
    subprocess.run([sys.executable, "-m", "s2s_ad", "jvp", os.path.join(HERE, "tangent_keywords_src.py")
                    + ":decay", "--wrt", "t", "-o", str(out)], check=True, capture_output=True)
    run = subprocess.run([sys.executable, "-c", "import jvp_decay; print(jvp_decay.jvp_decay(0.8, "
                          "0.3, dt=1.0)[1])"], cwd=tmp_path, capture_output=True, text=True,
                         check=True)
    assert abs(float(run.stdout) - fd(lambda t: src.decay(0.8, t), 0.3)) < 1e-8


JVP_OF_GRAD_SRC = '''
import math


def loss(x_1, x=0.5):
    return x
'''


def test_jvp_of_grad_gives_two_parameters_distinct_keywords(tmp_path):
    """`jvp(grad(loss))` of `loss(x_1, x)`, whose gradient's seed is `dx`:
    both parameters got the keyword `dx_1`, and the call raised "missing
    tangent(s) dx_1" whatever was passed (fuzzer, --conditions seed 36023)."""
    loss = import_source(str(tmp_path), JVP_OF_GRAD_SRC, "jvp_of_grad_keywords_src").loss
    j = s2s_ad.jvp(s2s_ad.grad(loss, None), ("x_1", "x"))
    names = j.__s2s_ad_tangents__
    assert "dx" in names  # the gradient's seed, named after the result, the parameter `x`
    assert names["x_1"] == "dx_1" and names["x"] == "dx_1_1" and len(set(names.values())) == 3
    a, b, ta, tb = -0.8, 0.7, 0.3, -1.1
    _, tangent = j(a, b, dx_1=ta, dx_1_1=tb)
    g = s2s_ad.grad(loss, None)
    h = 1e-6
    for k in (0, 1):
        want = (g(a + h * ta, b + h * tb)[k] - g(a - h * ta, b - h * tb)[k]) / (2 * h)
        assert math.isclose(tangent[k], want, rel_tol=1e-6, abs_tol=1e-9)
