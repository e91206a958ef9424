"""A function passed as an argument to a helper that calls it (a nested
``def``, a ``lambda``, a module-level function): the helper is specialised
per function value. Each gradient against central differences, through
``grad``, ``vjp`` and the CLI's ``grad -o`` file in a fresh interpreter."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import funargs_src as src
import s2s_ad
from array_oracle import fd_gradient as array_fd
from oracle import close, fd_gradient

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = os.path.dirname(os.path.abspath(__file__))

SCALAR = [
    (src.module_function_passed, [0.7], [0]),
    (src.nested_closure_passed, [0.7, -1.3], [0, 1]),
    (src.lambda_written_in_the_call, [0.6, -0.8], [0, 1]),
    (src.lambda_assigned, [0.4, 1.2], [0, 1]),
    (src.two_functions_one_helper, [0.9, -0.4], [0, 1]),
    (src.late_binding, [0.7, -1.3], [0, 1]),
    (src.in_a_loop, [0.8, 4], [0]),
    (src.in_a_branch, [0.8, 0.3], [0, 1]),
    (src.in_a_branch, [-0.2, 0.5], [0, 1]),
    (src.helper_of_a_helper, [0.5, 0.9], [0, 1]),
    (src.maker_inside_helper, [0.5, -0.7], [0, 1]),
    (src.uses_other_nested, [0.6, 1.1], [0, 1]),
    (src.recursive_helper, [0.8, 0.3], [0, 1]),
    (src.keyword_argument, [0.8, -0.6], [0, 1]),
    (src.defaults_around_the_function, [0.8, -0.6], [0, 1]),
]
IDS = [f"{f.__name__}-{i}" for i, (f, _, _) in enumerate(SCALAR)]


@pytest.mark.parametrize("fn, point, wrt", SCALAR, ids=IDS)
def test_function_arguments_against_finite_differences(fn, point, wrt):
    got = s2s_ad.grad(fn, wrt=tuple(wrt))(*point)
    got = got if isinstance(got, tuple) else (got,)
    want = fd_gradient(fn, point, wrt)
    assert all(close(g, w) for g, w in zip(got, want)), (got, want)


@pytest.mark.parametrize("fn, point, wrt", SCALAR, ids=IDS)
def test_function_arguments_through_vjp(fn, point, wrt):
    value, pull = s2s_ad.vjp(fn, *point)
    assert close(value, fn(*point))
    got = pull(0.5)
    want = fd_gradient(fn, point, wrt)
    assert all(close(got[i], 0.5 * w) for i, w in zip(wrt, want))


def test_late_binding_reads_the_captured_value_at_the_call():
    # apply_twice(h, y) = y x², then apply_twice(h, x) = x (3y)² = 9 x y²
    dx, dy = s2s_ad.grad(src.late_binding, wrt=(0, 1))(0.7, -1.3)
    assert close(dx, 2 * 0.7 * -1.3 + 9 * 1.3 ** 2) and close(dy, 0.7 ** 2 + 18 * 0.7 * -1.3)


def test_numpy_closure_and_module_function():
    rng = np.random.default_rng(0)
    a, b = rng.normal(0, 0.5, (3, 3)), rng.normal(size=3)
    got = s2s_ad.grad(src.numpy_closure, wrt=(0, 1))(a, b)
    for i, g in enumerate(got):
        np.testing.assert_allclose(g, array_fd(src.numpy_closure, [a, b], i), rtol=1e-6,
                                   atol=1e-9)
    y0 = rng.normal(size=4)
    np.testing.assert_allclose(s2s_ad.grad(src.numpy_module_function)(y0),
                               array_fd(src.numpy_module_function, [y0], 0), rtol=1e-6)


def test_one_specialisation_per_function_value():
    """Three different functions given to one helper: three pairs; the same
    function given twice: one."""
    text = s2s_ad.gradient_source(src.two_functions_one_helper, wrt=(0, 1))
    assert text.count("def apply_twice_fwd") == 3, text
    text = s2s_ad.gradient_source(src.nested_closure_passed, wrt=(0, 1))
    assert text.count("def apply_twice_fwd") <= 1


@pytest.mark.parametrize("name, wrt, args", [
    ("nested_closure_passed", "x,y", "[0.7, -1.3]"),
    ("helper_of_a_helper", "x,y", "[0.5, 0.9]"),
    ("numpy_closure", "a,b", "[np.random.default_rng(1).normal(0, 0.5, (3, 3)), "
                            "np.random.default_rng(2).normal(size=3)]"),
])
def test_grad_o_file_imports_in_a_fresh_interpreter(tmp_path, name, wrt, args):
    out = tmp_path / f"grad_{name}.py"
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "grad",
                           f"tests/funargs_src.py:{name}", "--wrt", wrt, "-o", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    script = textwrap.dedent(f"""
        import sys
        import numpy as np
        sys.path[:0] = [{HERE!r}, {str(tmp_path)!r}]
        from array_oracle import fd_gradient
        import funargs_src as m
        import grad_{name} as g
        args = {args}
        got = g.grad_{name}(*args)
        for i, d in enumerate(got):
            want = fd_gradient(lambda *a: float(m.{name}(*a)), args, i)
            np.testing.assert_allclose(d, want, rtol=1e-6, atol=1e-8)
        print("ok")
    """)
    run = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0 and "ok" in run.stdout, run.stderr


REFUSED = [
    ("def f(x):\n    def h(t):\n        return t * x\n    if x > 0.0:\n        g = h\n"
     "    return x\n", "not use it as a value"),
    ("def f(x):\n    def h(t):\n        return t * x\n    fs = [h]\n    return x\n",
     "not use it as a value"),
    ("def call(f, t):\n    return f(t)\n"
     "def f(x):\n    return call(abs, x)\n", r"`abs` is passed as a function, but it is "
     r"not one of yours.*lambda t: abs\(t\)"),
    ("def call(f, t):\n    return f(t)\n"
     "def f(x):\n    return call(lambda t: math.sin(t), x)\n", None),
]


@pytest.mark.parametrize("source, message", REFUSED)
def test_function_values_elsewhere_are_refused_located(source, message):
    from array_oracle import make_function
    f = make_function("import math\n" + source, env={"math": __import__("math")})
    if message is None:  # the way out the message gives
        assert close(s2s_ad.grad(f)(0.5), fd_gradient(f, [0.5], [0])[0])
        return
    with pytest.raises(s2s_ad.SourceError, match=message):
        s2s_ad.grad(f)(0.5)


def test_a_module_constant_changed_later_is_seen(tmp_path):
    """The specialised helper reads the module's constants as they are when
    the gradient is made, not as they were at an earlier specialisation."""
    from array_oracle import make_function
    ns = {"K": 2.0}
    f = make_function("def apply(g, t):\n    return g(t) * K\n"
                      "def sq(t):\n    return t * t\n"
                      "def f(x):\n    return apply(sq, x)\n", env=ns)
    assert close(s2s_ad.grad(f)(0.5), 2 * 0.5 * 2.0)
    f.__globals__["K"] = 3.0  # (sq and apply are the same objects: a new gradient, same key)
    assert close(s2s_ad.grad(f)(0.5), 2 * 0.5 * 3.0)
