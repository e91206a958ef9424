"""The reverse transform: accumulation, activity, the shape of the sweep."""

import ast

import corpus_scalar
import seed_ggml
import s2s_ad
from s2s_ad import api
from s2s_ad.reverse import transform as reverse


def sweep(f, wrt=None):
    func = s2s_ad.lower(f)
    values, as_tuple = api.resolve_wrt(func, wrt)
    return reverse.transform(func, values, tuple_result=as_tuple)


def reverse_statements(code):
    return [s for s in code.body if s.node is not None and s.operand is not None]


def test_seed_backward_has_two_contributions_to_x():
    code = sweep(seed_ggml.f, ("a", "x"))
    to_x = [s for s in reverse_statements(code) if s.target == "dx"]
    assert len(to_x) == 2
    # The first contribution assigns, the second adds: no `0 + ...`.
    assert isinstance(to_x[0].node, ast.Assign)
    assert isinstance(to_x[1].node, ast.AugAssign)
    assert [s.operand for s in to_x] == [0, 1]
    assert all(s.origin.prim == "mul" for s in to_x)


def test_parameter_used_five_times_sums_five_contributions():
    # w*w + w*3.0 - w/(w+1.0): w appears five times.
    code = sweep(corpus_scalar.five_uses)
    to_w = [s for s in reverse_statements(code) if s.target == "dw"]
    assert len(to_w) == 5
    assert isinstance(to_w[0].node, ast.Assign)
    assert all(isinstance(s.node, ast.AugAssign) for s in to_w[1:])


def test_no_adjoints_for_inactive_values():
    code = sweep(corpus_scalar.inactive_branch, "x")
    targets = {s.target for s in reverse_statements(code)}
    # `unused = y * y` never reaches the result and y is not differentiated.
    assert "dy" not in targets and "dunused" not in targets
    assert targets == {"dx"} or targets <= {"dx", "dz"}


def test_integer_values_get_no_adjoint():
    code = sweep(corpus_scalar.rounding)
    for s in reverse_statements(code):
        assert s.origin.prim not in ("math.floor", "round", "math.ceil", "math.trunc")


def _is_zero(node):
    return isinstance(node, ast.Constant) and node.value == 0 and not isinstance(node.value, bool)


def test_no_zero_plus_anywhere():
    """Straight-line code never initialises an adjoint to zero or adds zero."""
    for f in corpus_scalar.CASES:
        tree = ast.parse(s2s_ad.gradient_source(f))
        for node in ast.walk(tree):
            if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
                assert not (_is_zero(node.left) or _is_zero(node.right)), f.__name__
            if isinstance(node, ast.Assign):
                assert not _is_zero(node.value), f"{f.__name__}: {ast.unparse(node)}"


def test_forward_pass_keeps_only_what_is_read():
    code = sweep(seed_ggml.f, ("a", "x"))
    assert [v.name for v in code.tape] == ["b"]
    forward = [s for s in code.body if s.node is not None and s.operand is None]
    assert len(forward) == 1  # y = a * b is not needed for the gradient


def test_value_and_grad_keeps_the_result_too():
    func = s2s_ad.lower(seed_ggml.f)
    code = reverse.transform(func, func.param_values, with_value=True)
    forward = [s for s in code.body if s.node is not None and s.operand is None]
    assert len(forward) == 2
