"""The public API: wrt handling, arguments, vjp, generated source, caching,
docstrings. Gradients are compared with central differences."""

import inspect
import math
import pydoc
import textwrap

import pytest

import api_src as a
import s2s_ad
from oracle import close, fd_gradient
from s2s_ad import SourceError, WrtError

P = [0.7, 1.3, 0.4]  # x, y, z of poly


def poly_fd(i):
    return fd_gradient(lambda x, y, z: a.poly(x, y, z=z), P, [i])[0]


@pytest.mark.parametrize("wrt,idx", [(0, 0), ("x", 0), (1, 1), ("y", 1), ("z", 2), (2, 2),
                                     (-1, 2), (-3, 0)])
def test_wrt_by_name_or_index_for_every_kind_of_parameter(wrt, idx):
    g = s2s_ad.grad(a.poly, wrt=wrt)(P[0], P[1], z=P[2])
    assert close(g, poly_fd(idx))


def test_wrt_sequence_and_none_give_tuples():
    gx, gz = s2s_ad.grad(a.poly, wrt=("x", 2))(P[0], P[1], z=P[2])
    assert close(gx, poly_fd(0)) and close(gz, poly_fd(2))
    every = s2s_ad.grad(a.poly, wrt=None)(P[0], P[1], z=P[2])
    assert len(every) == 3 and all(close(g, poly_fd(i)) for i, g in enumerate(every))


def test_defaults_are_used_when_arguments_are_omitted():
    g = s2s_ad.grad(a.poly, wrt="x")(0.7)
    want = fd_gradient(lambda x: a.poly(x), [0.7], [0])[0]
    assert close(g, want)


def test_arguments_by_keyword():
    g = s2s_ad.grad(a.three, wrt=("a", "c"))(c=0.3, b=1.2, a=-0.4)
    want = fd_gradient(a.three, [-0.4, 1.2, 0.3], [0, 2])
    assert close(g[0], want[0]) and close(g[1], want[1])


@pytest.mark.parametrize("wrt,match", [("w", "no parameter 'w'"), (3, "out of range"),
                                       ((0, "x"), "twice"), ((), "empty"), (1.5, "indices or names"),
                                       (True, "indices or names")])
def test_bad_wrt_is_refused(wrt, match):
    with pytest.raises(WrtError, match=match):
        s2s_ad.grad(a.poly, wrt=wrt)


@pytest.mark.parametrize("fn,what", [(a.star, r"\*args"), (a.kwstar, r"\*\*kwargs")])
def test_star_parameters_are_refused_with_a_location(fn, what):
    with pytest.raises(SourceError, match=what) as info:
        s2s_ad.grad(fn)
    assert info.value.file.endswith("api_src.py") and info.value.line > 0


def test_value_and_grad():
    value, g = s2s_ad.value_and_grad(a.three, wrt=1)(-0.4, 1.2, 0.3)
    assert close(value, a.three(-0.4, 1.2, 0.3))
    assert close(g, fd_gradient(a.three, [-0.4, 1.2, 0.3], [1])[0])


def test_vjp_scales_with_the_cotangent_and_covers_every_parameter():
    value, vjp_fn = s2s_ad.vjp(a.poly, P[0], y=P[1], z=P[2])
    assert close(value, a.poly(P[0], P[1], z=P[2]))
    one = vjp_fn(1.0)
    three = vjp_fn(-3.0)
    assert len(one) == 3
    for i in range(3):
        assert close(one[i], poly_fd(i))
        assert close(three[i], -3.0 * poly_fd(i))


def test_vjp_with_defaults_and_calls():
    value, vjp_fn = s2s_ad.vjp(a.outer, 1.1)
    assert close(value, a.outer(1.1))
    assert close(vjp_fn(2.0)[0], 2.0 * fd_gradient(a.outer, [1.1], [0])[0])


def test_vjp_rejects_bad_arguments():
    with pytest.raises(TypeError, match="vjp"):
        s2s_ad.vjp(a.three, 1.0)


def test_source_of_every_kind_of_generated_function():
    assert "def grad_poly(" in s2s_ad.source_of(s2s_ad.grad(a.poly))
    assert "def value_and_grad_poly(" in s2s_ad.source_of(s2s_ad.value_and_grad(a.poly))
    _, vjp_fn = s2s_ad.vjp(a.poly, 1.0)
    text = s2s_ad.source_of(vjp_fn)
    assert "def poly_fwd(" in text and "def poly_bwd(" in text
    assert text == s2s_ad.vjp_source(a.poly)
    assert s2s_ad.gradient_source(a.poly, 0) == s2s_ad.source_of(s2s_ad.grad(a.poly, 0))
    with pytest.raises(TypeError):
        s2s_ad.source_of(len)


def test_generated_source_never_imports_s2s_ad():
    for text in (s2s_ad.gradient_source(a.outer), s2s_ad.vjp_source(a.outer)):
        assert "s2s_ad" not in text


# -- caching ------------------------------------------------------------


