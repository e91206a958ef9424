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
    got = namespace["grad_returns_tuple"](0.9, 0.4)   # --wrt x: one gradient, not a 1-tuple
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


@pytest.mark.parametrize("n", [0, 1, 4])
def test_a_comprehension_over_a_range_of_a_parameter_is_the_loop_it_stands_for(n):
    # (was refused: "indices must be integer constants")
    got = s2s_ad.grad(s.comp_over_param_range)(0.7, n)
    assert close(got, fd_gradient(s.comp_over_param_range, [0.7, n], [0])[0])


@pytest.mark.parametrize("fn,match", [
    (s.nested_return, "nested"),
    (s.scalar_from_tuple_call, "returns 2 values"),
    (s.unpack_scalar_call, "returns one number"),
    (s.index_by_float, r"`x`: it is used as an integer \(a list index\)"),
    (s.list_in_arithmetic, "a list is used where a number is expected"),
    (s.bad_key, "constant strings"),
])
def test_shapes_that_depend_on_run_time_values_are_refused(fn, match):
    with pytest.raises(SourceError, match=match) as info:
        s2s_ad.gradient_source(fn)
    assert info.value.file.endswith("structures_src.py") and info.value.line > 0


# -- list and tuple parameters -------------------------------------------


def fd_list(fn, args, which):
    """Central differences of fn with respect to each item of args[which]."""
    out = []
    for i in range(len(args[which])):
        def g(v, i=i):
            a = list(args)
            seq = list(a[which])
            seq[i] = v
            a[which] = type(args[which])(seq)
            return fn(*a)
        out.append(fd_gradient(g, [args[which][i]], [0])[0])
    return out


@pytest.mark.parametrize("n", [1, 2, 4])
def test_gradient_of_a_list_parameter_is_a_list_of_its_length(n):
    xs = [0.3 + 0.4 * i for i in range(n)]
    g = s2s_ad.grad(s.norm2, wrt=("xs", "w"))
    gxs, gw = g(xs, 0.7)
    assert isinstance(gxs, list) and len(gxs) == n
    want = fd_list(s.norm2, [xs, 0.7], 0)
    assert all(close(a, b) for a, b in zip(gxs, want)), (gxs, want)
    assert close(gw, fd_gradient(lambda w: s.norm2(xs, w), [0.7], [0])[0])


def test_tuple_parameter_gives_a_tuple_gradient():
    g = s2s_ad.grad(s.point_tuple)((0.4, -1.1), 2.0)
    assert isinstance(g, tuple) and len(g) == 2
    want = fd_list(s.point_tuple, [(0.4, -1.1), 2.0], 0)
    assert close(g[0], want[0]) and close(g[1], want[1])


def test_two_list_parameters_and_a_comprehension_over_their_length():
    xs, ws = [0.5, -0.2, 1.5], [2.0, 0.3, -0.7]
    gx, gw = s2s_ad.grad(s.weighted, wrt=None)(xs, ws)
    assert all(close(a, b) for a, b in zip(gx, ws))
    assert all(close(a, b) for a, b in zip(gw, xs))


def test_list_parameters_are_proved_by_sympy():
    assert s2s_ad.check(s.norm2, lengths={"xs": 3}).status == "proved"
    assert s2s_ad.check(s.point_tuple, lengths={"p": ("tuple", 2)}).status == "proved"
    assert s2s_ad.check(s.weighted, lengths={"xs": 2, "ws": 2}).status == "proved"


def test_generated_code_for_given_lengths_checks_the_length_at_run_time():
    text = s2s_ad.gradient_source(s.norm2, wrt="xs", lengths={"xs": 3})
    assert "xs_0, xs_1, xs_2 = xs" in text and "return [dxs_0, dxs_1, dxs_2]" in text
    g = s2s_ad.grad(s.norm2, lengths={"xs": 3})
    with pytest.raises(ValueError):
        g([1.0, 2.0], 1.0)


def test_one_transform_per_shape():
    s2s_ad.clear_cache()
    g = s2s_ad.grad(s.pair_head)
    g([1.0, 2.0], 1.0)
    g([3.0, 4.0], 2.0)
    g([1.0, 2.0, 3.0], 1.0)
    # The attempt without lengths, then one per shape; asking again is a hit.
    assert s2s_ad.cache_info().misses == 3
    assert s2s_ad.grad(s.pair_head) is g and s2s_ad.cache_info().misses == 3
    want = fd_list(s.pair_head, [[1.0, 2.0, 3.0], 1.0], 0)
    assert all(close(a, b) for a, b in zip(g([1.0, 2.0, 3.0], 1.0), want))


