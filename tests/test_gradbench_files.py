"""Opt-in: GradBench's own Python objectives (its PyTorch, JAX and TensorFlow
tools), read unmodified from a GradBench checkout, differentiated by s2s-ad and
compared with the library's own derivative and with central differences of
the library's evaluation (tests/gradbench_files.py has the cases).

Runs only when S2S_AD_GRADBENCH names the directory holding GradBench's
``gradbench`` package (``python/gradbench`` in its repository); otherwise the
module is skipped before anything is imported:

    S2S_AD_GRADBENCH=/path/to/gradbench/python/gradbench \\
        python -m pytest -m gradbench_files tests/test_gradbench_files.py

A case whose library (torch, jax, tensorflow) is not installed is skipped.
The table of differences and times is printed at the end of the run."""

import inspect

import pytest

from opt_in import checkout

gb = checkout("S2S_AD_GRADBENCH", "GradBench's own files (GradBench's python/gradbench)",
              "gradbench_files")

pytestmark = pytest.mark.gradbench_files


def _needs(lib: str) -> None:
    if gb.library(lib) is None:
        pytest.skip(f"{lib} is not installed")


def _param(case: gb.Case):
    marks = [pytest.mark.xfail(strict=True, reason=case.xfail)] if case.xfail else []
    return pytest.param(case, id=case.id, marks=marks)


@pytest.mark.parametrize("case", [_param(c) for c in gb.CASES])
def test_gradient_against_library_and_differences(case):
    _needs(case.lib)
    r = gb.run(case)
    assert r.vs_library <= gb.LIBRARY_TOL, (
        f"{case.id}: s2s-ad differs from the library's own derivative by {r.vs_library:.3g} "
        f"(relative); against central differences {r.vs_fd:.3g}")
    assert r.vs_fd <= gb.FD_TOL, (
        f"{case.id}: s2s-ad differs from central differences by {r.vs_fd:.3g} (relative); "
        f"against the library's derivative {r.vs_library:.3g}")
    assert r.entry_points <= 1e-12, (
        f"{case.id}: vjp and grad(..., dout=cotangent) differ by {r.entry_points:.3g}")


@pytest.mark.parametrize("stem, name, data", gb.DECORATED, ids=[d[0] for d in gb.DECORATED])
def test_jit_decorated_function_is_refused_at_its_decorator(stem, name, data):
    """GradBench's ``@partial(jax.jit, static_argnums=[1])`` functions: a
    located refusal at the decorator, naming ``<name>.__wrapped__`` (which the
    cases above differentiate)."""
    _needs("jax")
    message = gb.refusal(stem, name, data)
    inner = getattr(gb.load("jax", stem), name).__wrapped__
    path = inspect.getsourcefile(inner)
    line = inner.__code__.co_firstlineno  # the first decorator's line
    with open(path, encoding="utf-8") as f:
        text = f.read().splitlines()[line - 1]
    assert text.lstrip().startswith("@"), text
    assert f"{path}:{line}:" in message, message
    assert text.strip() in message and "^" in message, message
    assert f"{name}.__wrapped__" in message, message
