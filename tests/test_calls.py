"""Calls to user functions: one forward/backward pair per callee, checked
against central differences and sympy."""

import os
import shutil
import subprocess
import sys

import pytest
from hypothesis import given, settings, strategies as st

import calls_np_src as cn
import calls_src as c
import s2s_ad
from oracle import close, fd_gradient
from s2s_ad import SourceError

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = os.path.dirname(os.path.abspath(__file__))

CASES = [
    (c.twice_sq, [0.7, -1.3]),
    (c.cube_plus, [0.4, 1.7]),
    (c.nested, [0.3, 0.8]),
    (c.same_arg, [0.9]),
    (c.imported, [0.6, 1.1]),
    (c.constant_call, [1.5]),
    (c.unused_result, [0.2, 0.5]),
]


@pytest.mark.parametrize("fn,args", CASES, ids=[f.__name__ for f, _ in CASES])
def test_gradient_matches_finite_differences(fn, args):
    n = len(args)
    got = s2s_ad.grad(fn, wrt=tuple(range(n)))(*args)
    want = fd_gradient(fn, args, list(range(n)))
    assert all(close(g, w) for g, w in zip(got, want)), (got, want)


@pytest.mark.parametrize("fn,args", CASES, ids=[f.__name__ for f, _ in CASES])
def test_gradient_as_pairs_matches_finite_differences(fn, args, pairs):
    # The same helpers, none inlined: each call goes through its pair.
    n = len(args)
    got = s2s_ad.grad(fn, wrt=tuple(range(n)))(*args)
    want = fd_gradient(fn, args, list(range(n)))
    assert all(close(g, w) for g, w in zip(got, want)), (got, want)


@pytest.mark.parametrize("fn", [c.twice_sq, c.nested, c.same_arg, c.imported, c.cube_plus],
                         ids=lambda f: f.__name__)
def test_gradient_proved_by_sympy(fn):
    verdict = s2s_ad.check(fn)
    assert verdict.status == "proved", str(verdict)


def test_helper_called_twice_gets_one_pair(pairs):
    text = s2s_ad.gradient_source(c.twice_sq)
    assert text.count("def sq_fwd(") == 1 and text.count("def sq_bwd(") == 1
    assert text.count("= sq_fwd(") == 2 and text.count("= sq_bwd(") == 2


def test_helpers_calling_helpers_each_get_a_pair_with_a_header(pairs):
    text = s2s_ad.gradient_source(c.nested)
    for name in ("cube_plus", "sq"):
        assert f"def {name}_fwd(" in text and f"def {name}_bwd(" in text
        assert f"# {name} from " in text and "forward pass: returns its result" in text
        assert "backward pass: adjoints of" in text
    # cube_plus calls sq: its forward keeps sq's tape for its backward pass.
    fwd = text[text.index("def cube_plus_fwd("):text.index("def cube_plus_bwd(")]
    assert "sq_1, sq_1_tape = sq_fwd(x)" in fwd
    assert "sq_1_tape" in fwd.split("return", 1)[1]


def test_keyword_arguments_and_defaults_at_call_sites():
    # nested calls cube_plus(a, shift=b) (default k) and cube_plus(b, 2.0)
    text = s2s_ad.gradient_source(c.nested)
    assert "cube_plus_fwd(a, 3.0, b)" in text
    assert "cube_plus_fwd(b, 2.0, 0.0)" in text


def test_helpers_from_another_module_that_imports_this_one(pairs):
    text = s2s_ad.gradient_source(shapes_loss())
    for name in ("bump", "scaled", "both"):
        assert f"def {name}_fwd(" in text
    args = [0.4, -0.9, 0.7, 0.3]
    got = s2s_ad.grad(shapes_loss(), wrt=None)(*args[:3], bias=args[3])
    want = fd_gradient(lambda x, y, w, b: shapes_loss()(x, y, w, bias=b), args, [0, 1, 2, 3])
    assert all(close(g, w) for g, w in zip(got, want)), (got, want)


def shapes_loss():
    from pkg_calls import shapes
    return shapes.loss


def test_value_and_grad_through_calls():
    value, (da, db) = s2s_ad.value_and_grad(c.nested, wrt=("a", "b"))(0.3, 0.8)
    assert close(value, c.nested(0.3, 0.8))
    want = fd_gradient(c.nested, [0.3, 0.8], [0, 1])
    assert close(da, want[0]) and close(db, want[1])