def test_a_slice_needs_no_length():
    s2s_ad.clear_cache()
    g = s2s_ad.grad(s.norm2_tail)
    for xs in ([1.0, 2.0], [3.0, 4.0], [1.0, 2.0, 3.0], [0.5]):
        want = fd_list(s.norm2_tail, [xs, 1.5], 0)
        assert all(close(a, b) for a, b in zip(g(xs, 1.5), want))
    assert s2s_ad.cache_info().misses == 1


def test_one_transform_for_every_length():
    # a generator over the list is the loop it stands for: no length needed
    s2s_ad.clear_cache()
    g = s2s_ad.grad(s.norm2, wrt=("xs", "w"))
    for xs in ([1.0, 2.0], [3.0, 4.0], [1.0, 2.0, 3.0]):
        want = fd_list(s.norm2, [xs, 1.5], 0)
        assert all(close(a, b) for a, b in zip(g(xs, 1.5)[0], want))
    assert s2s_ad.cache_info().misses == 1


def test_vjp_with_a_list_argument():
    value, vjp_fn = s2s_ad.vjp(s.norm2, [0.3, 0.9], 1.5)
    assert close(value, s.norm2([0.3, 0.9], 1.5))
    gxs, gw = vjp_fn(2.0)
    want = fd_list(s.norm2, [[0.3, 0.9], 1.5], 0)
    assert all(close(a, 2.0 * b) for a, b in zip(gxs, want))


def test_list_parameter_without_a_length_is_refused_by_gradient_source():
    with pytest.raises(SourceError, match="lengths=") as info:
        s2s_ad.gradient_source(s.pair_head)
    assert info.value.line > 0
    assert "a, b = xs[:2]" in str(info.value)
    with pytest.raises(SourceError, match="used as a list"):
        s2s_ad.grad(s.pair_head)(1.0, 2.0)


def test_list_parameter_passed_on_to_a_helper_item_by_item():
    g = s2s_ad.grad(s.list_param_to_helper)([0.7, 0.2])
    assert close(g[0], 1.4) and close(g[1], 1.0)


def test_list_parameter_with_a_default_is_refused():
    with pytest.raises(SourceError, match="default"):
        s2s_ad.gradient_source(s.bad_list_default, lengths={"xs": 1})


# -- lists built in loops ---------------------------------------------------

LOOPS = [
    (s.built_in_loop, [0.7, 1.3]),
    (s.built_in_loop_with_calls, [0.6]),
    (s.built_then_looped, [0.6, 4]),
]


@pytest.mark.parametrize("fn,args", LOOPS, ids=[f.__name__ for f, _ in LOOPS])
def test_lists_built_by_append_in_constant_loops_match_finite_differences(fn, args):
    got = s2s_ad.grad(fn, wrt=0)(*args)
    want = fd_gradient(fn, args, [0])[0]
    assert close(got, want), (got, want)


def test_lists_built_in_loops_proved_by_sympy():
    assert s2s_ad.check(s.built_in_loop).status == "proved"
    assert s2s_ad.check(s.built_in_loop_with_calls).status == "proved"
    assert s2s_ad.check(s.built_then_looped, wrt="x", args={"n": 3}).status == "proved"


def test_a_loop_that_builds_a_list_is_unrolled():
    text = s2s_ad.gradient_source(s.built_in_loop)
    assert "for i in" not in text and "range(" not in text  # unrolled: no loop is left


@pytest.mark.parametrize("fn,args", [
    (s.built_in_runtime_loop, (0.7, 0)), (s.built_in_runtime_loop, (0.7, 1)),
    (s.built_in_runtime_loop, (0.7, 5)), (s.built_in_branch, (0.7,)),
    (s.built_in_branch, (-0.7,)), (s.built_with_break, (0.7,)), (s.built_with_break, (1.7,)),
])
def test_lists_whose_length_depends_on_run_time_values_grow_at_run_time(fn, args):
    # Once refused; now lists grown at run time (tests/test_runtime_append.py).
    got = s2s_ad.grad(fn, wrt="x")(*args)
    h = 1e-6
    plus, minus = (args[0] + h,) + args[1:], (args[0] - h,) + args[1:]
    assert got == pytest.approx((fn(*plus) - fn(*minus)) / (2 * h), rel=1e-6, abs=1e-8)


def test_source_of_a_gradient_generated_per_list_length():
    s2s_ad.clear_cache()
    # (`weighted`, a comprehension over range(len(xs)), is one module for every
    # length now; unpacking `ws` needs its length)
    g = s2s_ad.grad(s.weighted_pairs, wrt="xs")
    with pytest.raises(TypeError, match="call it first"):
        s2s_ad.source_of(g)
    g([1.0, 2.0], [3.0, 4.0])
    text = s2s_ad.source_of(g)
    # The gradient reads the items of ws (unpacked) but not those of xs,
    # whose length is still checked.
    assert "ws_0, ws_1 = ws" in text and "if len(xs) != 2:" in text