def define(src: str, namespace: dict | None = None, name: str = "f"):
    """A function whose source inspect can read: written to a fresh module."""
    import importlib.util
    import os
    import tempfile
    folder = tempfile.mkdtemp()
    path = os.path.join(folder, "m.py")
    with open(path, "w") as fh:
        fh.write(textwrap.dedent(src))
    spec = importlib.util.spec_from_file_location(f"m_{abs(hash(src))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_unchanged_function_is_transformed_once():
    s2s_ad.clear_cache()
    g1 = s2s_ad.grad(a.outer)
    g2 = s2s_ad.grad(a.outer)
    assert g1 is g2
    info = s2s_ad.cache_info()
    assert (info.misses, info.hits) == (1, 1)
    s2s_ad.grad(a.outer, wrt="x")       # another option: another transform
    s2s_ad.value_and_grad(a.outer)
    s2s_ad.vjp(a.outer, 1.0)
    s2s_ad.vjp(a.outer, 2.0)
    info = s2s_ad.cache_info()
    assert (info.misses, info.hits) == (4, 2)


def test_the_cache_follows_source_constants_and_helpers(monkeypatch):
    s2s_ad.clear_cache()
    m = define("""
        K = 3.0
        def helper(x):
            return x * x
        def f(x):
            return K * helper(x)
        """)
    assert close(s2s_ad.grad(m.f)(2.0), 12.0 * 1.0)
    assert s2s_ad.cache_info().misses == 1
    m.K = 5.0                                  # a constant the code inlines
    assert close(s2s_ad.grad(m.f)(2.0), 20.0)
    assert s2s_ad.cache_info().misses == 2
    # The same source text elsewhere (a re-import) is not transformed again.
    m2 = define("""
        K = 3.0
        def helper(x):
            return x * x
        def f(x):
            return K * helper(x)
        """)
    # Same text in another file: the comments of the generated code name the
    # file and line, so it is generated again.
    s2s_ad.grad(m2.f)
    assert s2s_ad.cache_info().misses == 3
    # A helper redefined with another body gives another gradient.
    m3 = define("""
        K = 5.0
        def helper(x):
            return x * x * x
        def f(x):
            return K * helper(x)
        """)
    assert close(s2s_ad.grad(m3.f)(2.0), 5.0 * 12.0)


def test_same_source_same_module_hits_the_cache():
    s2s_ad.clear_cache()
    s2s_ad.grad(a.scaled)
    # A fresh function object with the same code, globals and source.
    import types
    clone = types.FunctionType(a.scaled.__code__, a.scaled.__globals__, "scaled")
    s2s_ad.grad(clone)
    assert s2s_ad.cache_info() == s2s_ad.CacheInfo(1, 1, 1)


# -- docs ---------------------------------------------------------------


@pytest.mark.parametrize("name", s2s_ad.__all__)
def test_every_public_function_has_a_docstring(name):
    obj = getattr(s2s_ad, name)
    if callable(obj):
        assert inspect.getdoc(obj), name


@pytest.mark.parametrize("fn", [s2s_ad.grad, s2s_ad.value_and_grad, s2s_ad.vjp,
                                s2s_ad.gradient_source, s2s_ad.defvjp, s2s_ad.check])
def test_help_reads_like_numpy_docs(fn):
    text = pydoc.render_doc(fn, renderer=pydoc.plaintext)
    assert "Parameters\n" in text and "----------" in text and "Returns\n" in text


def test_the_cache_sees_a_helper_edited_in_a_nested_package(tmp_path, monkeypatch):
    import importlib
    import sys
    pkg = tmp_path / "cachepkg" / "inner"
    pkg.mkdir(parents=True)
    (tmp_path / "cachepkg" / "__init__.py").write_text("")
    (pkg / "__init__.py").write_text("")
    (pkg / "mod.py").write_text("def h(x):\n    return x * x\n")
    (tmp_path / "cachetop.py").write_text(
        "import cachepkg.inner.mod\n\ndef f(x):\n    return cachepkg.inner.mod.h(x) + x\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    import cachetop
    s2s_ad.clear_cache()
    assert close(s2s_ad.grad(cachetop.f)(3.0), 7.0)
    (pkg / "mod.py").write_text("def h(x):\n    return x * x * x\n")
    importlib.reload(sys.modules["cachepkg.inner.mod"])
    assert close(s2s_ad.grad(cachetop.f)(3.0), 28.0)
    assert s2s_ad.cache_info().misses == 2


def test_a_long_signature_wrapped_by_the_printer_still_compiles():
    m = define("""
        def f(first_parameter, second_parameter, third_parameter, fourth_parameter,
              fifth_parameter, sixth_parameter):
            return (first_parameter * second_parameter + third_parameter * fourth_parameter
                    + fifth_parameter * sixth_parameter)
        """)
    args = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]
    got = s2s_ad.grad(m.f, wrt=None)(*args)
    assert all(close(g, w) for g, w in zip(got, [0.2, 0.1, 0.4, 0.3, 0.6, 0.5]))
    _, vjp_fn = s2s_ad.vjp(m.f, *args)
    assert close(vjp_fn(1.0)[5], 0.5)


def test_vjp_fn_runs_as_often_as_needed_through_loops():
    def f(x, n):
        for i in range(n):
            x = x * math.sin(x) + 1.0
        return x
    value, vjp_fn = s2s_ad.vjp(f, 0.5, 3)
    want = fd_gradient(f, [0.5, 3], [0])[0]
    for cot in (1.0, 2.0, -0.5):
        assert close(vjp_fn(cot)[0], cot * want)
