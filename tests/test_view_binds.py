"""A piece of an array written in place bound to a name, in functions with
loops or branches (s2s_ad/frontend/view_binds.py, tests/view_binds_src.py):
accepted where no write into the array comes between the binding and a read
(the value and the gradient compared with running the function and with
central differences; through ``vjp``, ``jvp``, a helper, a helper of a
helper, a loop, a branch, and the CLI's ``grad -o`` file in a fresh
interpreter), refused, located, where one may (each such function computes
another value in NumPy than with the row copied at its binding: the view's
semantics matter there)."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import s2s_ad
import view_binds_src as src
from array_oracle import fd_gradient
from s2s_ad.errors import SourceError

HERE = os.path.dirname(__file__)
ROOT = os.path.dirname(HERE)
rng = np.random.default_rng(18)


def lstm_args():
    return [rng.normal(size=(4, 12)), rng.normal(size=(3, 3)), rng.normal(size=(4, 3)),
            rng.normal(size=3)]


ACCEPTED = {
    "step_loss": (lstm_args, [0, 1, 2, 3]),
    "sequence_loss": (lambda: lstm_args()[:3] + [rng.normal(size=(4, 3))], [0, 1, 2]),
    "step_in_branch": (lambda: lstm_args() + [1], [0, 1, 2, 3]),
    "bound_after_write": (lambda: [rng.normal(size=(4, 3)), 4], [0]),
    "while_rows": (lambda: [rng.normal(size=(4, 3)), rng.normal(size=3)], [0, 1]),
    "branch_rows": (lambda: [rng.normal(size=(3, 2)), 0.5], [0]),
    "written_after_last_read": (lambda: [rng.normal(size=(3, 2))], [0]),
    "tuple_and_walrus": (lambda: [rng.normal(size=(4, 3))], [0]),
    "swapped_before_writes": (lambda: [rng.normal(size=(3, 2))], [0]),
}

REFUSED = ["same_row_rewritten", "rewritten_next_iteration", "rewritten_in_while",
           "rewritten_in_branch", "read_by_helper_after_write", "kept_by_helper",
           "tuple_bound", "chain_bound", "conditional_bound", "walrus_bound", "second_name",
           "row_of_second_name", "listed", "read_by_nested_function", "rows_iterated",
           "swapped_view", "moved_view"]


def run(f, args):
    """The function itself, on copies of its arrays."""
    return f(*[np.copy(a) if isinstance(a, np.ndarray) else a for a in args])


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_accepted_matches_numpy_and_central_differences(name):
    make, wrt = ACCEPTED[name]
    args = make()
    f = getattr(src, name)
    value, grads = s2s_ad.value_and_grad(f, wrt=tuple(wrt))(*args)
    np.testing.assert_allclose(value, run(f, args), rtol=1e-12)
    for i, g in zip(wrt, grads):
        np.testing.assert_allclose(g, fd_gradient(lambda *a: run(f, a), args, i), rtol=1e-5,
                                   atol=1e-7, err_msg=f"{name}: argument {i}")


def test_the_other_arm():
    args = [rng.normal(size=(3, 2)), -0.5]
    f = src.branch_rows
    g = s2s_ad.grad(f, wrt=0)(*args)
    np.testing.assert_allclose(g, fd_gradient(lambda *a: run(f, a), args, 0), rtol=1e-5,
                               atol=1e-7)


def test_vjp_of_the_step():
    """``vjp`` of the step itself, whose results are the prediction and the
    state with its rows written (the buffer returned: a copy)."""
    args = lstm_args()
    (pred, new), back = s2s_ad.vjp(src.stacked_step, *args)
    want_pred, want_new = run(src.stacked_step, args)
    np.testing.assert_allclose(pred, want_pred, rtol=1e-12)
    np.testing.assert_allclose(new, want_new, rtol=1e-12)
    u, v = rng.normal(size=pred.shape), rng.normal(size=new.shape)
    got = back((u, v))

    def along(*a):
        p, s = run(src.stacked_step, a)
        return np.sum(u * p) + np.sum(v * s)
    for i in range(4):
        np.testing.assert_allclose(got[i], fd_gradient(along, args, i), rtol=1e-5, atol=1e-7)


def test_jvp_of_the_step():
    args = lstm_args()
    direction = rng.normal(size=args[0].shape)
    value, tangent = s2s_ad.jvp(src.step_loss, wrt=0)(*args, dweights=direction)
    np.testing.assert_allclose(value, run(src.step_loss, args), rtol=1e-12)
    want = np.sum(fd_gradient(lambda *a: run(src.step_loss, a), args, 0) * direction)
    np.testing.assert_allclose(tangent, want, rtol=1e-5, atol=1e-7)


def test_the_row_is_copied_only_where_it_outlives_its_read():
    """The forward pass copies the row the reverse sweep reads after the
    loop (``own(new[i])``: carried out of it), since a view would change with
    a later write; ``written_after_last_read`` checks the gradient of such a
    case against central differences."""
    text = s2s_ad.gradient_source(src.step_loss, wrt=0)
    assert "= own(new[i])" in text, text


@pytest.mark.parametrize("name", REFUSED)
def test_a_write_between_binding_and_read_is_refused_located(name):
    f = getattr(src, name)
    with pytest.raises(SourceError) as info:
        s2s_ad.grad(f, wrt=0)
    text = str(info.value)
    head, shown, caret = text.split("\n")[:3]
    assert "view_binds_src.py:" in head and ": error: " in head and "^" in caret, text
    line = int(head.split("view_binds_src.py:")[1].split(":")[0])
    import linecache
    assert shown.strip() == linecache.getline(src.__file__, line).strip()


@pytest.mark.parametrize("name", ["same_row_rewritten", "rewritten_next_iteration",
                                  "rewritten_in_branch", "read_by_helper_after_write",
                                  "tuple_bound", "chain_bound", "walrus_bound"])
def test_the_refused_ones_differ_from_a_copy_at_the_binding(name):
    """The view's semantics matter in each: NumPy's value differs from the
    function's value with the row copied where it is bound (the value the SSA
    form would compute), so accepting it would give a wrong gradient."""
    import inspect
    import re
    from array_oracle import make_function
    f = getattr(src, name)
    text = textwrap.dedent(inspect.getsource(f))
    copied = re.sub(r"(\b[rs]\b\s*(?:,\s*\b[rs]\b\s*)?=\s*)(y\[[^\]]*\](?:\[[^\]]*\])?)(, )?",
                    lambda m: m.group(1) + "np.copy(" + m.group(2) + ")" + (m.group(3) or ""),
                    text)
    copied = copied.replace("(r := y[0])", "(r := np.copy(y[0]))")
    assert copied != text
    g = make_function(copied, name, env={"np": np, "_mix": src._mix})
    args = [rng.normal(size=(3, 3))] + ([0.5] if name == "rewritten_in_branch" else [])
    assert not np.allclose(run(f, args), run(g, args))


def test_message_names_the_binding_the_write_and_the_rewrite():
    with pytest.raises(SourceError) as info:
        s2s_ad.grad(src.same_row_rewritten)
    text = str(info.value)
    assert "`r = y[0]`" in text and "a view of `y`" in text and "np.copy" in text, text
    import inspect
    lines, first = inspect.getsourcelines(src.same_row_rewritten)
    write = first + next(k for k, t in enumerate(lines) if "y[0] = r * a[k]" in t)
    assert f"line {write} may write into `y`" in text, text


def test_grad_o_file_in_a_fresh_interpreter(tmp_path):
    out = tmp_path / "grad_sequence_loss.py"
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "grad",
                           "tests/view_binds_src.py:sequence_loss", "--wrt", "weights,extra,state",
                           "-o", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    args = lstm_args()[:3] + [rng.normal(size=(4, 3))]
    script = textwrap.dedent(f"""
        import sys
        import numpy as np
        sys.path[:0] = [{HERE!r}, {str(tmp_path)!r}]
        import grad_sequence_loss as g
        args = [np.array(a) for a in {[a.tolist() for a in args]!r}]
        got = g.grad_sequence_loss(*args)
        assert "s2s_ad" not in sys.modules, "the generated module imported s2s_ad"
        from array_oracle import fd_gradient
        import view_binds_src as src
        for i in range(3):
            want = fd_gradient(lambda *a: src.sequence_loss(*[np.copy(x) for x in a]), args, i)
            np.testing.assert_allclose(got[i], want, rtol=1e-5, atol=1e-7)
        print("ok")
    """)
    run_ = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                          text=True, timeout=300)
    assert run_.returncode == 0 and "ok" in run_.stdout, run_.stderr


def test_gradient_module_read_back(tmp_path):
    """The gradient module of ``recurrence_from_copy`` binds rows of a buffer
    written in place (``t3 = y[t2]`` in its reverse loop); read back from its
    file, its ``vjp`` matches central differences of the module itself."""
    import importlib
    out = tmp_path / "grad_recurrence.py"
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "grad",
                           "tests/view_binds_src.py:recurrence_from_copy", "--wrt", "x",
                           "--array", "a,x", "-o", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "= y[t2]" in out.read_text()
    sys.path.insert(0, str(tmp_path))
    try:
        g = importlib.import_module("grad_recurrence").grad_recurrence_from_copy
    finally:
        sys.path.remove(str(tmp_path))
    a, x, u = rng.normal(size=(5, 2)), rng.normal(size=5), rng.normal(size=5)
    value, back = s2s_ad.vjp(g, a, x)
    np.testing.assert_allclose(value, g(np.copy(a), np.copy(x)), rtol=1e-12)
    got = back(u)
    for i, arg in enumerate([a, x]):
        want = fd_gradient(lambda *v: np.sum(u * g(*[np.copy(w) for w in v])), [a, x], i)
        np.testing.assert_allclose(got[i], want, rtol=1e-5, atol=1e-7)


def test_a_swapped_view_sees_the_writes():
    """In NumPy ``b = np.swapaxes(y, 0, 1)`` sees the loop's writes into ``y``
    (the function is 4 Σ a², not the 0 of the zeros ``b`` was bound to), so
    s2s-ad refuses it (above) instead of differentiating the zeros."""
    a = rng.normal(size=(3, 2))
    np.testing.assert_allclose(run(src.swapped_view, [a]), 4.0 * np.sum(a * a), rtol=1e-12)
    np.testing.assert_allclose(run(src.moved_view, [a]), 4.0 * np.sum(a * a), rtol=1e-12)
