"""Forward mode (``s2s_ad.jvp``, ``jacfwd``) against central finite
differences in float64 — never against s2s-ad's reverse mode alone."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import s2s_ad
from s2s_ad.errors import SourceError
from tests import forward_src as src
from tests.fuzz import fd_agrees, evaluate, import_program
from tests.oracle import second_difference
from tests.programs import HypothesisDraw, program
from tests.soak import breadth


def fd_directional(f, args: list, direction: list, h: float = 1e-6):
    """(f(x + h·v) - f(x - h·v)) / 2h, elementwise for arrays; the
    arguments past ``direction`` are held fixed."""
    direction = list(direction) + [None] * (len(args) - len(direction))
    up = [a + h * v if v is not None else a for a, v in zip(args, direction)]
    down = [a - h * v if v is not None else a for a, v in zip(args, direction)]
    return (np.asarray(f(*up), dtype=float) - np.asarray(f(*down), dtype=float)) / (2 * h)


def tangent_names(jvp_fn, k: int) -> list[str]:
    return list(inspect.signature(jvp_fn).parameters)[-k:]


def check_jvp(f, args: list, direction: list, wrt=None, rtol=1e-6, atol=1e-7, **kw):
    jvp_fn = s2s_ad.jvp(f, wrt, **kw)
    names = tangent_names(jvp_fn, len(direction))
    value, tangent = jvp_fn(*args, **dict(zip(names, direction)))
    np.testing.assert_allclose(value, f(*args), rtol=1e-12, atol=1e-12)
    fd = fd_directional(f, args, direction)
    np.testing.assert_allclose(tangent, fd, rtol=rtol, atol=atol)
    return jvp_fn


@pytest.mark.parametrize("point", [(0.7, 1.3), (-0.4, 2.1), (1.9, -0.6)])
def test_straight_line(point):
    check_jvp(src.straight, list(point), [0.3, -1.1])


@pytest.mark.parametrize("point", [(1.0, 0.8), (0.9, 0.1), (-0.5, 0.3)])
def test_branches_each_side(point):
    check_jvp(src.branches, list(point), [1.0, 0.5])


@pytest.mark.parametrize("n", [0, 1, 5])
def test_for_loop_no_tape(n):
    jvp_fn = check_jvp(src.horner, [0.6, n], [1.0], wrt="x")
    text = s2s_ad.source_of(jvp_fn)
    assert "append" not in text and "pop" not in text


@pytest.mark.parametrize("x", [0.5, 1.2, 3.0])
def test_while_and_break(x):
    check_jvp(src.with_while, [x, 0.4], [1.0, -2.0])
    check_jvp(src.early_exit, [x, 0.9], [0.7, 1.0])


def test_helpers_get_their_own_jvp_function():
    jvp_fn = check_jvp(src.calls, [0.3, 0.8], [1.0, 0.25])
    text = s2s_ad.source_of(jvp_fn)
    assert "def jvp_looped_helper(" in text and "def jvp_tuple_helper(" in text


def test_tuple_result_gives_tuple_tangent():
    jvp_fn = s2s_ad.jvp(src.two_outputs)
    (v0, v1), (t0, t1) = jvp_fn(0.4, 1.5, dx=1.0, dy=2.0)
    fd = fd_directional(lambda x, y: np.array(src.two_outputs(x, y)), [0.4, 1.5], [1.0, 2.0])
    np.testing.assert_allclose([v0, v1], src.two_outputs(0.4, 1.5))
    np.testing.assert_allclose([t0, t1], fd, rtol=1e-6)


def test_list_parameter():
    xs = [0.5, -1.0, 2.0]
    fn = s2s_ad.jvp(src.listed, lengths={"xs": 3})
    value, tangent = fn(xs, 0.7, dxs=[1.0, 0.0, 2.0], dw=-1.0)
    fd = fd_directional(lambda a, b, c, w: src.listed([a, b, c], w), xs + [0.7],
                        [1.0, 0.0, 2.0, -1.0])
    assert math.isclose(value, src.listed(xs, 0.7))
    assert math.isclose(tangent, fd, rel_tol=1e-6)
    # without lengths: generated for the lengths of the lists it is called with
    value, tangent = s2s_ad.jvp(src.listed)(xs, 0.7, dxs=[1.0, 0.0, 2.0], dw=-1.0)
    assert math.isclose(tangent, fd, rel_tol=1e-6)


def test_single_number_seed_defaults_to_one_others_required():
    value, tangent = s2s_ad.jvp(src.horner, "x")(0.6, 3)
    assert math.isclose(tangent, fd_directional(lambda x: src.horner(x, 3), [0.6], [1.0]),
                        rel_tol=1e-6)
    with pytest.raises(TypeError):
        s2s_ad.jvp(src.straight)(0.1, 0.2)


def test_source_puts_tangent_beside_primal():
    text = s2s_ad.jvp_source(src.straight)
    lines = text.splitlines()
    k = next(i for i, l in enumerate(lines) if l.lstrip().startswith("a = "))
    assert lines[k + 1].lstrip().startswith("da = ") and "math.cos(x)" in lines[k + 1]
    assert lines[k].split("#")[1] == lines[k + 1].split("#")[1]  # the same user line
    assert "line 11: a = math.sin(x) * y" in lines[k + 1]


RNG = np.random.default_rng(3)


@pytest.mark.parametrize("f,shapes", [
    (src.arrays_elementwise, [(3,), (3,), ()]),
    (src.arrays_linear, [(4, 3), (3,), (4,)]),
    (src.arrays_vector, [(2, 3), (3,)]),
    (src.arrays_loop, [(4,), (3,)]),
    (src.arrays_prod, [(4,)]),
])
def test_numpy(f, shapes):
    args = [RNG.standard_normal(s) if s else 0.8 for s in shapes]
    direction = [RNG.standard_normal(s) if s else -0.6 for s in shapes]
    check_jvp(f, args, direction, rtol=1e-5, atol=1e-7)


def test_jacfwd_against_finite_differences():
    W, x = RNG.standard_normal((2, 3)), RNG.standard_normal(3)
    J = s2s_ad.jacfwd(src.arrays_vector, wrt=1)(W, x)
    assert J.shape == (2 + 3, 3)
    for k in range(3):
        e = np.zeros(3)
        e[k] = 1.0
        np.testing.assert_allclose(J[:, k], fd_directional(lambda v: src.arrays_vector(W, v),
                                                           [x], [e]), rtol=1e-5, atol=1e-7)
    Jx, Jy = s2s_ad.jacfwd(src.straight, wrt=("x", "y"))(0.7, 1.3)
    assert math.isclose(Jx, fd_directional(lambda a: src.straight(a, 1.3), [0.7], [1.0]),
                        rel_tol=1e-6)
    assert math.isclose(Jy, fd_directional(lambda b: src.straight(0.7, b), [1.3], [1.0]),
                        rel_tol=1e-6)


@pytest.mark.parametrize("f,args,where", [
    (src.uses_rule, [1.0], "ruled_square"),
    (src.as_int, [1.0], "round"),
])
def test_refusals_are_located(f, args, where):
    args = [np.ones(3) if a == "array" else a for a in args]
    with pytest.raises(SourceError) as info:
        fn = s2s_ad.jvp(f)
        fn(*args, **{n: a for n, a in zip(tangent_names(fn, len(args)), args)})
    err = info.value
    assert err.file.endswith("forward_src.py") and err.line > 0 and where in str(err)


RANDOM = settings(max_examples=breadth(60, 120), deadline=None, derandomize=True,
                  database=None, suppress_health_check=list(HealthCheck))


@RANDOM
@given(data=st.data())
def test_random_programs(data, tmp_path_factory):
    """Random programs with branches and loops (tests/programs.py): each
    parameter's tangent, one at a time, against finite differences."""
    prog = program(HypothesisDraw(data))
    fn = import_program(prog, str(tmp_path_factory.mktemp("fwd")), f"j{abs(hash(prog.source))}")
    value = evaluate(fn, prog.point)
    if value is None:
        return
    try:
        jvp_fn = s2s_ad.jvp(fn, list(prog.wrt_names))
    except SourceError:
        try:  # refused in forward mode only where reverse mode refuses it too
            s2s_ad.grad(fn, list(prog.wrt_names))
        except SourceError:
            return
        raise
    names = tangent_names(jvp_fn, len(prog.wrt_names))
    for i, param in enumerate(prog.wrt_names):
        seeds = {n: float(k == i) for k, n in enumerate(names)}
        try:
            _, got = jvp_fn(**prog.point, **seeds)
        except (ValueError, ZeroDivisionError, OverflowError):
            continue
        verdict = fd_agrees(fn, prog.point, param, float(got), value)
        assert verdict is not False, f"{prog.source}\nat {prog.point}: ∂/∂{param} = {got}"


