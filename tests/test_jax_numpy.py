"""JAX-flavoured code (tests/jax_src.py) read as NumPy: ``jax.numpy`` as
``numpy``, ``jax.scipy.special`` as ``scipy.special``, ``.at[...]`` updates,
``jax.vmap``, ``jax.lax.scan`` and ``fori_loop``. Each gradient is compared
with central differences (float64) of the function itself, run by JAX where
it is installed and by tests/jax_standin.py otherwise; at the top level, in
helpers, a helper of a helper, a loop, a branch, through ``s2s_ad.vjp`` and
through the CLI's ``grad -o`` file imported in a fresh interpreter. The
generated code calls NumPy only."""

import inspect
import os
import re
import subprocess
import sys
import textwrap
import types

import numpy as np
import pytest

import jax_src as m
import s2s_ad
from array_oracle import fd_gradient, make_function
from s2s_ad.errors import SourceError

HERE = os.path.dirname(__file__)
ROOT = os.path.dirname(HERE)
rng = np.random.default_rng(7)

CASES = {
    "log_sum_exp": ([rng.normal(size=6)], [0]),
    "activations": ([rng.normal(size=(3, 4)), rng.normal(size=(3, 4))], [0, 1]),
    "read_then_scanned": ([rng.normal(size=3), rng.normal(size=3)], [0, 1]),
    "spread_cost": ([rng.normal(size=(7, 2)), rng.normal(size=(3, 2))], [0, 1]),
    "mixture_loss": ([rng.normal(size=3), rng.normal(size=(3, 3)), 0.3 * rng.normal(size=(3, 3)),
                      rng.normal(size=(3, 3)), rng.normal(size=(5, 3))], [0, 1, 2, 3]),
    "poly_fit": ([rng.normal(size=4), 6], [0]),
    "rk4_last": ([rng.normal(size=4), 5], [0]),
    "relax": ([rng.normal(size=3), 4], [0]),
    "factory_ode": ([rng.normal(size=4), 5], [0]),
    "smooth_in_place": ([rng.normal(size=5)], [0]),
    "lstm_like_scan": ([rng.normal(size=3), rng.normal(size=(4, 3))], [0, 1]),
    "swap_loop": ([rng.normal(size=3), 4], [0]),
    "mapped_pairs_out": ([rng.normal(size=(4, 2))], [0]),
    "scan_over_rows": ([rng.normal(size=3), rng.normal(size=(4, 3))], [0, 1]),
    "scan_no_outputs": ([rng.normal(size=3), rng.normal(size=(4, 3))], [0, 1]),
    "mapped_pairs": ([rng.normal(size=(4, 3)), rng.normal(size=(4, 3)), 0.7], [0, 1, 2]),
    "updates": ([rng.normal(size=5), rng.normal(size=2)], [0, 1]),
    "other_spelling": ([rng.normal(size=3)], [0]),
    "soft_max_sum": ([rng.normal(size=4)], [0]),
    "objectives_as_helpers": ([rng.normal(size=(5, 4)), rng.normal(size=(2, 4)),
                               rng.normal(size=4)], [0, 1, 2]),
    "helper_of_helper": ([rng.normal(size=4)], [0]),
    "in_a_loop": ([rng.normal(size=3), 3], [0]),
    "in_a_branch": ([rng.normal(size=3), 1], [0]),
}


def original(f):
    """``f`` run on JAX arrays (or the stand-in's): the reference."""
    def run(*args):
        return f(*[m.jnp.asarray(a) if isinstance(a, np.ndarray) else a for a in args])
    return run


def assert_matches_fd(f, args, wrt, got, *, rtol=1e-5, atol=1e-7):
    for i, g in zip(wrt, got):
        want = fd_gradient(original(f), args, i)
        assert np.shape(g) == np.shape(args[i])
        np.testing.assert_allclose(np.asarray(g, dtype=np.float64), want, rtol=rtol, atol=atol,
                                   err_msg=f"gradient with respect to argument {i}")


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_matches_finite_differences(name):
    args, wrt = CASES[name]
    f = getattr(m, name)
    before = [np.copy(a) for a in args]
    got = s2s_ad.grad(f, wrt=tuple(wrt))(*args)
    for a, b in zip(args, before):  # JAX code never changes its arguments
        np.testing.assert_array_equal(a, b)
    assert_matches_fd(f, args, wrt, got)
    value, _ = s2s_ad.value_and_grad(f, wrt=tuple(wrt))(*args)
    np.testing.assert_allclose(value, float(original(f)(*args)), rtol=1e-12)


