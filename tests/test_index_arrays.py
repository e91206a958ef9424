"""Integer index arrays computed from ints (tests/index_arrays_src.py, and
the JAX-flavoured mixture of tests/jax_src.py): ``np.arange``, ``np.repeat``
by an array of counts (JAX's ``total_repeat_length``), ``np.concatenate`` of
a comprehension over ``range``, ``np.tril_indices``, and writes by them into
a fresh array. Each gradient is compared with central differences (float64)
of the function itself, at the top level, in a helper, a helper of a helper,
a loop, a branch, through ``s2s_ad.vjp`` and through the CLI's ``grad -o``
file imported in a fresh interpreter; what stays out is refused with its
location, or stopped where the code runs (a position written twice)."""

import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import index_arrays_src as m
import jax_src as j
import s2s_ad
from array_oracle import fd_gradient
from s2s_ad.errors import SourceError

HERE = os.path.dirname(__file__)
ROOT = os.path.dirname(HERE)
rng = np.random.default_rng(18)


def mixture_args(k, d, n):
    t = d * (d - 1) // 2
    return [rng.normal(size=k), rng.normal(size=(k, d)), 0.3 * rng.normal(size=(k, d)),
            rng.normal(size=(k, t)), rng.normal(size=(n, d)), d]


TESTED = {"index.expr", "index.is_int", "index.same_size", "index.distinct",
          "array.zeros_as", "array.ones_as", "array.full_as"}
"""The rules these tests exercise (tests/test_numpy_rules_table.py checks
every NumPy rule is tested somewhere)."""

CASES = {
    "mixture": (mixture_args(3, 4, 6), [0, 1, 2, 3]),
    "inline_triangle": ([rng.normal(size=(3, 6)), rng.normal(size=(4, 2)), 4], [0, 1]),
    "tril_write": ([rng.normal(size=10), 4], [0]),
    "shifted_read": ([rng.normal(size=5), 4], [0]),
    "helper_of_helper": (mixture_args(2, 3, 5), [0, 1, 2, 3]),
    "in_a_loop": ([rng.normal(size=(2, 3)), rng.normal(size=(3, 2)), 3], [0, 1]),
    "in_a_branch": ([rng.normal(size=(2, 3)), rng.normal(size=(3, 2)), 3], [0, 1]),
    "written_in_a_loop": ([rng.normal(size=(3, 6)), 4], [0]),
    "dtype_constructors": ([rng.normal(size=4)], [0]),
}


def assert_matches_fd(f, args, wrt, got, rtol=1e-5, atol=1e-7):
    for i, g in zip(wrt, got):
        assert np.shape(g) == np.shape(args[i])
        np.testing.assert_allclose(g, fd_gradient(f, args, i), rtol=rtol, atol=atol,
                                   err_msg=f"gradient with respect to argument {i}")


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_matches_finite_differences(name):
    args, wrt = CASES[name]
    f = getattr(m, name)
    assert_matches_fd(f, args, wrt, s2s_ad.grad(f, wrt=tuple(wrt))(*args))


def test_one_module_serves_every_size():
    """The index arrays are computed where the code runs, from ``d``."""
    g = s2s_ad.grad(m.mixture, wrt=(0, 1, 2, 3))
    for k, d, n in [(2, 2, 3), (3, 5, 4), (1, 6, 2)]:
        args = mixture_args(k, d, n)
        assert_matches_fd(m.mixture, args, [0, 1, 2, 3], g(*args))
    args, wrt = CASES["in_a_branch"]
    assert_matches_fd(m.in_a_branch, args[:2] + [2], wrt,
                      s2s_ad.grad(m.in_a_branch, wrt=tuple(wrt))(*args[:2], 2))


@pytest.mark.parametrize("name", ["mixture", "tril_write", "written_in_a_loop"])
def test_vjp_matches_finite_differences(name):
    args, wrt = CASES[name]
    f = getattr(m, name)
    value, vjp_fn = s2s_ad.vjp(f, *args)
    np.testing.assert_allclose(value, f(*args), rtol=1e-12)
    cotangents = vjp_fn(0.5)
    assert_matches_fd(f, args, wrt, [cotangents[i] / 0.5 for i in wrt])


def test_generated_code_computes_the_index_arrays_as_written():
    text = s2s_ad.gradient_source(m.inline_triangle, wrt=(0, 1))
    assert "np.concatenate([np.arange(_c0 + 1, d) for _c0 in range(d - 1)])" in text
    assert "np.repeat(np.arange(d - 1), np.arange(d - 1, 0, -1))" in text
    assert "dtype=np.result_type(lower)" in text
    assert "np.unique" in text  # the check that no element is written twice


