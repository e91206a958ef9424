"""Tuples, lists and dicts: built and read inside the function, returned
(``output=k``), returned by helpers, and the vector-output vjp. Gradients are
compared with central differences and sympy."""

import math

import pytest

import s2s_ad
import structures_src as s
from oracle import close, fd_gradient
from s2s_ad import SourceError
from s2s_ad.api import OutputError

SCALAR = [
    (s.swap_pack, [0.3, -0.7]),
    (s.comp, [0.4, 1.2]),
    (s.comp_over_list, [0.5, -0.9]),
    (s.appended, [0.8, 0.6]),
    (s.with_dict, [0.7, -0.2, 1.3]),
    (s.sliced, [0.2, 0.9, -1.1]),
    (s.use_split, [0.6, 1.4]),
    (s.use_split_unused_item, [0.6, 1.4]),
]


@pytest.mark.parametrize("fn,args", SCALAR, ids=[f.__name__ for f, _ in SCALAR])
def test_structures_inside_the_function_match_finite_differences(fn, args):
    n = len(args)
    got = s2s_ad.grad(fn, wrt=tuple(range(n)))(*args)
    want = fd_gradient(fn, args, list(range(n)))
    assert all(close(g, w) for g, w in zip(got, want)), (got, want)


@pytest.mark.parametrize("fn", [f for f, _ in SCALAR], ids=lambda f: f.__name__)
def test_structures_inside_the_function_proved_by_sympy(fn):
    verdict = s2s_ad.check(fn)
    assert verdict.status == "proved", str(verdict)


def test_structures_leave_no_trace_in_the_ir():
    text = s2s_ad.api.lower(s.comp).__class__  # lowering succeeds
    from s2s_ad import ir
    prims = {op.prim for op in s2s_ad.lower(s.comp).body.ops}
    assert prims <= {"add", "mul"}, prims
    assert text is ir.Function


@pytest.mark.parametrize("k", [0, 1, 2, -1])
def test_output_k_of_a_returned_tuple(k):
    args = [0.9, 0.4]
    got = s2s_ad.grad(s.returns_tuple, wrt=(0, 1), output=k)(*args)
    want = fd_gradient(lambda x, y: s.returns_tuple(x, y)[k], args, [0, 1])
    assert close(got[0], want[0]) and close(got[1], want[1])
    assert s2s_ad.check(s.returns_tuple, output=k).status == "proved"


def test_output_of_a_returned_list_and_value_and_grad_gives_the_whole_value():
    value, g = s2s_ad.value_and_grad(s.returns_list, wrt="x", output=1)(0.3, 2.0)
    assert value == pytest.approx(tuple(s.returns_list(0.3, 2.0)))
    assert close(g, math.exp(0.3))


def test_output_is_required_for_tuples_and_refused_for_scalars():
    with pytest.raises(OutputError, match="returns 3 values"):
        s2s_ad.grad(s.returns_tuple)
    with pytest.raises(OutputError, match="0..2"):
        s2s_ad.grad(s.returns_tuple, output=3)
    with pytest.raises(OutputError, match="returns one number"):
        s2s_ad.grad(s.swap_pack, output=0)


def test_cli_output_option(tmp_path):
    import os
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.path.join(root, "tests")]))
    out = tmp_path / "g.py"
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "grad", "structures_src.returns_tuple",
                           "--output", "1", "--wrt", "x", "-o", str(out)], env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    namespace = {}
    exec(out.read_text(), namespace)
    (got,) = namespace["grad_returns_tuple"](0.9, 0.4)
    assert close(got, fd_gradient(lambda x: s.returns_tuple(x, 0.4)[1], [0.9], [0])[0])
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "check", "structures_src.returns_tuple",
                           "--output", "0"], env=env, capture_output=True, text=True)
    assert done.returncode == 0 and "PROVED" in done.stdout, done.stdout + done.stderr


@pytest.mark.parametrize("cot", [(1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.5, -2.0, 3.0)])
def test_vjp_of_a_tuple_output(cot):
    args = [0.9, 0.4]
    value, vjp_fn = s2s_ad.vjp(s.returns_tuple, *args)
    assert value == pytest.approx(s.returns_tuple(*args))
    got = vjp_fn(cot)

    def weighted(x, y):
        return sum(c * v for c, v in zip(cot, s.returns_tuple(x, y)))

    want = fd_gradient(weighted, args, [0, 1])
    assert close(got[0], want[0]) and close(got[1], want[1])


def test_vjp_of_a_value_returned_twice_sums_its_cotangents():
    value, vjp_fn = s2s_ad.vjp(s.returns_same_twice, 0.7)
    (got,) = vjp_fn((1.0, 2.0, 3.0))
    want = fd_gradient(lambda x: sum(c * v for c, v in zip((1.0, 2.0, 3.0),
                                                           s.returns_same_twice(x))), [0.7], [0])
    assert close(got, want[0])


def test_helper_returning_a_tuple_gets_one_pair_taking_a_tuple_cotangent():
    text = s2s_ad.gradient_source(s.use_split)
    assert text.count("def split_fwd(") == 1
    assert "def split_bwd(tape, cotangents):" in text
    assert "p, s = " not in text  # items are read with indexing
    assert "p = split_1[0]" in text and "s = split_1[1]" in text
    assert "(0.0, " in text  # an item whose adjoint is zero


@pytest.mark.parametrize("fn,match", [
    (s.nested_return, "nested"),
    (s.scalar_from_tuple_call, "returns 2 values"),
    (s.unpack_scalar_call, "returns one number"),
    (s.index_by_float, "integer constants"),
    (s.comp_over_param_range, "integer constants"),
    (s.list_in_arithmetic, "a list is used where a number is expected"),
    (s.bad_key, "constant strings"),
])
def test_shapes_that_depend_on_run_time_values_are_refused(fn, match):
    with pytest.raises(SourceError, match=match) as info:
        s2s_ad.gradient_source(fn)
    assert info.value.file.endswith("structures_src.py") and info.value.line > 0
