"""A NumPy loop summing independent iterations is computed at once
(s2s_ad/frontend/loop_batching.py): its gradient, vjp, jvp and second
derivatives against central differences, in every position, and the loops
that must stay loops (which keep their gradient)."""

import os
import subprocess
import sys

import numpy as np
import pytest

import s2s_ad
from tests import loop_batching_src as src
from tests.array_oracle import fd_gradient
from tests.oracle import second_difference

RNG = np.random.default_rng(7)
X = RNG.uniform(-1.0, 1.0, size=5)
W = RNG.uniform(-1.0, 1.0, size=5)

CASES = [  # (function, arguments, wrt)
    (src.fit, [X, 9], [0]),
    (src.two_sums, [X, W, 7], [0, 1]),
    (src.stepped, [X, 11], [0]),
    (src.in_place, [X, 6], [0]),
    (src.as_helper, [X, 8], [0]),
    (src.in_outer_loop, [X, 5], [0]),
    (src.rows_of, [X, 6], [0]),
]
KEPT = [
    (src.carried, [X, 5], [0]),
    (src.reads_sum, [X, 5], [0]),
    (src.temp_after, [X, 5], [0]),
    (src.read_before_update, [X, 5], [0]),
    (src.axis_of_a_number, [X, 0.7, 4], [0, 1]),
    (src.kept_by_comment, [X, 4], [0]),
    (src.written_after_the_loop, [X, 3], [0]),
    (src.scalar_math, [0.7, 5], [0]),
    (src.marked, [X, 5], [0]),
    (src.closure_reads, [X, 5], [0]),
]


def _name(case):
    return case[0].__name__


def _gradient(fn, args, wrt):
    return s2s_ad.grad(fn, wrt=wrt)(*args)  # a tuple: wrt is a list


