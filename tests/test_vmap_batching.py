"""``jax.vmap`` vectorised (s2s_ad/frontend/jax_batching.py): each batching
rule and each operation that keeps the loop over rows (tests/vmap_src.py).
Every gradient is compared with central differences (float64) of the
function itself, run by JAX where it is installed and by
tests/jax_standin.py (a loop over rows) otherwise, and with the gradient of
s2s-ad's own loop over rows; in helpers, a helper of a helper, a loop, a
branch, through ``s2s_ad.vjp`` and ``s2s_ad.jvp``, and through the CLI's
``grad -o`` file imported in a fresh interpreter."""

import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import s2s_ad
import vmap_src as m
from array_oracle import fd_gradient
# the reference: f run on JAX arrays (or the stand-in's), as tests/test_jax_numpy.py runs it
from test_jax_numpy import assert_matches_fd, original
from s2s_ad.frontend import jax_batching

HERE = os.path.dirname(__file__)
ROOT = os.path.dirname(HERE)
rng = np.random.default_rng(11)


def normal(*shape):
    return rng.normal(size=shape)


CASES = {
    "elementwise": ([normal(3), normal(4)], [0, 1]),
    "mixed_ranks": ([normal(5), normal(5, 4)], [0, 1]),
    "reductions": ([normal(4, 3, 5)], [0]),
    "cumulative": ([normal(3, 2, 4)], [0]),
    "filled": ([normal(5), np.linspace(-1.0, 1.0, 6)], [0]),
    "updates": ([normal(4, 2, 4), normal(4)], [0, 1]),
    "indexing": ([normal(3, 4, 4)], [0]),
    "rolled": ([normal(3, 3, 4), normal(3)], [0, 1]),
    "contracted": ([normal(3, 3, 4), normal(3, 3)], [0, 1]),
    "helpers": ([normal(4, 3), 0.7], [0, 1]),
    "like_and_copy": ([normal(3, 4)], [0]),
    "outputs": ([normal(3, 4)], [0]),
    "ufunc_itself": ([normal(3, 4)], [0]),
    "ode_like": ([normal(5), normal(5)], [0, 1]),
    "row_views": ([normal(3, 4)], [0]),
    "matmul_by_matrix": ([normal(3, 3)], [0]),
    "keeps_ellipsis": ([normal(3, 2, 4)], [0]),
    "gather_by_row_index": ([normal(3, 4), normal(2, 4)], [0, 1]),
    "branch_on_shape": ([normal(3, 4)], [0]),
    "keeps_loop": ([normal(3, 4)], [0]),
    "keeps_keepdims": ([normal(3, 4)], [0]),
    "keeps_transpose": ([normal(2, 3, 4)], [0]),
    "dot_by_matrix": ([normal(3, 3)], [0]),
    "in_helper": ([normal(4, 3, 5), normal(3), normal(4)], [0, 1, 2]),
    "helper_of_helper": ([normal(4, 3, 5), normal(3), normal(4)], [0, 1, 2]),
    "in_loop": ([normal(3, 3, 4), 2], [0]),
    "in_branch": ([normal(3, 4, 4), 1], [0]),
}
KEPT = {name for name in CASES if name.startswith("keeps_")}
"""The mapped bodies with an operation that has no batching rule: the loop over rows."""


def loop_gradient(f, wrt, args, monkeypatch):
    """The gradient with every ``jax.vmap`` read as the loop over rows."""
    with monkeypatch.context() as patch:
        patch.setattr(jax_batching, "vectorise", lambda *a, **k: None)
        s2s_ad.clear_cache()
        try:
            return s2s_ad.value_and_grad(f, wrt=tuple(wrt))(*args)
        finally:
            s2s_ad.clear_cache()


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_matches_finite_differences_and_the_loop(name, monkeypatch):
    args, wrt = CASES[name]
    f = getattr(m, name)
    before = [np.copy(a) for a in args]
    value, got = s2s_ad.value_and_grad(f, wrt=tuple(wrt))(*args)
    for a, b in zip(args, before):
        np.testing.assert_array_equal(a, b)
    assert_matches_fd(f, args, wrt, got)
    np.testing.assert_allclose(value, float(original(f)(*args)), rtol=1e-12, atol=1e-12)
    loop_value, loop = loop_gradient(f, wrt, args, monkeypatch)
    np.testing.assert_allclose(value, loop_value, rtol=1e-13, atol=1e-13)
    for g, h in zip(got, loop):
        assert np.shape(g) == np.shape(h) and np.result_type(g) == np.result_type(h)
        np.testing.assert_allclose(g, h, rtol=1e-11, atol=1e-13)


