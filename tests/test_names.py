"""Name hygiene: user names that look like generated ones never collide with
them or change the result. Every gradient is checked against central finite
differences of the original function (tests/oracle.py) and against sympy.
"""

import inspect

import pytest

import s2s_ad
from tests.modules import import_source
from tests.oracle import close, fd_gradient

PROGRAMS = {
    "adjoint_names_as_params": ("def f(x, dx, dy):\n    y = x * dx + dy\n    dx = y * x\n"
                                "    return dx * dy\n"),
    "seed_name_as_param": "def f(x, dout):\n    out = x * dout\n    return out * out\n",
    "seed_name_as_local": "def f(x):\n    dout = x * x\n    out = dout * x\n    return out\n",
    "seed_for_named_result": "def f(x, dy):\n    y = x * dy\n    return y\n",
    "seed_for_named_result_local": "def f(x):\n    dy = x + 1.0\n    y = dy * x\n    return y\n",
    "temporaries": ("def f(t1, _t0, t2):\n    t3 = t1 * _t0 + t2 * t1\n    dt1 = t3 * t3\n"
                    "    return (t1 + dt1) * (_t0 - t2)\n"),
    "tape_and_grad": ("def f(tape, grad_f, value_and_grad_f):\n    tape = tape * grad_f\n"
                      "    return tape * value_and_grad_f + grad_f\n"),
    "function_named_grad_f": "def grad_f(x, f):\n    grad_f_1 = x * f\n    return grad_f_1 * x\n",
    "suffix_names": ("def f(x, x_1, dx_1):\n    x_2 = x * x_1\n    x = x_2 * dx_1\n"
                     "    return x * x_1\n"),
    "math_as_parameter": ("from math import sin, exp\n\n\ndef f(math, x):\n"
                          "    return sin(math) * exp(x) + math * math\n"),
    "math_as_local": ("from math import sin\n\n\ndef f(x):\n    math = sin(x) * x\n"
                      "    return math * sin(math)\n"),
    "math_local_with_alias": ("import math as m\n\n\ndef f(x):\n    math = m.sin(x)\n"
                              "    return m.cos(math) * math\n"),
    "module_alias_clash": ("import math as m\n\n\ndef f(m_1, math_1):\n"
                           "    return m.sqrt(m_1 * m_1 + 1.0) * m.tanh(math_1)\n"),
    "builtin_names_as_locals": ("def f(x):\n    abs_ = abs(x)\n    max_1 = max(x, 0.5)\n"
                                "    return abs_ * max_1 * x\n"),
    "out_everywhere": ("def out(out, dout):\n    out_1 = out * dout\n    out = out_1 + out\n"
                       "    return out * dout\n"),
    "reassigned_parameter_chain": ("def f(x, y):\n    x = x * y\n    x = x * y\n    y = x * x\n"
                                   "    x += y\n    return x\n"),
}

POINT = [0.7, -1.3, 0.45]


@pytest.mark.parametrize("case", sorted(PROGRAMS))
def test_adversarial_names(case, tmp_path):
    module = import_source(tmp_path, PROGRAMS[case], f"names_{case}")
    fn = next(v for k, v in vars(module).items()
              if callable(v) and getattr(v, "__module__", None) == module.__name__)
    n = fn.__code__.co_argcount
    args = POINT[:n]
    got = s2s_ad.grad(fn, wrt=None)(*args)
    got = list(got) if isinstance(got, tuple) else [got]
    expected = fd_gradient(fn, args, list(range(n)))
    assert all(close(g, e) for g, e in zip(got, expected)), (got, expected)
    assert s2s_ad.check(fn).ok
    # The seed keeps its default even when a parameter looks like it.
    seeded = s2s_ad.grad(fn, wrt=None)
    text = s2s_ad.source_of(seeded)
    assert text.count(f"def grad_{fn.__name__}(") == 1


def test_seed_argument_scales_the_gradient_despite_a_parameter_named_like_it(tmp_path):
    module = import_source(tmp_path, PROGRAMS["seed_name_as_param"], "names_seed")
    g = s2s_ad.grad(module.f, wrt=None)
    plain = g(0.7, -1.3)
    seed = next(p.name for p in inspect.signature(g).parameters.values()
                if p.kind == p.KEYWORD_ONLY)
    assert seed != "dout"
    scaled = g(0.7, -1.3, **{seed: 3.0})
    assert all(close(3 * a, b) for a, b in zip(plain, scaled))