def test_grad_o_file_in_a_fresh_interpreter(tmp_path):
    out = tmp_path / "grad_index_mixture.py"
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "grad",
                           "tests/index_arrays_src.py:helper_of_helper",
                           "--wrt", "alphas,means,logdiag,lower", "-o", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    args = mixture_args(3, 4, 5)
    script = textwrap.dedent(f"""
        import sys
        import numpy as np
        sys.path[:0] = [{HERE!r}, {str(tmp_path)!r}]
        import grad_index_mixture as g
        args = [np.array(a) for a in {[a.tolist() for a in args[:5]]!r}] + [{args[5]}]
        got = g.grad_helper_of_helper(*args)
        assert "s2s_ad" not in sys.modules
        from array_oracle import fd_gradient
        import index_arrays_src as m
        for i in range(4):
            np.testing.assert_allclose(got[i], fd_gradient(m.helper_of_helper, args, i),
                                       rtol=1e-5, atol=1e-7)
        print("ok")
    """)
    run = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0 and "ok" in run.stdout, run.stderr


# -- JAX-flavoured: keyword-only parameters, total_repeat_length, .at[:, rows, cols] ----

def jax_kwargs(k, d, n):
    t = d * (d - 1) // 2
    return dict(d=d, k=k, x=rng.normal(size=(n, d)), alphas=rng.normal(size=k),
                means=rng.normal(size=(k, d)), logdiag=0.3 * rng.normal(size=(k, d)),
                lower=rng.normal(size=(k, t)))


WRT = ("alphas", "means", "logdiag", "lower")


def keyword_fd(f, kwargs, name):
    """Central differences of ``f(**kwargs)`` in ``kwargs[name]``, run on
    JAX's arrays (or the stand-in's)."""
    def positional(v):
        given = {**kwargs, name: j.jnp.asarray(v)}
        return f(**{k: j.jnp.asarray(a) if isinstance(a, np.ndarray) else a
                    for k, a in given.items()})
    return fd_gradient(positional, [kwargs[name]], 0)


@pytest.mark.parametrize("name,extra", [("packed_mixture", {"gamma": 1.3, "m": 2}),
                                        ("packed_mixture_twice", {})])
def test_jax_packed_mixture(name, extra):
    f = getattr(j, name)
    g = s2s_ad.grad(f, wrt=WRT)
    for k, d, n in [(3, 4, 6), (2, 5, 3)]:
        kwargs = {**jax_kwargs(k, d, n), **extra}
        got = g(**kwargs)
        for name_, gi in zip(WRT, got):
            np.testing.assert_allclose(gi, keyword_fd(f, kwargs, name_), rtol=1e-5, atol=1e-7,
                                       err_msg=name_)
    text = s2s_ad.gradient_source(f, wrt=WRT)
    code = "\n".join(line.split("#")[0] for line in text.splitlines())
    assert not re.search(r"\bjax\b", code)


def test_jax_packed_add_and_vjp():
    lower = rng.normal(size=6)
    got = s2s_ad.grad(j.packed_add, wrt=0)(lower, 4)
    want = fd_gradient(lambda v: j.packed_add(j.jnp.asarray(v), 4), [lower], 0)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7)
    kwargs = {**jax_kwargs(2, 3, 4), "gamma": 1.0, "m": 0}
    value, vjp_fn = s2s_ad.vjp(j.packed_mixture, **kwargs)
    np.testing.assert_allclose(value, float(j.packed_mixture(**kwargs)), rtol=1e-10)
    cot = vjp_fn(2.0)
    names = ("d", "k", "x") + WRT + ("gamma", "m")
    for name in WRT:
        np.testing.assert_allclose(cot[names.index(name)] / 2.0,
                                   keyword_fd(j.packed_mixture, kwargs, name),
                                   rtol=1e-5, atol=1e-7)


def test_int_parameter_checked_where_the_code_runs():
    """``d`` has no annotation (JAX's ``*, d, k``): the generated code
    checks it is an int before building index arrays from it."""
    kwargs = {**jax_kwargs(2, 3, 4), "gamma": 1.0, "m": 0}
    with pytest.raises(TypeError, match="`d` is used to build an integer index array"):
        s2s_ad.grad(j.packed_mixture, wrt=WRT)(**{**kwargs, "d": 3.0})


# -- refused, or stopped where the code runs ------------------------------------------

REFUSED = {
    "float_in_comprehension": ("0.5 is not an int", "np.arange"),
    "comprehension_over_values": ("iterates over `range(...)`", "integer index array"),
}


def test_repeat_of_values_by_counts_computed_from_ints():
    """np.repeat(x, np.arange(d) + 1) of a value with a gradient: read as
    np.take(np.ravel(x), np.repeat(np.arange(x.size), counts)), the repeated
    index computed from ints; NumPy's error where the counts do not fit."""
    x = rng.normal(size=4)
    got = s2s_ad.grad(m.repeats_of_values, wrt=0)(x, 4)
    np.testing.assert_allclose(got, fd_gradient(m.repeats_of_values, [x, 4], 0), rtol=1e-6)
    with pytest.raises(ValueError, match="broadcast"):
        s2s_ad.grad(m.repeats_of_values, wrt=0)(x, 3)


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_with_location(name):
    what, more = REFUSED[name]
    with pytest.raises(SourceError) as info:
        s2s_ad.grad(getattr(m, name), wrt=0)(rng.normal(size=4), 3)
    text = str(info.value)
    assert "index_arrays_src.py:" in text and "^" in text and what in text and more in text, \
        text


