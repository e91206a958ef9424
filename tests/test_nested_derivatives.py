"""A derivative s2s-ad made (``climb = s2s_ad.grad(neg)``), of a function
that reads module constants (a helper named by a global, a number), called
inside a function differentiated in turn: lowered with the derivative's code
for what those constants hold now, and made again, with the caller's, when
they change. Each gradient against central differences of the function."""

import importlib

import pytest

import s2s_ad

import nested_derivatives_src as src

ARGS = (0.7, -0.4, 1.0, 0.5)


@pytest.fixture
def m():
    """The module as written (each test may rebind its globals)."""
    s2s_ad.clear_cache()
    yield importlib.reload(src)
    s2s_ad.clear_cache()


def central(f, args, i, h=1e-6):
    up, down = list(args), list(args)
    up[i] += h
    down[i] -= h
    return (f(*up) - f(*down)) / (2 * h)


def agrees(g, f, args, wrt=(0, 1, 2, 3), rel=1e-6):
    got = g(*args)
    for k, i in enumerate(wrt):
        assert got[k] == pytest.approx(central(f, args, i), rel=rel, abs=1e-8), i


@pytest.mark.parametrize("name", ["best_reply", "best_reply_forward", "adaptive_reply",
                                  "passed_reply"])
def test_gradient_through_a_derivative_of_a_function_reading_globals(m, name):
    f = getattr(m, name)
    agrees(s2s_ad.grad(f, wrt=(0, 1, 2, 3)), f, ARGS)


@pytest.mark.parametrize("name", ["best_reply", "adaptive_reply", "passed_reply"])
def test_rebinding_the_helper_the_inner_function_calls(m, name):
    f = getattr(m, name)
    g = s2s_ad.grad(f, wrt=(0, 1, 2, 3))
    agrees(g, f, ARGS)
    m.shape = m.steeper  # the inner derivative's function now calls another helper
    agrees(g, f, ARGS)   # the gradient made before sees it, as f does
    agrees(s2s_ad.grad(f, wrt=(0, 1, 2, 3)), f, ARGS)


def test_changing_the_number_the_inner_helper_reads(m):
    g = s2s_ad.grad(m.best_reply, wrt=(0, 1))
    agrees(g, m.best_reply, ARGS, wrt=(0, 1))
    m.SCALE = 2.5
    agrees(g, m.best_reply, ARGS, wrt=(0, 1))


def test_vjp_and_jvp_of_the_outer_function(m):
    f = m.best_reply
    _, back = s2s_ad.vjp(f, *ARGS)
    cot = back(1.0)
    for i in range(4):
        assert cot[i] == pytest.approx(central(f, ARGS, i), rel=1e-6, abs=1e-8)
    _, slope = s2s_ad.jvp(f, wrt=("x1", "y1", "s0", "s1"))(*ARGS, dx1=1.0, dy1=0.0, ds0=0.0, ds1=0.0)
    assert slope == pytest.approx(central(f, ARGS, 0), rel=1e-6)


def test_cli_file_of_the_outer_function(m, tmp_path):
    import subprocess
    import sys
    out = tmp_path / "g.py"
    subprocess.run([sys.executable, "-m", "s2s_ad", "grad", f"{m.__file__}:best_reply",
                    "-o", str(out)], check=True, capture_output=True, text=True)
    space: dict = {}
    exec(compile(out.read_text(), str(out), "exec"), space)
    got = space["grad_best_reply"](*ARGS)
    assert "s2s_ad" not in out.read_text().split('"""', 2)[2]
    assert got[0] == pytest.approx(central(m.best_reply, ARGS, 0), rel=1e-6)


def test_rebinding_seen_after_the_inner_derivative_ran_first(m):
    # (the caller reads `shape` only through `climb`; `climb` called directly
    # after the rebinding makes its own code again before the caller runs: the
    # caller's check must still see the change, not `climb`'s new check)
    g = s2s_ad.grad(m.only_climb, wrt=(0, 1, 2, 3))
    agrees(g, m.only_climb, ARGS)
    m.shape = m.steeper
    m.climb(*ARGS)
    agrees(g, m.only_climb, ARGS)