def test_cli_jvp_writes_a_module_that_is_right(tmp_path):
    import os
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = tmp_path / "jvp_pendulum.py"
    r = subprocess.run([sys.executable, "-m", "s2s_ad", "jvp", "examples/pendulum.py:energy_after_step",
                        "--wrt", "theta,length", "-o", str(out)], cwd=root, capture_output=True,
                       text=True, timeout=120, env=dict(os.environ, PYTHONPATH=root))
    assert r.returncode == 0, r.stderr
    from tests.modules import import_source
    from examples.pendulum import energy_after_step as f
    jvp_fn = import_source(str(tmp_path), out.read_text(), "jvp_pendulum_mod").jvp_energy_after_step
    args = [0.4, -0.2, 1.3, 0.1, 0.05]
    value, tangent = jvp_fn(*args, dtheta=1.0, dlength=-0.5)
    assert math.isclose(value, f(*args))
    fd = fd_directional(f, args, [1.0, 0.0, -0.5, 0.0, 0.0])
    assert math.isclose(tangent, fd, rel_tol=1e-6)
    bad = subprocess.run([sys.executable, "-m", "s2s_ad", "jvp", "tests/forward_src.py:uses_rule"],
                         cwd=root, capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, PYTHONPATH=root))
    assert bad.returncode == 2 and "forward_src.py:" in bad.stderr and "^" in bad.stderr