@pytest.mark.parametrize("name", sorted(n for n in CASES if not n.startswith(("in_", "helper_"))))
def test_vectorised_or_loop_kept(name):
    """Which form each body gets: one pass over arrays with the batch axis
    last, or the loop over rows (its buffer ``rows_rows``) where an operation
    has no batching rule."""
    args, wrt = CASES[name]
    text = s2s_ad.gradient_source(getattr(m, name), wrt=wrt, arrays=[
        p for p, a in zip(getattr(m, name).__code__.co_varnames, args)
        if isinstance(a, np.ndarray)])
    code = "\n".join(line.split("#")[0] for line in text.split(f"def grad_{name}")[1].splitlines())
    looped = re.search(r"\brows_rows\w*\[", code) is not None
    assert looped == (name in KEPT), name
    assert ("moved(" in code) == (name not in KEPT), name


def test_rows_of_an_argument_are_copied():
    text = s2s_ad.gradient_source(m.row_views, wrt=0, arrays=["t"])
    code = "\n".join(line.split("#")[0] for line in text.split("def grad_row_views")[1].splitlines())
    assert len(re.findall(r"\bjnp\.copy\(", code)) == 2, code


def test_other_sizes_one_module():
    """One generated module serves other numbers of rows and other row shapes."""
    f = s2s_ad.grad(m.reductions, wrt=0)
    for shape in [(1, 3, 5), (6, 4, 2), (2, 3, 3)]:
        t = rng.normal(size=shape)
        assert_matches_fd(m.reductions, [t], [0], [f(t)])
    g = s2s_ad.grad(m.filled, wrt=0)
    for m_, n in [(2, 3), (7, 9)]:
        args = [rng.normal(size=m_), np.linspace(-1.0, 1.0, n)]
        assert_matches_fd(m.filled, args, [0], [g(*args)])


def test_float32_rows_stay_float32():
    t = rng.normal(size=(3, 4)).astype(np.float32)
    got = s2s_ad.grad(m.like_and_copy, wrt=0)(t)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, fd_gradient(original(m.like_and_copy), [
        t.astype(np.float64)], 0), rtol=2e-3, atol=1e-3)


@pytest.mark.parametrize("name", ["filled", "rolled", "helpers", "helper_of_helper"])
def test_vjp_matches_finite_differences(name):
    args, wrt = CASES[name]
    f = getattr(m, name)
    value, vjp_fn = s2s_ad.vjp(f, *args)
    cotangents = vjp_fn(1.5)
    np.testing.assert_allclose(value, float(original(f)(*args)), rtol=1e-12)
    assert_matches_fd(f, args, wrt, [cotangents[i] / 1.5 for i in wrt])