@pytest.mark.parametrize("fn,line,cycle", [
    (c.rec, "return rec(x) + x", "rec → rec"),
    (c.ping, "return pong(x) * 2.0", None),
    (c.calls_ping, None, "ping → pong → ping"),
])
def test_recursion_is_refused_at_the_call(fn, line, cycle):
    with pytest.raises(SourceError) as info:
        s2s_ad.gradient_source(fn)
    err = info.value
    assert "recursive call" in err.message
    assert err.file.endswith("calls_src.py") and err.line > 0
    if line:
        assert line in str(err) or "return ping(x) - 1.0" in str(err)
    if cycle:
        assert cycle in err.message


def test_callee_with_star_args_gets_the_tuple_of_its_items():
    # `def takes_star(*args)`: the call's items are the tuple it collects
    g = s2s_ad.grad(c.calls_star)
    for x in (0.3, -1.7):
        assert close(g(x), fd_gradient(c.calls_star, [x], [0])[0])


def test_unsupported_construct_in_callee_points_into_the_callee():
    with pytest.raises(SourceError) as info:
        s2s_ad.gradient_source(c.calls_bad)
    assert "try" in info.value.message
    assert info.value.source_line.strip() == "try:"


def test_keyword_only_parameter_of_the_target():
    got = s2s_ad.grad(c.cube_plus, wrt=("x", "shift"))(0.4, 1.7, shift=0.3)
    want = fd_gradient(lambda x, s: c.cube_plus(x, 1.7, shift=s), [0.4, 0.3], [0, 1])
    assert close(got[0], want[0]) and close(got[1], want[1])


@pytest.mark.parametrize("fn,match", [(c.wrong_arity, "too many"),
                                      (c.unknown_keyword, "power")])
def test_bad_call_sites_are_refused(fn, match):
    with pytest.raises(SourceError, match=match):
        s2s_ad.gradient_source(fn)