def test_write_by_an_index_array_of_data_refused():
    """Where the call gives the index parameter an array (vjp), refused while
    lowering; where the code is generated before any call (grad), the
    parameter is checked to be an int where the code runs."""
    with pytest.raises(SourceError) as info:
        s2s_ad.vjp(m.write_by_data, rng.normal(size=3), np.array([0, 1, 1]))
    text = str(info.value)
    assert "index_arrays_src.py:" in text and "z[idx] = x" in text and "computed from ints" in text
    with pytest.raises(TypeError, match="`idx` indexes `z` in an assignment .* twice"):
        s2s_ad.grad(m.write_by_data, wrt=0)(rng.normal(size=3), np.array([0, 1, 1]))


@pytest.mark.parametrize("f,args", [(m.repeated_write, (rng.normal(size=4), 2))])
def test_repeated_position_stops_where_the_code_runs(f, args):
    """NumPy keeps the last write to a repeated position: the generated code
    raises rather than differentiate it."""
    with pytest.raises(ValueError, match="writes an element more than once"):
        s2s_ad.grad(f, wrt=0)(*args)
    with pytest.raises(ValueError, match="writes an element more than once"):
        s2s_ad.vjp(f, *args)


def test_jax_add_at_repeated_positions_adds_them_up():
    """JAX's ``.at[idx].add(v)`` adds repeated positions up (NumPy's
    ``np.add.at``), which the generated code now does too (it raised, as the
    write above does, before ``np.add.at`` was read)."""
    x = rng.normal(size=6)
    want = np.array([(j.at_repeated_positions(x + e, 3) - j.at_repeated_positions(x - e, 3))
                     / 2e-6 for e in np.eye(6) * 1e-6])
    np.testing.assert_allclose(s2s_ad.grad(j.at_repeated_positions, wrt=0)(x, 3), want,
                               rtol=1e-6, atol=1e-9)


def test_dtype_of_an_argument():
    """``np.zeros(..., dtype=lower.dtype)``: float32 arguments give a float32
    array, and float32 gradients."""
    lower, w = (a.astype(np.float32) for a in CASES["inline_triangle"][0][:2])
    got = s2s_ad.grad(m.inline_triangle, wrt=(0, 1))(lower, w, 4)
    assert all(g.dtype == np.float32 for g in got)
    want = s2s_ad.grad(m.inline_triangle, wrt=(0, 1))(lower.astype(np.float64),
                                                      w.astype(np.float64), 4)
    for g, h in zip(got, want):
        np.testing.assert_allclose(g, h, rtol=2e-3, atol=2e-4)


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_runs_on_dask(name):
    """The same generated module given chunked Dask arrays (the index arrays
    stay NumPy's, computed from ints): equal to the NumPy gradient. The
    value's adjoint ``g[:, rows, cols]`` is picked by ``gather`` from the
    flattened axes, and the overwritten elements' zeros are written by
    ``zero_at``, since Dask indexes by one integer array at a time."""
    da = pytest.importorskip("dask.array")
    args, wrt = CASES[name]
    f = getattr(m, name)
    dargs = [da.from_array(a, chunks=2) if isinstance(a, np.ndarray) else a for a in args]
    df = s2s_ad.grad(f, wrt=tuple(wrt))
    want = df(*args)
    got = df(*dargs)
    for g, w in zip(got, want):
        assert isinstance(g, da.Array)
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", ["mixture", "tril_write", "in_a_branch"])
def test_jvp_matches_finite_differences(name):
    """Forward mode reads the function itself: the index arrays computed as written."""
    args, wrt = CASES[name]
    f = getattr(m, name)
    direction = rng.normal(size=np.shape(args[0]))
    first = list(__import__("inspect").signature(f).parameters)[0]
    value, tangent = s2s_ad.jvp(f, wrt=0)(*args, **{f"d{first}": direction})
    np.testing.assert_allclose(value, f(*args), rtol=1e-12)
    np.testing.assert_allclose(tangent, np.sum(fd_gradient(f, args, 0) * direction),
                               rtol=1e-5, atol=1e-7)


# Second order (hvp, hessian, jvp and vjp of the gradient): tests/test_higher_index_arrays.py.


def test_total_repeat_length():
    """JAX's ``total_repeat_length`` equal to the repeat's length is read;
    another length (JAX would pad or cut) stops where the code runs; with
    an axis it is refused, located."""
    x = rng.normal(size=5)
    with pytest.raises(ValueError, match="`total_repeat_length` differs"):
        s2s_ad.grad(j.repeat_padded, wrt=0)(x, 2)
    with pytest.raises(SourceError) as info:
        s2s_ad.grad(j.repeat_total_along_axis, wrt=0)(x, 2)
    assert "jax_src.py:" in str(info.value) and "no axis" in str(info.value)


def test_no_gradient_with_respect_to_the_int():
    kwargs = {**jax_kwargs(2, 3, 4), "gamma": 1.0, "m": 0}
    with pytest.raises(SourceError) as info:
        s2s_ad.grad(j.packed_mixture, wrt=("d", "alphas"))(**kwargs)
    assert "cannot differentiate with respect to `d`" in str(info.value)