@pytest.mark.parametrize("f,kw", [(src.straight, {}), (src.branches, {}), (src.early_exit, {}),
                                  (src.two_outputs, {"output": 1}),
                                  (src.listed, {"lengths": {"xs": 3}})])
def test_check_mode_forward_proves_against_sympy(f, kw):
    verdict = s2s_ad.check(f, mode="forward", **kw)
    assert verdict.status == "proved", str(verdict)
    assert "forward mode" in str(verdict)


def test_check_mode_forward_finds_a_wrong_tangent(monkeypatch):
    from s2s_ad.forward import transform as fwd
    real = fwd._sum

    def wrong(terms):  # a tangent with the first term doubled: check must say mismatch
        import ast
        total = real(terms)
        return ast.BinOp(total, ast.Add(), real(terms[:1]))
    monkeypatch.setattr(fwd, "_sum", wrong)
    s2s_ad.clear_cache()
    assert s2s_ad.check(src.straight, mode="forward").status == "mismatch"


@pytest.mark.parametrize("point", [(0.3, 0.7, -0.4), (1.1, -0.5, 0.9)])
def test_hvp_forward_over_reverse_against_second_differences(point):
    H = np.array([[second_difference(src.smooth3, list(point), i, j) for j in range(3)]
                  for i in range(3)])
    v = np.array([0.5, -1.0, 2.0])
    got = s2s_ad.hvp(src.smooth3, wrt=("x", "y", "z"))(*point, tuple(v))
    np.testing.assert_allclose(got, H @ v, rtol=1e-5, atol=1e-6)
    # one parameter: the gradient's own tangent, the Hessian a number
    assert math.isclose(s2s_ad.hessian(src.smooth_one)(0.8),
                        second_difference(src.smooth_one, [0.8], 0, 0), rel_tol=1e-5)


def test_hvp_through_a_loop_with_a_tape():
    """The loop's gradient keeps a tape; its Hessian is still one generated
    module (the gradient of the JVP module), against second differences."""
    for x in (0.6, -0.3):
        want = second_difference(lambda x: src.horner(x, 3), [x], 0, 0)
        assert math.isclose(s2s_ad.hvp(src.horner, "x")(x, 3, 1.0), want, rel_tol=1e-5)
        assert math.isclose(s2s_ad.hessian(src.horner, "x")(x, 3), want, rel_tol=1e-5)


@pytest.mark.parametrize("fn,args", [(src.appended_in_branch, [1.5, 1.0]),
                                     (src.appended_in_branch, [1.5, -1.0]),
                                     (src.appended_in_loop_after_constants, [0.7, 5])],
                         ids=["branch-true", "branch-false", "loop"])
def test_list_grown_at_run_time_from_inactive_items(fn, args):
    """The tangent list of a list whose items were inactive until an append
    (one Python list for every version) has one zero per earlier item, made
    before the append: the tangent of xs[0] is the appended value's."""
    check_jvp(fn, args, [1.0], wrt="x")