def test_generated_module_imports_in_a_fresh_interpreter_without_s2s_ad(tmp_path):
    shutil.copytree(os.path.join(HERE, "pkg_calls"), tmp_path / "pkg_calls",
                    ignore=shutil.ignore_patterns("__pycache__"))
    out = tmp_path / "pkg_calls" / "grad_loss.py"
    env = dict(os.environ, PYTHONPATH=ROOT)
    subprocess.run([sys.executable, "-m", "s2s_ad", "grad", "pkg_calls.shapes.loss",
                    "-o", str(out)], cwd=tmp_path, env=env, check=True, capture_output=True)
    probe = (
        "import importlib.util, sys\n"
        f"sys.path.insert(0, {str(tmp_path)!r})\n"
        "assert importlib.util.find_spec('s2s_ad') is None, 's2s_ad is importable'\n"
        "from pkg_calls.grad_loss import grad_loss\n"
        "print(repr(grad_loss(0.4, -0.9, 0.7, bias=0.3)))\n"
        "assert 's2s_ad' not in sys.modules\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    # -S: no site-packages, so an installed s2s_ad (as in CI's venv) is not importable either.
    done = subprocess.run([sys.executable, "-I", "-S", "-c", probe], cwd=tmp_path, env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    got = eval(done.stdout)
    args = [0.4, -0.9, 0.7, 0.3]
    want = fd_gradient(lambda x, y, w, b: shapes_loss()(x, y, w, bias=b), args, [0, 1, 2, 3])
    assert all(close(g, w) for g, w in zip(got, want)), (got, want)


def test_golden_module_of_a_package_with_helpers_and_a_rule(golden):
    # Readability review only; correctness is checked above against
    # finite differences and sympy.
    golden("pkg_calls_loss.grad.py", s2s_ad.gradient_source(shapes_loss()))


def test_golden_vjp_pair_of_a_tuple_returning_function(golden):
    import structures_src
    golden("returns_tuple.vjp.py", s2s_ad.vjp_source(structures_src.returns_tuple))


FLOATS = st.floats(min_value=-2.0, max_value=2.0, allow_nan=False)


@settings(max_examples=40, deadline=None)
@given(FLOATS, FLOATS, FLOATS, FLOATS)
def test_package_gradient_at_random_points(x, y, w, bias):
    g = s2s_ad.grad(shapes_loss(), wrt=None)
    got = g(x, y, w, bias=bias)
    want = fd_gradient(lambda a, b, v, d: shapes_loss()(a, b, v, bias=d), [x, y, w, bias],
                       [0, 1, 2, 3])
    assert all(close(a, b, rtol=1e-5, atol=1e-6) for a, b in zip(got, want)), (got, want)


@settings(max_examples=40, deadline=None)
@given(FLOATS, FLOATS)
def test_nested_helpers_at_random_points(a, b):
    got = s2s_ad.grad(c.nested, wrt=(0, 1))(a, b)
    want = fd_gradient(c.nested, [a, b], [0, 1])
    assert all(close(x, y, rtol=1e-5, atol=1e-6) for x, y in zip(got, want)), (got, want)


def test_arrays_through_helpers_that_hand_back_their_cotangent():
    import numpy as np
    x = np.array([0.3, -1.2, 0.8])
    got = s2s_ad.grad(cn.arrays_through_helpers)(x)
    # f = |2x|² + |x|²/2 → ∂f/∂x = 8x + x
    assert np.allclose(got, 9.0 * x, rtol=1e-12)
    for i in range(3):
        def along(t, i=i):
            y = x.copy()
            y[i] = t
            return cn.arrays_through_helpers(y)
        assert close(got[i], fd_gradient(along, [x[i]], [0])[0])
    value, vjp_fn = s2s_ad.vjp(cn.ident, x)
    cot = np.ones(3)
    vjp_fn(cot)
    assert np.array_equal(cot, np.ones(3))


# -- calls inside loops and branches --------------------------------------

import calls_loops_src as cl  # noqa: E402
import cf_programs  # noqa: E402

LOOPS = [
    (cl.call_in_loop, [0.7, 3]),
    (cl.call_in_branch, [0.7, 0.3]),
    (cl.call_in_branch, [0.2, 0.9]),
    (cl.tuple_call_in_loop, [0.4, 3]),
    (cl.looping_helper_in_loop, [0.3, 3]),
    (cl.call_in_while, [0.4]),
    (cl.call_in_nested_loops, [0.3, 3]),
    (cl.call_after_break, [1.1, 5]),
    (cl.call_after_break, [0.2, 5]),
    (cf_programs.call_in_loop, [0.3, 3]),
]


@pytest.mark.parametrize("fn,args", LOOPS, ids=[f"{f.__name__}{a}" for f, a in LOOPS])
def test_calls_inside_loops_and_branches_match_finite_differences(fn, args):
    got = s2s_ad.grad(fn, wrt=0)(*args)
    want = fd_gradient(fn, args, [0])[0]
    assert close(got, want), (got, want)


@pytest.mark.parametrize("fn,args", [(cl.call_in_loop, {"n": 3}), (cl.call_in_branch, {}),
                                     (cl.tuple_call_in_loop, {"n": 2}),
                                     (cl.looping_helper_in_loop, {"n": 2})],
                         ids=lambda v: getattr(v, "__name__", ""))
def test_calls_inside_loops_proved_by_sympy(fn, args):
    verdict = s2s_ad.check(fn, wrt=0, args=args)
    assert verdict.status == "proved", str(verdict)


def test_a_call_in_a_loop_tapes_its_callees_tape_once_per_iteration(pairs):
    text = s2s_ad.gradient_source(cl.call_in_loop, wrt=0)
    assert "sq_1, sq_1_tape = sq_fwd(x + i)" in text
    # a loop inside no other loop keeps one slot per iteration
    assert "sq_1_tapes[i] = sq_1_tape" in text
    assert "sq_1_tape = sq_1_tapes[i]" in text
    assert text.count("def sq_fwd(") == 1


def test_vjp_of_a_function_calling_helpers_in_a_loop():
    value, vjp_fn = s2s_ad.vjp(cl.call_in_loop, 0.7, 3)
    assert close(value, cl.call_in_loop(0.7, 3))
    assert close(vjp_fn(2.0)[0], 2.0 * fd_gradient(cl.call_in_loop, [0.7, 3], [0])[0])