@pytest.mark.parametrize("name", ["mixture_loss", "poly_fit", "rk4_last", "in_a_loop"])
def test_second_branch_and_other_sizes(name):
    """Another size (and the other arm of the branch): one generated module
    serves every shape."""
    args, wrt = CASES[name]
    args = [rng.normal(size=np.shape(a)[:-1] + (np.shape(a)[-1] + 1,))
            if isinstance(a, np.ndarray) and name != "mixture_loss" else a for a in args]
    if name == "mixture_loss":
        k, d = 2, 4
        args = [rng.normal(size=k), rng.normal(size=(k, d)), 0.3 * rng.normal(size=(k, d)),
                rng.normal(size=(k, d * (d - 1) // 2)), rng.normal(size=(6, d))]
    f = getattr(m, name)
    assert_matches_fd(f, args, wrt, s2s_ad.grad(f, wrt=tuple(wrt))(*args))
    x = rng.normal(size=3)
    assert_matches_fd(m.in_a_branch, [x, 0], [0], s2s_ad.grad(m.in_a_branch, wrt=(0,))(x, 0))


@pytest.mark.parametrize("name", ["rk4_last", "mapped_pairs", "updates", "helper_of_helper"])
def test_vjp_matches_finite_differences(name):
    args, wrt = CASES[name]
    f = getattr(m, name)
    value, vjp_fn = s2s_ad.vjp(f, *args)
    cotangents = vjp_fn(1.5)
    np.testing.assert_allclose(value, float(original(f)(*args)), rtol=1e-12)
    assert_matches_fd(f, args, wrt, [cotangents[i] / 1.5 for i in wrt])


@pytest.mark.parametrize("name", ["poly_fit", "rk4_last", "smooth_in_place", "factory_ode",
                                  "lstm_like_scan"])
def test_jvp_matches_finite_differences(name):
    """Forward mode reads the same rewritten code."""
    args, wrt = CASES[name]
    f = getattr(m, name)
    direction = rng.normal(size=np.shape(args[0]))
    value, tangent = s2s_ad.jvp(f, wrt=0)(*args, **{f"d{list(inspect.signature(f).parameters)[0]}":
                                                   direction})
    want = np.sum(fd_gradient(original(f), args, 0) * direction)
    np.testing.assert_allclose(tangent, want, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(value, float(original(f)(*args)), rtol=1e-12)


def test_stop_gradient():
    """No derivative flows through jax.lax.stop_gradient: the gradient is that
    of the function with the stopped value held at its value."""
    x, y = rng.normal(size=(2, 3)), rng.normal(size=(2, 3))
    gx, gy = s2s_ad.grad(m.stopped, wrt=(0, 1))(x, y)
    assert np.allclose(gx, fd_gradient(m.stopped, [x, y], 0), rtol=1e-6)
    held = y * y
    assert np.allclose(gy, fd_gradient(lambda x_, y_: float(np.sum(
        (1.0 / (1.0 + np.exp(-x_))) * held) + np.sum(x_ * y_)), [x, y], 1), rtol=1e-6)


def test_generated_code_calls_numpy_only():
    for name in CASES:
        f = getattr(m, name)
        args, wrt = CASES[name]
        arrays = [p for p, a in zip(inspect.signature(f).parameters, args)
                  if isinstance(a, np.ndarray)]
        text = s2s_ad.gradient_source(f, wrt=wrt, arrays=arrays)
        code = "\n".join(line.split("#")[0] for line in text.splitlines())
        assert not re.search(r"\bjax\b", code), name
        assert "import numpy" in text


def test_grad_o_file_in_a_fresh_interpreter(tmp_path):
    out = tmp_path / "grad_jax_helper_of_helper.py"
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "grad",
                           "tests/jax_src.py:helper_of_helper", "--wrt", "x", "--array", "x",
                           "-o", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert not re.search(r"\bjax\b", "".join(line.split("#")[0]
                                              for line in out.read_text().splitlines()))
    x = CASES["helper_of_helper"][0][0]
    script = textwrap.dedent(f"""
        import sys
        import numpy as np
        sys.path[:0] = [{HERE!r}, {str(tmp_path)!r}]
        import grad_jax_helper_of_helper as g
        got = g.grad_helper_of_helper(np.array({x.tolist()!r}))
        assert "jax" not in sys.modules, "the generated module imported JAX"
        from array_oracle import fd_gradient
        import jax_src as m
        want = fd_gradient(lambda v: m.helper_of_helper(m.jnp.asarray(v)), [np.array({x.tolist()!r})], 0)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)
        print("ok")
    """)
    run = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0 and "ok" in run.stdout, run.stderr


REFUSED = {
    "uses_random": ("jax.random.normal", "pass them as an argument"),
    "vmap_in_comprehension": ("inside a lambda or comprehension", "assign it to a name first"),
    "at_min": ("`.at[...].min` is not supported", "set, add"),
    "in_axes_one": ("`in_axes` must be 0 or a tuple", "written in place"),
    "at_in_loop_aliased": ("nothing else may refer to it", "old = y"),
    "nn_in_generator": ("jax.nn.sigmoid", "assign it to a name first"),
}


def test_at_add_with_repeated_indices_adds_them_up():
    """``jnp.zeros(3).at[idx].add(v)``, ``idx`` repeating a position: NumPy's
    ``np.add.at`` (was refused: "an index in an assignment must be an int ...
    repeated indices")."""
    x = rng.normal(size=4)
    f = m.at_repeated_add
    want = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = 1e-6
        want[i] = (float(f(x + e)) - float(f(x - e))) / 2e-6
    np.testing.assert_allclose(s2s_ad.grad(f)(x), want, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_with_location(name):
    what, more = REFUSED[name]
    with pytest.raises(SourceError) as info:
        s2s_ad.grad(getattr(m, name))(rng.normal(size=(3, 3)))
    text = str(info.value)
    assert "jax_src.py:" in text and "^" in text and what in text and more in text, text


def test_jit_decorated_target_refused_at_its_decorator():
    with pytest.raises(SourceError) as info:
        s2s_ad.grad(m.compiled, wrt=0)
    text = str(info.value)
    assert "jax_src.py:" in text and "@partial(jax.jit" in text and "^" in text
    assert "compiled.__wrapped__" in text
    x = rng.normal(size=3)
    got = s2s_ad.grad(m.compiled.__wrapped__, wrt=0)(x, 3)
    np.testing.assert_allclose(got, 3 * x ** 2, rtol=1e-12)


def test_autograd_numpy_read_as_numpy():
    """A module named ``autograd.numpy`` (autograd's NumPy wrapper) is read as
    NumPy, by its name, like ``jax.numpy``."""
    agnp = types.ModuleType("autograd.numpy")
    agnp.sum, agnp.tanh = np.sum, np.tanh
    f = make_function("def f(x):\n    return anp.sum(anp.tanh(x) ** 2)\n", env={"anp": agnp})
    x = rng.normal(size=4)
    got = s2s_ad.grad(f)(x)
    np.testing.assert_allclose(got, fd_gradient(f, [x], 0), rtol=1e-6)
    assert "anp" not in s2s_ad.gradient_source(f, wrt=0).split("import numpy")[0]


FACTORY = """
def make(x, c):
    scale = 2.0 * c

    def f(y):
        return scale * x * np.roll(y, 1)

    return f


def solve(f, y, n):
    def step(y):
        return y + 0.1 * f(y)

    for _ in range(n):
        y = step(y)
    return y


def ode(x, n: int):
    f = make(x, 0.5)
    return np.sum(solve(f, np.ones_like(x), n) ** 2)


def not_a_factory(x):
    def f(y):
        return x * y

    print("made")
    return f


def uses_it(x):
    f = not_a_factory(x)
    return np.sum(f(x))
"""


def test_factory_inlined_in_numpy_code():
    """``f = make(x)``, ``make`` returning a nested function (any code, not
    only JAX's): its body is inlined, and ``f`` passed to a solver that calls
    it inside its own nested function."""
    ode = make_function(FACTORY, "ode")
    x = rng.normal(size=4)
    got = s2s_ad.grad(ode, wrt=0)(x, 3)
    np.testing.assert_allclose(got, fd_gradient(ode, [x, 3], 0), rtol=1e-6, atol=1e-9)
    with pytest.raises(SourceError) as info:
        s2s_ad.grad(ode.__globals__["uses_it"])(x)
    assert "`f` is a local value" in str(info.value) and "^" in str(info.value)


def test_jax_names_only_when_jax_is_installed():
    """With JAX installed, the corpus imported ``jax.numpy`` itself (both
    spellings); the names the frontend reads are NumPy's."""
    if not m.REAL_JAX:
        pytest.skip("JAX is not installed: tests/jax_standin.py stands in for it")
    import jax.numpy
    assert m.jnp is jax.numpy and m.jnp_too is jax.numpy
    got = s2s_ad.grad(m.other_spelling)(np.array([0.1, 0.2]))
    np.testing.assert_allclose(got, np.exp([0.1, 0.2]) * (1 + np.array([0.1, 0.2])), rtol=1e-12)