@pytest.mark.parametrize("name", ["elementwise", "rolled", "ode_like"])
def test_jvp_matches_finite_differences(name):
    args, wrt = CASES[name]
    f = getattr(m, name)
    direction = rng.normal(size=np.shape(args[0]))
    first = f.__code__.co_varnames[0]
    value, tangent = s2s_ad.jvp(f, wrt=0)(*args, **{f"d{first}": direction})
    want = np.sum(fd_gradient(original(f), args, 0) * direction)
    np.testing.assert_allclose(tangent, want, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(value, float(original(f)(*args)), rtol=1e-12)


def test_grad_o_file_in_a_fresh_interpreter(tmp_path):
    out = tmp_path / "grad_vmap_helpers.py"
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "grad",
                           "tests/vmap_src.py:helper_of_helper", "--wrt", "t,a,b",
                           "--array", "t,a,b", "-o", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    text = out.read_text()
    assert "moved(" in text and not re.search(
        r"\bjax\b", "".join(line.split("#")[0] for line in text.splitlines()))
    args = CASES["helper_of_helper"][0]
    script = textwrap.dedent(f"""
        import sys
        import numpy as np
        sys.path[:0] = [{HERE!r}, {str(tmp_path)!r}]
        import grad_vmap_helpers as g
        args = [np.array(a) for a in {[a.tolist() for a in args]!r}]
        got = g.grad_helper_of_helper(*args)
        assert "jax" not in sys.modules, "the generated module imported JAX"
        from array_oracle import fd_gradient
        import vmap_src as m
        for i in range(3):
            want = fd_gradient(lambda *v: m.helper_of_helper(*[m.jnp.asarray(u) for u in v]),
                               args, i)
            np.testing.assert_allclose(got[i], want, rtol=1e-5, atol=1e-7)
        print("ok")
    """)
    run = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0 and "ok" in run.stdout, run.stderr


def test_gradient_file_read_back_and_differentiated(tmp_path):
    """The gradient module of a vectorised body (``moved``, the module's
    moveaxis, in its forward pass and as the adjoint) is differentiated again
    when read back from its file: ``moved`` is s2s-ad's own primitive."""
    out = tmp_path / "grad_ode_like.py"
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "grad", "tests/vmap_src.py:ode_like",
                           "--wrt", "x", "--array", "x,y", "-o", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert "moved(" in out.read_text()
    sys.path.insert(0, str(tmp_path))
    try:
        import grad_ode_like

        def probe(x, y, c):
            return np.sum(grad_ode_like.grad_ode_like(x, y) * c)

        source = textwrap.dedent('''
            import numpy as np
            from grad_ode_like import grad_ode_like


            def probe(x, y, c):
                return np.sum(grad_ode_like(x, y) * c)
            ''')
        (tmp_path / "probe_ode_like.py").write_text(source)
        import probe_ode_like
        x, y, c = normal(5), normal(5), normal(5)
        for i in (0, 1):
            got = s2s_ad.grad(probe_ode_like.probe, wrt=i)(x, y, c)
            np.testing.assert_allclose(got, fd_gradient(probe, [x, y, c], i), rtol=1e-6,
                                       atol=1e-8)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("grad_ode_like", None)
        sys.modules.pop("probe_ode_like", None)


def test_hessian_vector_product():
    """Second order through the vectorised body: ``s2s_ad.hvp`` against
    central differences of central differences of the function (quadratic in
    ``x``: both exact up to rounding)."""
    x, y = normal(5), normal(5)
    v = normal(5)
    got = s2s_ad.hvp(m.ode_like, wrt="x")(x, y, v)
    h = 1e-3
    f = original(m.ode_like)
    want = (fd_gradient(f, [x + h * v, y], 0) - fd_gradient(f, [x - h * v, y], 0)) / (2 * h)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


SHORT_ROWS = {
    "scalar_row_indexed": (IndexError, "`x[0]`", "return x[0]"),
    "scalar_row_len": (TypeError, "`len(x)`", "return x * len(x)"),
    "scalar_row_written": (IndexError, "`p[0]`", "p.at[0]"),
    "scalar_row_in_helper": (IndexError, "`x[0]`", "return x[0]"),
}
"""Bodies reading a row with more indices than it has axes (a 1-d mapped
array's rows are 0-d): JAX raises; the vectorised body (batch axis last)
would read other rows instead, so the generated code checks the row's rank
where it runs and raises JAX's exception, naming the line."""


@pytest.mark.parametrize("name", sorted(SHORT_ROWS))
def test_a_row_read_with_too_many_indices_raises_as_jax_does(name):
    exc, what, line_text = SHORT_ROWS[name]
    f = getattr(m, name)
    args = [normal(4)] + ([2] if name == "scalar_row_in_helper" else [])
    with pytest.raises(exc):
        original(f)(*args)  # JAX itself (or the stand-in's loop over rows)
    for run in (lambda: s2s_ad.grad(f, wrt=0)(*args), lambda: s2s_ad.vjp(f, *args),
                lambda: s2s_ad.jvp(f, wrt=0)(*args, dt=np.ones(4))):
        with pytest.raises(exc) as info:
            run()
        import inspect
        lines, first = inspect.getsourcelines(getattr(m, name if name != "scalar_row_in_helper"
                                                      else "scalar_row_indexed"))
        line = first + next(k for k, t in enumerate(lines) if line_text in t)
        assert what in str(info.value) and f"(line {line})" in str(info.value), str(info.value)
    text = s2s_ad.gradient_source(f, wrt=0, arrays=["t"])
    assert "moved(" in text, "the body is vectorised (the check is for that form)"


def test_rows_with_the_axes_read_pass_the_check():
    """The same bodies over a 2-d mapped array (rows of one axis): values and
    gradients against central differences; the checks pass."""
    for name in ("scalar_row_indexed", "scalar_row_len", "scalar_row_written"):
        f = getattr(m, name)
        args = [normal(4, 3)]
        value, got = s2s_ad.value_and_grad(f, wrt=(0,))(*args)
        np.testing.assert_allclose(value, float(original(f)(*args)), rtol=1e-12)
        assert_matches_fd(f, args, [0], got)