@pytest.mark.parametrize("case", CASES + KEPT, ids=_name)
def test_gradient_against_central_differences(case):
    fn, args, wrt = case
    for i, g in zip(wrt, _gradient(fn, args, wrt)):
        np.testing.assert_allclose(g, fd_gradient(fn, args, i), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("case", CASES, ids=_name)
def test_value_is_the_loops(case):
    fn, args, wrt = case
    value, _ = s2s_ad.value_and_grad(fn, wrt=wrt)(*args)
    np.testing.assert_allclose(value, fn(*args), rtol=1e-13, atol=1e-13)


@pytest.mark.parametrize("case", CASES, ids=_name)
def test_computed_at_once(case):
    fn, args, wrt = case
    g = s2s_ad.grad(fn, wrt=wrt)
    g(*args)
    text = s2s_ad.source_of(g)
    assert "np.arange(" in text and "loop_sum" in text
    if fn is not src.in_outer_loop:
        assert "for " not in text.split("def grad_")[1].split("\ndef ")[0]


@pytest.mark.parametrize("case", KEPT, ids=_name)
def test_kept_as_a_loop(case):
    fn, args, wrt = case
    g = s2s_ad.grad(fn, wrt=wrt)
    g(*args)
    assert "loop_sum" not in s2s_ad.source_of(g)


@pytest.mark.parametrize("n", [0, 1, 2])
def test_short_and_empty_ranges(n):
    for fn in (src.two_sums, src.stepped, src.in_place):
        args = [X, W, n] if fn is src.two_sums else [X, n]
        value, g = s2s_ad.value_and_grad(fn)(*args)
        np.testing.assert_allclose(value, fn(*args), rtol=1e-13, atol=1e-13)
        np.testing.assert_allclose(g, fd_gradient(fn, args, 0), rtol=1e-6, atol=1e-8)


def test_integer_array_refused_as_the_loop_is():
    """``np.full(3, i)`` holds integers in the loop; the batched code would
    make floats, so the loop stays (and its integer array has no derivative
    to give: the product with x is what flows)."""
    g = s2s_ad.grad(src.integer_array)
    np.testing.assert_allclose(g(X[:3], 4), fd_gradient(src.integer_array, [X[:3], 4], 0),
                               rtol=1e-6, atol=1e-8)
    assert "loop_sum" not in s2s_ad.source_of(g)


@pytest.mark.parametrize("case", CASES, ids=_name)
def test_vjp_and_jvp(case):
    fn, args, wrt = case
    value, pull = s2s_ad.vjp(fn, *args)
    got = pull(1.0)
    for i in wrt:
        np.testing.assert_allclose(got[i], fd_gradient(fn, args, i), rtol=1e-6, atol=1e-8)
    _assert_jvp(fn, args, wrt[0])


def _param(fn, i):
    import inspect
    return list(inspect.signature(fn).parameters)[i]


def _assert_jvp(fn, args, i):
    """jvp of ``fn`` along a random direction of argument ``i`` against
    central differences of ``fn`` along it."""
    v = RNG.normal(size=np.shape(args[i]))
    _, tangent = s2s_ad.jvp(fn, wrt=i)(*args, **{f"d{_param(fn, i)}": v})
    h = 1e-6
    up, down = list(args), list(args)
    up[i], down[i] = args[i] + h * v, args[i] - h * v
    np.testing.assert_allclose(tangent, (fn(*up) - fn(*down)) / (2 * h), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("fn", [src.fit, src.two_sums], ids=lambda f: f.__name__)
def test_hessian(fn):
    args = [X[:3], W[:3], 6] if fn is src.two_sums else [X[:3], 6]
    hess = s2s_ad.hessian(fn, wrt=0)(*args)

    def flat(*v):
        return fn(np.array(v), *args[1:])
    for a in range(3):
        for b in range(3):
            ref = second_difference(flat, list(args[0]), a, b)
            assert abs(hess[a, b] - ref) <= 1e-4 * (1 + abs(ref)), (a, b, hess[a, b], ref)


def test_cli_file_in_a_fresh_interpreter(tmp_path):
    """The gradient file the CLI writes runs without s2s_ad and gives the
    gradient of the loop."""
    out = tmp_path / "grad_fit.py"
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    subprocess.run([sys.executable, "-m", "s2s_ad", "grad", "tests/loop_batching_src.py:fit",
                    "--wrt", "x", "-o", str(out)], check=True, cwd=here)
    text = out.read_text()
    assert "np.arange(" in text
    code = ("import sys, numpy as np; sys.modules['s2s_ad'] = None; import grad_fit; "
            f"print(repr(grad_fit.grad_fit(np.array({list(X)!r}), 9).tolist()))")
    run = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, check=True,
                         capture_output=True, text=True)
    np.testing.assert_allclose(eval(run.stdout), fd_gradient(src.fit, [X, 9], 0),
                               rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("n", [0, 3])
def test_helper_read_in_one_arm(n):
    """``_, dv = h_bwd(...)`` guarded to the arm that reads the result gives
    ``dv`` zeros on the other (it was undefined there: UnboundLocalError)."""
    g = s2s_ad.grad(src.used_in_one_arm)(X, n)
    np.testing.assert_allclose(g, fd_gradient(src.used_in_one_arm, [X, n], 0),
                               rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("n", [0, 6])
def test_cli_file_differentiated_again(tmp_path, n):
    """The CLI's gradient file of ``fit`` (a loop computed at once: a helper
    called in a branch, its tape holding a shape tuple, `assign` for the write
    into the iteration's array) is in the subset: jvp and vjp of it against
    central differences of the file's own gradient."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    subprocess.run([sys.executable, "-m", "s2s_ad", "grad", "tests/loop_batching_src.py:fit",
                    "--wrt", "x", "-o", str(tmp_path / "grad_fit_again.py")], check=True, cwd=here)
    sys.path.insert(0, str(tmp_path))
    try:
        import grad_fit_again as mod
    finally:
        sys.path.remove(str(tmp_path))
    g = mod.grad_fit
    v, c, h = RNG.normal(size=5), RNG.normal(size=5), 1e-5
    _, tangent = s2s_ad.jvp(g, wrt=0)(X, n, dx=v)
    np.testing.assert_allclose(tangent, (g(X + h * v, n) - g(X - h * v, n)) / (2 * h),
                               rtol=1e-5, atol=1e-7)
    back = s2s_ad.vjp(g, X, n)[1](c)[0]
    want = fd_gradient(lambda a: float(np.sum(c * g(a, n))), [X], 0)
    np.testing.assert_allclose(back, want, rtol=1e-5, atol=1e-7)


def test_range_bounds_are_integers():
    """The loop's bounds stay integers, as `range` makes them: a gradient
    with respect to `n` (which `fit` also uses as a float) is refused at the
    range, vjp gives it no cotangent, and a float bound raises TypeError."""
    with pytest.raises(s2s_ad.SourceError, match="used as an integer .a `range` bound"):
        s2s_ad.grad(src.fit, wrt=1)(X, 6)
    value, pull = s2s_ad.vjp(src.fit, X, 6)
    dx, dn = pull(1.0)
    assert dn is None
    np.testing.assert_allclose(dx, fd_gradient(src.fit, [X, 6], 0), rtol=1e-6, atol=1e-8)
    with pytest.raises(TypeError, match="is a `range` bound: it must be an int"):
        s2s_ad.grad(src.stepped)(X, 4.5)


def test_len_of_a_range_refused_located():
    """`len(range(...))` in NumPy code was an internal AttributeError (the
    range went to NumPy's `len`); it is refused with its location."""
    with pytest.raises(s2s_ad.SourceError) as info:
        s2s_ad.grad(src.count_of_range)(X, 3)
    assert "loop_batching_src.py" in str(info.value) and "^" in str(info.value)


def test_operator_index():
    """`operator.index(n)` written by the user: the int itself, a gradient
    with respect to `n` refused, a float raising TypeError; the method
    `a.reshape(-1)` of a local beside it is still a method call."""
    np.testing.assert_allclose(s2s_ad.grad(src.indexed_count)(X, 3), 6.0 * X)
    with pytest.raises(s2s_ad.SourceError, match="used as an integer .`operator.index`"):
        s2s_ad.grad(src.indexed_count, wrt=1)(X, 3)
    with pytest.raises(TypeError, match="must be an int"):
        s2s_ad.grad(src.indexed_count)(X, 3.0)


X3 = X[:3]
POSITIONS = [  # (name, function, arguments): the loop in a method, a closure, a branch
    ("method", src.Model(0.7).loss, [X3, 5]),
    ("closure", src.make_loss(np.array([0.1, 0.2, 0.3])), [X3, 4]),
    ("branch taken", src.in_branch, [np.abs(X3) + 0.1, 5]),
    ("branch not taken", src.in_branch, [-np.abs(X3) - 0.1, 5]),
]


@pytest.mark.parametrize("name, fn, args", POSITIONS, ids=[p[0] for p in POSITIONS])
def test_positions(name, fn, args):
    g = s2s_ad.grad(fn)
    np.testing.assert_allclose(g(*args), fd_gradient(fn, args, 0), rtol=1e-6, atol=1e-8)
    if name != "branch not taken":
        assert "loop_sum" in s2s_ad.source_of(g)


def test_structures_as_parameters():
    """A dataclass and a dict parameter read in the loop: the gradient has
    their structure, each leaf against central differences."""
    h = 1e-6
    g = s2s_ad.grad(src.with_params)(src.Params(X3, 0.3), 5)
    want_w = fd_gradient(lambda w: src.with_params(src.Params(w, 0.3), 5), [X3], 0)
    want_b = (src.with_params(src.Params(X3, 0.3 + h), 5)
              - src.with_params(src.Params(X3, 0.3 - h), 5)) / (2 * h)
    np.testing.assert_allclose(g.w, want_w, rtol=1e-6, atol=1e-8)
    assert abs(g.b - want_b) <= 1e-6 * (1 + abs(want_b))
    g = s2s_ad.grad(src.dict_params)({"w": X3, "b": 0.4}, 4)
    want_w = fd_gradient(lambda w: src.dict_params({"w": w, "b": 0.4}, 4), [X3], 0)
    want_b = (src.dict_params({"w": X3, "b": 0.4 + h}, 4)
              - src.dict_params({"w": X3, "b": 0.4 - h}, 4)) / (2 * h)
    np.testing.assert_allclose(g["w"], want_w, rtol=1e-6, atol=1e-8)
    assert abs(g["b"] - want_b) <= 1e-6 * (1 + abs(want_b))


def test_hvp_and_jacrev_of_grad():
    g = s2s_ad.grad(src.fit)
    v, h = RNG.normal(size=5), 1e-6
    along = (g(X + h * v, 7) - g(X - h * v, 7)) / (2 * h)
    np.testing.assert_allclose(s2s_ad.hvp(src.fit)(X, 7, v), along, rtol=1e-5, atol=1e-7)
    jac = s2s_ad.jacrev(g)(X, 7)
    want = np.array([(g(X + h * e, 7) - g(X - h * e, 7)) / (2 * h) for e in np.eye(5)]).T
    np.testing.assert_allclose(jac, want, rtol=1e-5, atol=1e-6)


def test_file_with_index_adjoints_differentiated_again(tmp_path):
    """The CLI's gradient file of a loop writing into its array and taking a
    cumulative sum calls zeroed, gather and cumsum_adjoint, which s2s-ad now
    reads back as the operations they compute: jvp of the file's gradient
    against central differences of it."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = tmp_path / "grad_writes_again.py"
    subprocess.run([sys.executable, "-m", "s2s_ad", "grad",
                    "tests/loop_batching_src.py:writes_and_cumsum", "--wrt", "x,s", "-o",
                    str(out)], check=True, cwd=here)
    text = out.read_text()
    assert all(f"def {h}(" in text for h in ("zeroed", "gather", "cumsum_adjoint"))
    sys.path.insert(0, str(tmp_path))
    try:
        import grad_writes_again as mod
    finally:
        sys.path.remove(str(tmp_path))
    g = mod.grad_writes_and_cumsum
    v, h = RNG.normal(size=5), 1e-5
    _, tangent = s2s_ad.jvp(g, wrt=0)(X, 0.3, 4, dx=v)
    up, down = g(X + h * v, 0.3, 4), g(X - h * v, 0.3, 4)
    for t, a, b in zip(tangent, up, down):
        np.testing.assert_allclose(t, (a - b) / (2 * h), rtol=1e-5, atol=1e-7)
    _, tangent = s2s_ad.jvp(g, wrt=1)(X, 0.3, 4, ds=1.0)
    up, down = g(X, 0.3 + h, 4), g(X, 0.3 - h, 4)
    for t, a, b in zip(tangent, up, down):
        np.testing.assert_allclose(t, (a - b) / (2 * h), rtol=1e-5, atol=1e-7)


A = RNG.uniform(-1.0, 1.0, size=(4, 3))
CAMS, PTS, WEIGHTS = RNG.uniform(-1, 1, (6, 3)), RNG.uniform(-1, 1, (6, 3)), RNG.uniform(0.5, 1, 6)
OBS = np.array([[0, 1], [2, 3], [1, 1], [5, 0], [2, 4], [0, 5], [3, 2]])
ZEROED = CAMS.copy()
ZEROED[[1, 3]] = 0.0  # observations 2 and 6 (cameras 1 and 3) take the branch's other arm
MIXED = np.array([[0.5, 0.3, -0.2], [0.7, -0.4, 0.1], [-0.6, 0.2, 0.9], [0.2, 0.8, -0.3]])
MAPPED = [  # (function, arguments, wrt, computed at once)
    (src.mapped, [X, 0.7, 5], [0, 1], True),
    (src.differences, [X, 5], [0], True),
    (src.rows_of_matrix, [A, A[0]], [0, 1], True),
    (src.per_observation, [CAMS, PTS, WEIGHTS], [0, 1, 2], True),
    (src.same_row_each_time, [X, W], [0, 1], True),
    (src.rotated_observations, [CAMS, PTS, OBS], [0, 1], True),
    (src.rotated_observations, [ZEROED, PTS, OBS], [0, 1], True),
    (src.rotated_observations, [CAMS * 0.0, PTS, OBS], [0, 1], True),
    (src.early_return, [X, W, 5], [0, 1], True),
    (src.nested_branches, [MIXED, ], [0], True),
    (src.same_test_for_all, [X, 4, True], [0], True),
    (src.same_test_for_all, [X, 4, False], [0], True),
    (src.arms_of_two_shapes, [np.abs(X) + 0.1, 4, 1.0], [0], True),
    (src.arms_of_two_shapes, [-np.abs(X) - 0.1, 4, 1.0], [0], True),
    (src.dots, [A, A.T @ A[:, :2], A[0]], [0, 1, 2], True),
    (src.index_from_the_counter, [X[:3], A, 2], [0, 1], False),
    (src.posed_bones, [RNG.uniform(-1, 1, (6, 3)), RNG.uniform(-1, 1, (5, 4, 4))], [0, 1], True),
    (src.matrix_products, [A, RNG.uniform(-1, 1, (3, 3)), A[1]], [0, 1, 2], True),
    (src.squares_of_matrices, [RNG.uniform(-1, 1, (2, 2, 2))], [0], True),
    (src.branch_in_the_body, [np.abs(X) + 0.1, W, 4], [0, 1], True),
    (src.fancy_rows, [A, A[0], np.array([[0, 2], [1, 1], [3, 2]])], [0, 1], True),
    (src.shifted_index, [A, np.array([[0, 1], [2, 0], [1, 1]]), X[:3]], [0, 2], True),
    (src.parity, [X, 5], [0], True),
    (src.clipped, [A, 0.9], [0, 1], True),
    (src.negative_index, [A, np.array([-1, 2, -3, 0])], [0], True),
    (src.unpacks_a_helper, [MIXED], [0], True),
    (src.unpacks_a_row, [A], [0], False),
    (src.writes_in_each_arm, [MIXED], [0], False),  # (arrays written in arms both run:
    (src.writes_in_each_arm, [np.abs(MIXED)], [0], False),  # the loop, as written)
    (src.branch_reads_the_last_iteration, [X, 4], [0], False),
    (src.branch_updates_an_accumulator, [X, 4], [0], False),
    (src.recurrence_kept, [X, 0.8], [0, 1], False),
    (src.shifted_write_kept, [X, 4], [0], False),
]


@pytest.mark.parametrize("case", MAPPED, ids=lambda c: c[0].__name__)
def test_rows_written_and_read_at_the_index(case):
    fn, args, wrt, at_once = case
    g = s2s_ad.grad(fn, wrt=wrt)
    got = g(*args)
    for i, gi in zip(wrt, got):
        np.testing.assert_allclose(gi, fd_gradient(fn, args, i), rtol=1e-6, atol=1e-8)
    assert ("loop_sum" in s2s_ad.source_of(g)) == at_once
    value, _ = s2s_ad.value_and_grad(fn, wrt=wrt)(*args)
    np.testing.assert_allclose(value, fn(*args), rtol=1e-13, atol=1e-13)
    _assert_jvp(fn, args, wrt[0])


def test_read_past_the_end_raises_as_the_loop_does():
    with pytest.raises(IndexError):
        src.past_the_end(X, 5)
    with pytest.raises(IndexError):
        s2s_ad.grad(src.past_the_end)(X, 5)
    np.testing.assert_allclose(s2s_ad.grad(src.past_the_end)(X, 4),
                               fd_gradient(src.past_the_end, [X, 4], 0), rtol=1e-6, atol=1e-8)


def test_write_past_the_end_raises_as_the_loop_does():
    """out has 2 rows; writing rows 0..2 raises IndexError in the loop (row 2),
    and in the rows written at once (NumPy would broadcast a lone row into an
    empty slice without a word: the check is there for that)."""
    with pytest.raises(IndexError):
        src.write_past_the_end(X, 3)
    with pytest.raises(IndexError):
        s2s_ad.grad(src.write_past_the_end)(X, 3)
    np.testing.assert_allclose(s2s_ad.grad(src.write_past_the_end)(X, 2),
                               fd_gradient(src.write_past_the_end, [X, 2], 0),
                               rtol=1e-6, atol=1e-8)
    assert "loop_sum" in s2s_ad.source_of(s2s_ad.grad(src.write_past_the_end))


def test_a_list_read_at_the_index_keeps_the_loop():
    """A helper reading a list its caller passes at the loop's index: the
    function computing the loop at once cannot take the list, so the helper
    is lowered again as written (and grad, jvp agree with differences)."""
    g = s2s_ad.grad(src.passes_a_list, wrt=[0, 1])(X, W)
    for i, gi in zip([0, 1], g):
        np.testing.assert_allclose(gi, fd_gradient(src.passes_a_list, [X, W], i),
                                   rtol=1e-6, atol=1e-8)
    v, h = RNG.normal(size=5), 1e-6
    _, tangent = s2s_ad.jvp(src.passes_a_list, wrt=0)(X, W, dx=v)
    want = (src.passes_a_list(X + h * v, W) - src.passes_a_list(X - h * v, W)) / (2 * h)
    np.testing.assert_allclose(tangent, want, rtol=1e-6, atol=1e-8)


def test_map_loop_in_a_helper_of_a_helper_everywhere(tmp_path):
    """The per-observation loop reached through two helpers, inside a loop
    and both arms of a branch: grad and vjp against central differences, and
    the CLI's file, imported without s2s_ad in a fresh interpreter, gives the
    same gradient."""
    fn, args = src.through_two_helpers, [CAMS, PTS, WEIGHTS]
    want = [fd_gradient(fn, args, i) for i in range(3)]
    g = s2s_ad.grad(fn, wrt=[0, 1, 2])
    for got, ref in zip(g(*args), want):
        np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-8)
    assert "loop_sum" in s2s_ad.source_of(g)
    for got, ref in zip(s2s_ad.vjp(fn, *args)[1](1.0), want):
        np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-8)
    _assert_cli_file(tmp_path, "through_two_helpers", "cams,pts,weights", args, want)


def _assert_cli_file(tmp_path, name: str, wrt: str, args: list, want: list) -> str:
    """``s2s-ad grad tests/loop_batching_src.py:name -o FILE``, FILE imported
    without s2s_ad in a fresh interpreter, gives the gradients ``want``; the
    file's text."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = tmp_path / f"grad_{name}_file.py"
    subprocess.run([sys.executable, "-m", "s2s_ad", "grad", f"tests/loop_batching_src.py:{name}",
                    "--wrt", wrt, "-o", str(out)], check=True, cwd=here)
    for k, a in enumerate(args):
        np.save(tmp_path / f"a{k}.npy", a)
    code = (f"import sys, numpy as np; sys.modules['s2s_ad'] = None; import {out.stem} as m; "
            f"r = m.grad_{name}(*[np.load(f'a{{k}}.npy') for k in range({len(args)})]); "
            "[np.save(f'g{k}.npy', v) for k, v in enumerate(r)]")
    subprocess.run([sys.executable, "-c", code], cwd=tmp_path, check=True)
    for k, ref in enumerate(want):
        np.testing.assert_allclose(np.load(tmp_path / f"g{k}.npy"), ref, rtol=1e-6, atol=1e-8)
    return out.read_text()


def test_arms_of_two_shapes_where_iterations_take_both():
    """A branch whose arms give a vector and a number: where every iteration
    takes one arm the loop is computed at once; where iterations take both
    there is no array of them, and the generated code runs the loop as
    written (its gradient, vjp and jvp against central differences)."""
    x = np.array([0.5, -0.2, 0.3])
    args = [x, 4, -1.0]
    g = s2s_ad.grad(src.arms_of_two_shapes)
    np.testing.assert_allclose(g(*args), fd_gradient(src.arms_of_two_shapes, args, 0),
                               rtol=1e-6, atol=1e-8)
    text = s2s_ad.source_of(g)
    assert "loop_sum" in text and "fits" in text and "for i in range(" in text
    value, pull = s2s_ad.vjp(src.arms_of_two_shapes, *args)
    assert value == pytest.approx(src.arms_of_two_shapes(*args), rel=1e-13)
    np.testing.assert_allclose(pull(1.0)[0], fd_gradient(src.arms_of_two_shapes, args, 0),
                               rtol=1e-6, atol=1e-8)
    _assert_jvp(src.arms_of_two_shapes, args, 0)


def test_dot_of_a_number_raises_naming_the_line():
    """np.dot of a number and a vector in each iteration is not one of the
    contractions the loop computed at once takes: ValueError, naming it."""
    with pytest.raises(ValueError, match=r"np.dot\(A\[i, 0\], v\)` \(line \d+\).*keep the loop"):
        s2s_ad.grad(src.dot_of_a_number)(A, A[0])


def test_branch_takes_only_the_arm_of_each_iteration():
    """No iteration's values reach the arm its test rules out: log and sqrt
    of negative numbers would warn (and give NaN adjoints) if they did."""
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        g = s2s_ad.grad(src.nested_branches)(MIXED)
    assert np.all(np.isfinite(g))


def test_matrix_product_with_a_stack_raises_naming_the_line():
    """Each iteration's vector times a stack of matrices the same in every
    iteration: the stack's axes would meet the iterations'; ValueError."""
    stack = RNG.uniform(-1, 1, (2, 3, 3))
    assert np.isfinite(src.stacked_matrix_product(A, stack))
    with pytest.raises(ValueError, match=r"`A\[i\] @ S` \(line \d+\).*keep the loop"):
        s2s_ad.grad(src.stacked_matrix_product)(A, stack)


def test_branching_loop_through_the_cli_file(tmp_path):
    """The per-observation loop whose helper branches on each observation
    (some taking each arm) and reads cameras by an index array: the CLI's
    file, imported without s2s_ad in a fresh interpreter, gives the
    gradient of central differences."""
    fn, args = src.rotated_observations, [ZEROED, PTS, OBS]
    want = [fd_gradient(fn, args, i) for i in range(2)]
    text = _assert_cli_file(tmp_path, "rotated_observations", "cams,pts", args, want)
    assert "taken" in text


def test_branching_loop_in_a_helper_of_a_helper_everywhere(tmp_path):
    """The per-observation loop whose helper branches (some observations
    taking each arm) and reads cameras by an index array, reached through
    two helpers inside a loop and both arms of a branch: grad and vjp
    against central differences, and the CLI's file in a fresh interpreter."""
    fn, args = src.rotations_everywhere, [ZEROED, PTS, OBS]
    want = [fd_gradient(fn, args, i) for i in range(2)]
    g = s2s_ad.grad(fn, wrt=[0, 1])
    for got, ref in zip(g(*args), want):
        np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-8)
    assert "taken" in s2s_ad.source_of(g)
    for got, ref in zip(s2s_ad.vjp(fn, *args)[1](1.0)[:2], want):
        np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-8)
    _assert_cli_file(tmp_path, "rotations_everywhere", "cams,pts", args, want)