@pytest.mark.parametrize("n", [0, 1, 7])
def test_loop_invariants_and_their_tangents_computed_once_before_the_loop(n):
    jvp_fn = check_jvp(src.euler, [0.7, 1.3, n], [0.4, -0.9], wrt=("x", "k"))
    text = s2s_ad.source_of(jvp_fn)
    loop = text.index("for i in")
    assert "-dk" in text[:loop] and "-dk" not in text[loop:], text
    # in a helper called twice, one call inside a branch
    check_jvp(src.euler_twice, [0.7, 1.3, n], [0.4, -0.9], wrt=("x", "k"))
    check_jvp(src.euler_twice, [-0.7, 1.3, n], [0.4, -0.9], wrt=("x", "k"))


@pytest.mark.parametrize("n", [0, 3])
def test_hvp_through_hoisted_invariants_against_second_differences(n):
    h = s2s_ad.hvp(src.euler_twice, wrt=("x", "k"))
    got = h(0.7, 1.3, n, (0.4, -0.9))
    g = s2s_ad.grad(src.euler_twice, wrt=("x", "k"))
    eps = 1e-5
    up, down = g(0.7 + 0.4 * eps, 1.3 - 0.9 * eps, n), g(0.7 - 0.4 * eps, 1.3 + 0.9 * eps, n)
    # H·v by differences of the gradient, itself checked against finite differences
    fd = [(u - d) / (2 * eps) for u, d in zip(up, down)]
    np.testing.assert_allclose(got, fd, rtol=1e-6, atol=1e-8)
    for i in range(2):
        gi = fd_directional(src.euler_twice, [0.7, 1.3, n], [float(i == 0), float(i == 1)])
        np.testing.assert_allclose(g(0.7, 1.3, n)[i], gi, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("n", [0, 1, 4])
def test_lists_made_empty_have_an_empty_tangent_list(n):
    for point in ([0.7, 1.3, n], [-0.9, 0.4, n]):
        jvp_fn = check_jvp(src.appended, point, [0.4, -0.9], wrt=("x", "k"))
        check_jvp(src.appended_in_helper, point, [0.4, -0.9], wrt=("x", "k"))
    text = s2s_ad.source_of(jvp_fn)
    assert "for item in" not in text and " = []" in text, text


@pytest.mark.parametrize("name", ["euler_twice", "appended_in_helper"])
def test_cli_module_of_hoisted_invariants_and_empty_lists_in_a_fresh_interpreter(tmp_path, name):
    import json
    import os
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = tmp_path / f"jvp_{name}.py"
    r = subprocess.run([sys.executable, "-m", "s2s_ad", "jvp", f"tests/forward_src.py:{name}",
                        "--wrt", "x,k", "-o", str(out)], cwd=root, capture_output=True,
                       text=True, timeout=120, env=dict(os.environ, PYTHONPATH=root))
    assert r.returncode == 0, r.stderr
    point, direction = [0.7, 1.3, 4], [0.4, -0.9]
    run = subprocess.run([sys.executable, "-c",
                          f"import json, jvp_{name} as m; "
                          f"print(json.dumps(m.jvp_{name}(0.7, 1.3, 4, dx=0.4, dk=-0.9)))"],
                         cwd=str(tmp_path), capture_output=True, text=True, timeout=120,
                         env={k: v for k, v in os.environ.items() if k != "PYTHONPATH"})
    assert run.returncode == 0, run.stderr
    value, tangent = json.loads(run.stdout)
    f = getattr(src, name)
    assert value == f(*point)
    assert math.isclose(tangent, float(fd_directional(f, point, direction)), rel_tol=1e-6)


def test_tangent_broadcast_to_the_shape_an_inactive_operand_gives():
    # Found by the fuzzer (--numpy-rules, seed 102291): the tangent of
    # `trace(...) - ones * 1.5` was the trace's alone, a number, so the sum
    # over the four items counted it once: the JVP was a quarter of the truth.
    rng = np.random.default_rng(7)
    a, b, c = rng.normal(size=4), rng.normal(size=4), rng.normal(size=3)
    da, db = rng.normal(size=4), rng.normal(size=4)
    h = 1e-6
    f = src.trace_minus_ones
    want = (f(a + h * da, b + h * db) - f(a - h * da, b - h * db)) / (2 * h)
    value, tangent = s2s_ad.jvp(f)(a, b, da=da, db=db)
    assert math.isclose(value, f(a, b)) and math.isclose(tangent, want, rel_tol=1e-6)
    s = np.float64(0.7)
    g = src.number_minus_array
    want = (g(s + h, c) - g(s - h, c)) / (2 * h)
    _, tangent = s2s_ad.jvp(g, wrt="s")(s, c, ds=1.0)
    assert math.isclose(tangent, want, rel_tol=1e-6), (tangent, want)
