"""Closure under differentiation for NumPy: the helpers s2s-ad's NumPy
gradients define (unbroadcast, matmul_adjoint, spread, extreme_adjoint,
astype_like) are primitives with rules (s2s_ad/rules/own.py), each checked
here against central differences; and every NumPy example's gradient module,
and random NumPy programs', written to a file and read back under a new name
(no origin), is differentiated again: its JVP against central differences of
the file's gradient along the tangent, and the gradient of a sum over its
result (an array gradient is not a number) against central differences of
that sum."""

from __future__ import annotations

import importlib
import inspect
import os
import subprocess
import sys

import numpy as np
import pytest

import s2s_ad
from s2s_ad.errors import SourceError
from s2s_ad.higher import origin
from s2s_ad.rules.numpy_helpers import HELPERS
from tests.array_oracle import fd_gradient
from tests.examples_numpy import mlp_args
from tests.modules import import_source, run_generated
from tests.programs import RandomDraw
from tests.programs_numpy import numpy_loop_program, numpy_program
from tests.soak import beyond
from examples import kmeans, mlp, softmax_xent, spring_chain, tied_weights

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RNG = np.random.default_rng(1415)


def helpers_module(folder, label: str, body: str):
    """A module defining s2s-ad's helpers as a generated module does, and ``body``."""
    text = "import numpy as np\n\n" + "".join(HELPERS[name] for name in (
        "add_over", "unbroadcast", "matmul_adjoint", "spread", "extreme_adjoint", "astype_like",
        "total", "array_sum", "own", "rolled", "moved", "eye_matrix", "float_zeros", "seeded",
        "tile_adjoint", "inner_adjoint", "dot_adjoint", "contract", "cross_product", "others_product",
        "repeat_adjoint", "trace_adjoint", "diag_adjoint", "cumprod_adjoint", "stacked_part",
        "stacked_back", "sort_adjoint", "add_at", "take_along_axis_adjoint", "pad_adjoint", "tensordot_adjoint", "kron_adjoint")) \
        + "\n\n" + body
    return import_source(str(folder), text, label)


# (expression over g and the other operands, shapes of g, x, y, the operands differentiated)
RULE_CASES = [
    ("unbroadcast(g * g, x)", (3, 4), (4,), None, ("g",)),
    ("unbroadcast(g * g, x)", (3, 4), (3, 1), None, ("g",)),
    ("unbroadcast(g * g, x)", (2, 3, 4), (1, 4), None, ("g",)),
    ("unbroadcast(g * g, x)", (), (3,), None, ("g",)),
    ("unbroadcast(g * g, x)", (3, 4), (3, 4), None, ("g",)),
    ("unbroadcast(g * g, x)", (3, 4), (), None, ("g",)),
    ("matmul_adjoint(g * g, x, y * y, 0)", (3, 5), (3, 4), (4, 5), ("g", "y")),
    ("matmul_adjoint(g * g, x * x, y, 1)", (3, 5), (3, 4), (4, 5), ("g", "x")),
    ("matmul_adjoint(g * g, x, y * y, 0)", (5,), (4,), (4, 5), ("g", "y")),
    ("matmul_adjoint(g * g, x * x, y, 1)", (3,), (3, 4), (4,), ("g", "x")),
    ("matmul_adjoint(g * g, x, y * y, 0)", (2, 3, 5), (2, 3, 4), (4, 5), ("g", "y")),
    ("matmul_adjoint(g * g, x * x, y, 1)", (2, 3, 5), (3, 4), (2, 4, 5), ("g", "x")),
    ("matmul_adjoint(g * g, x, y * y, 0)", (), (4,), (4,), ("g", "y")),
    ("dot_adjoint(g * g, x, y * y, 0)", (3, 5), (3, 4), (4, 5), ("g", "y")),
    ("dot_adjoint(g * g, x * x, y, 1)", (3, 5), (3, 4), (4, 5), ("g", "x")),
    ("dot_adjoint(g * g, x, y * y, 0)", (), (4,), (4,), ("g", "y")),
    ("dot_adjoint(g * g, x * x, y, 1)", (), (4,), (4,), ("g", "x")),
    ("dot_adjoint(g * g, x, y * y, 0)", (2, 3, 5), (2, 3, 4), (4, 5), ("g", "y")),
    ("dot_adjoint(g * g, x * x, y, 1)", (2, 3, 5), (2, 4), (3, 4, 5), ("g", "x")),
    ("spread(g * g, x)", (3, 1), (3, 4), None, ("g",)),
    ("spread(g * g, x)", (), (3, 4), None, ("g",)),
    ("extreme_adjoint(g * g, x, np.max(x, axis=1, keepdims=True), 1)", (3, 1), (3, 4), None,
     ("g",)),
    ("extreme_adjoint(g * g, x, np.min(x), None)", (), (3, 4), None, ("g",)),
    ("astype_like(g * g, x)", (3, 4), (3, 4), None, ("g",)),
    ("total(g * g) * x", (3, 4), (), None, ("g",)),
    ("total(g * g) * x", (), (), None, ("g",)),
    ("own(g * g) * x", (3, 4), (4,), None, ("g",)),
    ("rolled(g * g, 1, None) * x", (5,), (5,), None, ("g",)),
    ("rolled(g * g, -2, 1) * x", (3, 4), (4,), None, ("g",)),
    ("moved(g * g, 0, -1) * x", (5,), (5,), None, ("g",)),
    ("moved(g * g, 0, -1) * x", (3, 4), (3,), None, ("g",)),
    ("moved(g * g, -1, 0) * x", (2, 3, 4), (2, 3), None, ("g",)),
    ("eye_matrix(3) @ (g * g) + x", (3,), (), None, ("g",)),
    ("array_sum(g * g) * x", (3, 4), (2,), None, ("g", "x")),
    ("array_sum(g * g) * x", (), (), None, ("g", "x")),
    ("float_zeros(x) + g * g", (3,), (2, 3), None, ("g",)),
    ("seeded(x, g * g) * x", (3,), (2, 3), None, ("g", "x")),
    ("seeded(x, g * g) * x", (2, 3), (2, 3), None, ("g", "x")),
    ("tile_adjoint(g * g, x, 2) * x", (6,), (3,), None, ("g", "x")),
    ("tile_adjoint(g * g, x, (2, 1)) * x", (4, 3), (2, 3), None, ("g", "x")),
    ("tile_adjoint(g * g, x, (2, 2))", (2, 6), (3,), None, ("g",)),
    ("tile_adjoint(g * g, x, 3) * x", (3,), (), None, ("g", "x")),
    ("inner_adjoint(g * g, x, y * y, 0)", (3, 2), (3, 4), (2, 4), ("g", "y")),
    ("inner_adjoint(g * g, x * x, y, 1)", (3, 2), (3, 4), (2, 4), ("g", "x")),
    ("inner_adjoint(g * g, x, y * y, 0)", (), (4,), (4,), ("g", "y")),
    ("inner_adjoint(g * g, x * x, y, 1)", (3,), (3, 4), (4,), ("g", "x")),
    ("inner_adjoint(g * g, x, y * y, 0)", (4,), (), (4,), ("g", "y")),
    ("inner_adjoint(g * g, x * x, y, 1)", (2, 5), (2, 3), (5, 3), ("g", "x")),
    ("contract('ij,jk->ik', g * g, x * y)", (3, 4), (4, 2), (4, 2), ("g", "x", "y")),
    ("contract('...j,j->...', g * g, x)", (2, 3, 4), (4,), None, ("g", "x")),
    ("contract('ii->i', g * g)", (3, 3), (), None, ("g",)),
    ("cross_product(g * g, x * y)", (3,), (3,), (3,), ("g", "x", "y")),
    ("cross_product(g * g, x * y)", (2, 3), (2, 3), (3,), ("g", "x", "y")),
    ("others_product(g * g, None) * x", (4,), (4,), None, ("g", "x")),
    ("others_product(g * g, 1) * x", (3, 4), (4,), None, ("g", "x")),
    ("others_product(g * g, -2) * x", (2, 3, 4), (4,), None, ("g",)),
    ("others_product(g * g, None)", (2, 3), (), None, ("g",)),
    ("repeat_adjoint(g * g, x, 2, -1) * x", (3, 8), (3, 4), None, ("g", "x")),
    ("repeat_adjoint(g * g, x, 3, None) * x", (12,), (2, 2), None, ("g", "x")),
    ("repeat_adjoint(g * g, x, 2, 0)", (4, 3), (2, 3), None, ("g",)),
    ("trace_adjoint(g * g, x, 0) * x", (), (3, 3), None, ("g", "x")),
    ("trace_adjoint(g * g, x, 1) * x", (2,), (3, 4, 2), None, ("g", "x")),
    ("diag_adjoint(g * g, x, 0) * x", (3, 3), (3,), None, ("g", "x")),
    ("diag_adjoint(g * g, x, -1) * x", (4, 4), (3,), None, ("g", "x")),
    ("diag_adjoint(g * g, x, 1) * x", (3,), (3, 4), None, ("g", "x")),
    ("diag_adjoint(g * g, x, -1) * x", (2,), (3, 4), None, ("g", "x")),
    ("cumprod_adjoint(g * g, x * y, np.cumprod(x * y, axis=1), 1)", (3, 4), (3, 4), (4,),
     ("g", "x", "y")),
    ("cumprod_adjoint(g * g, x * y, np.cumprod(x * y), None)", (6,), (2, 3), (3,),
     ("g", "x", "y")),
    ("cumprod_adjoint(g * g, x * y, np.cumprod(x * y, axis=0), 0)", (4, 2), (4, 2), (),
     ("g", "x", "y")),
    ("stacked_part(g * g, (x, y), 0, 'h') * x", (7,), (3,), (4,), ("g", "x")),
    ("stacked_part(g * g, (x, y), 1, 'h') * y", (2, 5), (2, 3), (2, 2), ("g", "y")),
    ("stacked_part(g * g, (x, y), 1, 'v') * y", (2, 4), (4,), (4,), ("g", "y")),
    ("stacked_part(g * g, (x, y, x), 2, 'v') * x", (7, 3), (2, 3), (3, 3), ("g", "x")),
    ("stacked_part(g * g, (x, y), 0, 'h') * x", (2,), (), (), ("g", "x")),
    ("sort_adjoint(g * g, x, -1) * x", (3, 4), (3, 4), None, ("g", "x")),
    ("sort_adjoint(g * g, x, 0) * x", (3, 4), (3, 4), None, ("g", "x")),
    ("sort_adjoint(g * g, x, None) * x", (6,), (2, 3), None, ("g", "x")),
    ("tensordot_adjoint(g * g, x, y * y, 1, 0)", (3, 5), (3, 4), (4, 5), ("g", "y")),
    ("tensordot_adjoint(g * g, x * x, y, 1, 1)", (3, 5), (3, 4), (4, 5), ("g", "x")),
    ("tensordot_adjoint(g * g, x, y * y, ([1, 0], [0, 2]), 0)", (5,), (4, 3), (3, 5, 4),
     ("g", "y")),
    ("tensordot_adjoint(g * g, x * x, y, ([1, 0], [0, 2]), 1)", (5,), (4, 3), (3, 5, 4),
     ("g", "x")),
    ("tensordot_adjoint(g * g, x, y * y, 0, 0)", (2, 3), (2,), (3,), ("g", "y")),
    ("kron_adjoint(g * g, x, y * y, 0)", (6, 4), (3, 2), (2, 2), ("g", "y")),
    ("kron_adjoint(g * g, x * x, y, 1)", (6, 4), (3, 2), (2, 2), ("g", "x")),
    ("kron_adjoint(g * g, x, y * y, 0)", (6,), (3,), (2,), ("g", "y")),
    ("kron_adjoint(g * g, x * x, y, 1)", (2, 6), (3,), (2, 2), ("g", "x")),
    ("pad_adjoint(g * g, x, ((1, 2), (0, 1))) * x", (6, 5), (3, 4), None, ("g", "x")),
    ("pad_adjoint(g * g, x, 1) * x", (5, 6), (3, 4), None, ("g", "x")),
    ("pad_adjoint(g * g, x, ((2, 0),)) * x", (6,), (4,), None, ("g", "x")),
    ("take_along_axis_adjoint(g * g, x, np.argsort(y, axis=1), 1) * x", (3, 4), (3, 4), (3, 4),
     ("g", "x")),
    ("take_along_axis_adjoint(g * g, x, np.argsort(y, axis=0)[:2], 0) * x", (2, 4), (3, 4),
     (3, 4), ("g", "x")),
    ("take_along_axis_adjoint(g * g, x, np.argsort(y)[:, :1] * 0, -1) * x", (3, 1), (3, 4),
     (3, 4), ("g", "x")),
]


@pytest.mark.parametrize("expr,gs,xs,ys,wrt", RULE_CASES,
                         ids=[f"{c[0].split('(')[0]}-{k}" for k, c in enumerate(RULE_CASES)])
def test_own_helper_rules_against_finite_differences(expr, gs, xs, ys, wrt, tmp_path):
    """Each rule's adjoint, and its tangent, against central differences of
    Σ c · expr (c a fixed random array of the result's shape)."""
    label = f"own_rule_{abs(hash((expr, gs, xs, ys))) % 10**8}"
    g = RNG.uniform(0.5, 1.5, gs) if gs else 0.7
    x = RNG.uniform(0.5, 1.5, xs) if xs else 0.9
    if "extreme" in expr:
        x = np.array(x)
        x[0, 2] = x[0, 1] = np.max(x[0]) + 0.5  # a tie: the adjoint is split
    y = (RNG.uniform(0.5, 1.5, ys) if ys else 1.1) if ys is not None else 1.1
    probe = helpers_module(tmp_path, label + "_probe", f"def f(g, x, y):\n    return {expr}\n")
    c = RNG.normal(size=np.shape(probe.f(g, x, y)))
    mod = helpers_module(tmp_path, label, f"def f(g, x, y, c):\n    return np.sum(({expr}) * c)\n")
    assert s2s_ad.lower(mod.f, arrays=["g", "x", "y", "c"]).body.ops  # lowered, not refused
    args = [g, x, y, c]
    names = ["g", "x", "y", "c"]
    got = s2s_ad.grad(mod.f, wrt=tuple(wrt))(*args)
    for w, d in zip(wrt, got):
        want = fd_gradient(mod.f, args, names.index(w))
        np.testing.assert_allclose(np.asarray(d, dtype=float), want, rtol=1e-6, atol=1e-8)
    # the tangent, along a random direction, against the same differences
    direction = {w: RNG.normal(size=np.shape(args[names.index(w)])) for w in wrt}
    value, tangent = s2s_ad.jvp(mod.f, wrt=tuple(wrt))(*args, **{"d" + w: direction[w]
                                                                  for w in wrt})
    want = sum(float(np.sum(fd_gradient(mod.f, args, names.index(w)) * direction[w]))
               for w in wrt)
    assert np.isclose(value, mod.f(*args), rtol=1e-12)
    assert np.isclose(float(tangent), want, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("axis", [0, None])
def test_cumprod_adjoint_read_back_at_zeros(axis, tmp_path):
    """cumprod_adjoint read back is its exact form for every slice: at a slice
    holding zeros (where its text leaves the division) too, its gradient
    and tangent against central differences."""
    mod = helpers_module(tmp_path, f"cumprod_zeros_{axis}", "def f(g, x, c):\n"
                         f"    out = np.cumprod(x, axis={axis})\n"
                         f"    return np.sum(cumprod_adjoint(g * g, x, out, {axis}) * c)\n")
    g = RNG.uniform(0.5, 1.5, (4, 3))
    x = np.array([[1.2, 0.0, 0.7], [0.0, 0.0, 1.1], [0.9, 1.3, 0.4], [0.6, 0.8, 0.0]])
    c = RNG.normal(size=(4, 3))
    got = s2s_ad.grad(mod.f, wrt=(0, 1))(g, x, c)
    for i, d in enumerate(got):
        np.testing.assert_allclose(d, fd_gradient(mod.f, [g, x, c], i), rtol=1e-6, atol=1e-8)
    dg, dx = RNG.normal(size=(4, 3)), RNG.normal(size=(4, 3))
    _, tangent = s2s_ad.jvp(mod.f, wrt=(0, 1))(g, x, c, dg=dg, dx=dx)
    want = float(np.sum(got[0] * dg) + np.sum(got[1] * dx))
    assert np.isclose(float(tangent), want, rtol=1e-9, atol=1e-12)


def test_a_function_named_like_a_helper_is_the_users_own(tmp_path):
    """Only s2s-ad's exact text is taken for the primitive: a user function
    called `unbroadcast` with another body is lowered as the user wrote it."""
    mod = import_source(str(tmp_path), "import numpy as np\n\n\ndef unbroadcast(g, x):\n"
                        "    return g * x\n\n\ndef f(g, x):\n    return np.sum(unbroadcast(g, x))\n",
                        "users_unbroadcast")
    g, x = RNG.normal(size=3), RNG.normal(size=3)
    dg, dx = s2s_ad.grad(mod.f, wrt=("g", "x"))(g, x)
    np.testing.assert_allclose(dg, x)
    np.testing.assert_allclose(dx, g)


EXAMPLES = [
    (mlp.mlp_loss, mlp_args(RNG, 4, 3, 3, 1), ("W1", "b1", "W2", "b2")),
    (softmax_xent.softmax_xent, [RNG.normal(size=(3, 2)), RNG.normal(size=(4, 3)),
                                 np.eye(2)[[0, 1, 1, 0]]], ("W",)),
    (tied_weights.sigmoid, [RNG.normal(size=3)], ("u",)),
    (tied_weights.net, [RNG.normal(size=(3, 2)), RNG.normal(size=(2, 3)), RNG.normal(size=2),
                        RNG.normal(size=2)], ("W", "V")),
    (tied_weights.tied, [RNG.normal(size=(3, 2)), RNG.normal(size=2), RNG.normal(size=2)], ("W",)),
    (kmeans.kmeans_cost, [RNG.normal(size=(3, 2)), RNG.normal(size=(10, 2))], ("C",)),
    # adjoints of slices: `scatter(g, x, slice(1, None))`, `add_scattered(...)`
    (spring_chain.energy, [RNG.normal(scale=0.3, size=2 * spring_chain.N)], ("y",)),
]


def _shifted(args, names, wrt, direction, h):
    out = list(args)
    for w in wrt:
        k = names.index(w)
        out[k] = np.asarray(args[k], dtype=float) + h * direction[w]
    return out


def _probe_source(module: str, fn, wrt) -> str:
    """``probe(*params, c_w...) = Σ_w Σ c_w · (∂f/∂w)``, calling the file's gradient."""
    names = list(inspect.signature(fn).parameters)
    outs = ", ".join(f"d_{w}" for w in wrt) + ("," if len(wrt) == 1 else "")
    return (f"import numpy as np\nfrom {module} import grad_{fn.__name__}\n\n\n"
            f"def probe({', '.join(names)}, {', '.join('c_' + w for w in wrt)}):\n"
            f"    {outs} = grad_{fn.__name__}({', '.join(names)})\n"
            f"    return {' + '.join(f'np.sum(d_{w} * c_{w})' for w in wrt)}\n")


@pytest.mark.parametrize("fn,args,wrt", EXAMPLES, ids=[f.__name__ for f, _, _ in EXAMPLES])
def test_numpy_gradient_module_read_from_its_file_is_differentiated(fn, args, wrt, tmp_path):
    names = list(inspect.signature(fn).parameters)
    if fn is tied_weights.sigmoid:  # a number-valued sum of the elementwise function
        mod = import_source(str(tmp_path), "import numpy as np\nfrom examples.tied_weights "
                            "import sigmoid\n\n\ndef s(u):\n    return np.sum(sigmoid(u))\n", "sig_sum")
        fn, names = mod.s, ["u"]
    text = s2s_ad.gradient_source(fn, wrt=tuple(wrt))
    module = f"npfile_{fn.__name__}"
    (tmp_path / f"{module}.py").write_text(text, encoding="utf-8")
    sys.path.insert(0, str(tmp_path))
    importlib.invalidate_caches()
    try:
        g = getattr(importlib.import_module(module), "grad_" + fn.__name__)
        assert origin(g) is None
        first = g(*args)
        first = first if isinstance(first, tuple) else (first,)
        for w, d in zip(wrt, first):  # the file's gradient against central differences of f
            want = fd_gradient(lambda *a: float(fn(*a)), list(args), names.index(w))
            np.testing.assert_allclose(d, want, rtol=1e-5, atol=1e-7)
        direction = {w: RNG.normal(size=np.shape(args[names.index(w)])) for w in wrt}
        h = 1e-5

        def along(f):
            up = f(*_shifted(args, names, wrt, direction, h))
            down = f(*_shifted(args, names, wrt, direction, -h))
            up, down = (up, down) if isinstance(up, tuple) else ((up,), (down,))
            return [(np.asarray(a) - np.asarray(b)) / (2 * h) for a, b in zip(up, down)]

        # jvp of the file's gradient: its tangent is H v
        forward = s2s_ad.jvp(g, wrt=tuple(wrt))
        keys = list(inspect.signature(forward).parameters)[-len(wrt):]
        value, tangent = forward(*args, **{k: direction[w] for k, w in zip(keys, wrt)})
        tangent = tangent if isinstance(tangent, tuple) else (tangent,)
        for got, want in zip(tangent, along(g)):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6 * max(1.0, np.max(np.abs(want))))
        # grad of a sum over the file's gradient: H c, against differences along v
        probe_mod = import_source(str(tmp_path), _probe_source(module, fn, wrt), f"{module}_probe")
        cs = [RNG.normal(size=np.shape(args[names.index(w)])) for w in wrt]
        got = s2s_ad.grad(probe_mod.probe, wrt=tuple(wrt))(*args, *cs)
        mine = sum(float(np.sum(np.asarray(d) * direction[w])) for d, w in zip(got, wrt))
        want = along(lambda *a: probe_mod.probe(*a, *cs))[0]
        assert np.isclose(mine, float(want), rtol=1e-5, atol=1e-7)
        # grad of the `jvp` module read from its file: ∇(∇f · v) = H v
        J = getattr(import_source(str(tmp_path), s2s_ad.jvp_source(fn, wrt=list(wrt)),
                                  f"{module}_jvp"), "jvp_" + fn.__name__)
        assert origin(J) is None
        keys = list(inspect.signature(J).parameters)[-len(wrt):]
        got = s2s_ad.grad(J, wrt=tuple(wrt), output=1)(
            *args, **{k: direction[w] for k, w in zip(keys, wrt)})
        got = got if isinstance(got, tuple) else (got,)
        for d, want in zip(got, along(g)):
            np.testing.assert_allclose(d, want, rtol=1e-5, atol=1e-6 * max(1.0, np.max(np.abs(want))))
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop(module, None)


def _numpy_from_file(prog, fn, folder, label) -> bool:
    """jvp of the file's gradient of a random NumPy program along a random
    direction, against central differences of that gradient (skipped where
    the gradient is not checked against f first, or has a kink within the
    step). True when compared."""
    wrt = tuple(prog.wrt)
    rng = np.random.default_rng(len(prog.source))
    try:
        text = s2s_ad.gradient_source(fn, wrt=wrt)
    except SourceError:
        return False
    g = getattr(import_source(str(folder), text, label), "grad_f")
    assert origin(g) is None
    direction = {k: (rng.normal(size=np.shape(v)) if isinstance(v, np.ndarray)
                     else float(rng.normal())) for k, v in prog.point.items()}
    flat = lambda parts: np.concatenate([np.ravel(np.asarray(p, dtype=float)) for p in parts])  # noqa: E731

    def along(f, h):
        up = {k: v + h * direction[k] if k in wrt else v for k, v in prog.point.items()}
        down = {k: v - h * direction[k] if k in wrt else v for k, v in prog.point.items()}
        return (f(**up) - f(**down)) / (2 * h)

    with np.errstate(all="ignore"):
        try:
            value = float(fn(**prog.point))
            first = flat(g(**prog.point))
        except (ValueError, ZeroDivisionError, OverflowError, FloatingPointError):
            return False
        if not np.isfinite(value) or not np.all(np.isfinite(first)):
            return False
        slope = float(first @ flat([direction[w] for w in wrt]))
        d1, d2 = (along(lambda **p: float(fn(**p)), h) for h in (1e-4, 5e-5))
        if not (np.isfinite(d1) and abs(d1 - d2) < 1e-6 * max(1.0, abs(d2))
                and np.isclose(slope, d2, rtol=1e-5, atol=1e-6)):
            return False
        c1, c2 = (along(lambda **p: flat(g(**p)), h) for h in (1e-4, 5e-5))
    if not np.all(np.isfinite(c1)) or np.max(np.abs(c1 - c2)) > 1e-5 * max(1.0, np.max(np.abs(c2))):
        return False  # a kink in the gradient within the step
    forward = s2s_ad.jvp(g, wrt=wrt)
    keys = list(inspect.signature(forward).parameters)[-len(wrt):]
    with np.errstate(all="ignore"):
        _, tangent = forward(**prog.point, **{k: direction[w] for k, w in zip(keys, wrt)})
    tol = 1e-4 * max(1.0, float(np.max(np.abs(c2))))
    np.testing.assert_allclose(flat(tangent), c2, rtol=1e-4, atol=tol,
                               err_msg=prog.source + "\n" + text)
    return True


@pytest.mark.soak  # the first 12 of these programs run in the default run, in
# test_random_numpy_programs_are_compared (the same check, and a count of those compared)
@pytest.mark.parametrize("seed", range(30))
def test_random_numpy_programs_gradient_file_differentiated(seed, tmp_path):
    prog = numpy_program(RandomDraw(760_000 + seed))
    fn = import_source(str(tmp_path), prog.source, f"cn_{seed}").f
    _numpy_from_file(prog, fn, tmp_path, f"cn_grad_{seed}")


LOOPS_COMPARED = (0, 1, 2, 4, 6, 8, 9, 10, 11, 16, 17, 19, 20, 21, 23, 25, 26, 27, 28, 30, 31, 32,
                  34, 37, 38, 39)
"""Seeds (765000 +) of NumPy-loop programs whose gradient file (arrays written
in place in loops, overwritten elements put back by `y[i] = y_old.pop()`,
adjoints added into by index, `dx += v`) is differentiated again and compared."""


@pytest.mark.parametrize("seed", beyond(LOOPS_COMPARED, 3))
def test_numpy_loop_programs_gradient_file_compared(seed, tmp_path):
    prog = numpy_loop_program(RandomDraw(765_000 + seed))
    fn = import_source(str(tmp_path), prog.source, f"clc_{seed}").f
    assert _numpy_from_file(prog, fn, tmp_path, f"clc_grad_{seed}"), prog.source


@pytest.mark.parametrize("seed", beyond([s for s in range(40) if s not in LOOPS_COMPARED], 2))
def test_numpy_loop_programs_gradient_file_compared_or_refused_located(seed, tmp_path):
    """The rest: refused with a located message, never an internal error —
    mostly an element of an array written in place bound to a name (`t =
    y[i]`: a view unless the array has one axis, which the frontend knows only
    of arrays made as `np.zeros(n)`, `np.ones(n)` or copies of those) and
    arrays of a shape given as a tuple; where accepted, compared."""
    prog = numpy_loop_program(RandomDraw(765_000 + seed))
    fn = import_source(str(tmp_path), prog.source, f"cl_{seed}").f
    try:
        _numpy_from_file(prog, fn, tmp_path, f"cl_grad_{seed}")
    except SourceError as e:
        head = str(e).splitlines()[0]
        assert f"cl_grad_{seed}.py:" in head and ": error: " in head, str(e)
        assert "^" in str(e)


@pytest.mark.soak
@pytest.mark.parametrize("seed", range(300))
def test_numpy_loop_programs_gradient_file_soak(seed, tmp_path):
    """Compared where accepted, else refused, located (as above), seeds 775000 +."""
    prog = numpy_loop_program(RandomDraw(775_000 + seed))
    fn = import_source(str(tmp_path), prog.source, f"cls_{seed}").f
    try:
        _numpy_from_file(prog, fn, tmp_path, f"cls_grad_{seed}")
    except SourceError as e:
        head = str(e).splitlines()[0]
        assert f"cls_grad_{seed}.py:" in head and ": error: " in head, str(e)


def test_random_numpy_programs_are_compared(tmp_path):
    compared = 0
    for seed in range(12):
        prog = numpy_program(RandomDraw(760_000 + seed))
        fn = import_source(str(tmp_path), prog.source, f"cn2_{seed}").f
        compared += _numpy_from_file(prog, fn, tmp_path, f"cn2_grad_{seed}")
    assert compared >= 6, compared


@pytest.mark.soak
@pytest.mark.parametrize("seed", range(300))
def test_random_numpy_programs_gradient_file_differentiated_soak(seed, tmp_path):
    prog = numpy_program(RandomDraw(770_000 + seed))
    fn = import_source(str(tmp_path), prog.source, f"cn3_{seed}").f
    _numpy_from_file(prog, fn, tmp_path, f"cn3_grad_{seed}")


def test_cli_gradient_of_a_probe_of_a_numpy_gradient_file(tmp_path):
    """`s2s-ad grad -o` of examples/mlp.py, a probe summing over its result,
    and `s2s-ad grad` of the probe: run in a fresh interpreter without s2s-ad."""
    def cli(*argv):
        done = subprocess.run([sys.executable, "-m", "s2s_ad", *argv], cwd=str(tmp_path),
                              capture_output=True, text=True, timeout=300,
                              env=dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{ROOT}"))
        assert done.returncode == 0, done.stderr
    cli("grad", os.path.join(ROOT, "examples", "mlp.py") + ":mlp_loss", "--wrt", "W1,b1,W2,b2",
        "-o", str(tmp_path / "mlp_grad.py"))
    wrt = ("W1", "b1", "W2", "b2")
    (tmp_path / "mlp_probe.py").write_text(_probe_source("mlp_grad", mlp.mlp_loss, wrt),
                                           encoding="utf-8")
    cli("grad", "mlp_probe.py:probe", "--wrt", "W2,b2", "-o", str(tmp_path / "mlp_second.py"))
    args = mlp_args(np.random.default_rng(5), 4, 3, 3, 1)
    cs = [RNG.normal(size=np.shape(a)) for a in args[:4]]
    got = run_generated(tmp_path, "mlp_second", "grad_probe", [*args, *cs])
    sys.path.insert(0, str(tmp_path))
    importlib.invalidate_caches()
    try:
        probe = import_source(str(tmp_path), _probe_source("mlp_grad", mlp.mlp_loss, wrt),
                              "mlp_probe_again")
        for k, d in zip((2, 3), got):
            want = fd_gradient(probe.probe, [*args, *cs], k)
            np.testing.assert_allclose(d, want, rtol=1e-5, atol=1e-7)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("mlp_grad", None)


ROLL_EYE = """import numpy as np


def f(x):
    return np.sum(np.roll(x, 1) * x * x) + np.sum(np.eye(5) @ (x * np.sin(x)))
"""


def test_a_gradient_file_with_rolled_and_eye_matrix_differentiated(tmp_path):
    """The gradient's forward pass computes np.roll and np.eye(n) with the
    module's `rolled` and `eye_matrix`, and np.roll's adjoint is `rolled`:
    both are s2s-ad's own primitives when the file is differentiated again."""
    (tmp_path / "rolleye.py").write_text(ROLL_EYE, encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "grad", "rolleye.py:f", "-o",
                           "rolleye_grad.py"], cwd=str(tmp_path), capture_output=True, text=True,
                          timeout=300, env=dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{ROOT}"))
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "rolleye_grad.py").read_text(encoding="utf-8")
    assert "rolled(" in text and "eye_matrix(" in text
    sys.path.insert(0, str(tmp_path))
    importlib.invalidate_caches()
    try:
        probe = import_source(str(tmp_path), "import numpy as np\nfrom rolleye_grad import "
                              "grad_f\n\n\ndef probe(x, c):\n    return np.sum(grad_f(x) * c)\n",
                              "rolleye_probe")
        x, c = RNG.uniform(0.5, 1.5, 5), RNG.normal(size=5)
        got = s2s_ad.grad(probe.probe, wrt=0)(x, c)
        np.testing.assert_allclose(got, fd_gradient(probe.probe, [x, c], 0), rtol=1e-6,
                                   atol=1e-8)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("rolleye_grad", None)


FILL = """import numpy as np


def f(x, a):
    y = np.zeros(len(x))
    y[0] = x[0]
    for i in range(1, len(x)):
        if x[i] > 1.0:
            y[i] = y[i - 1] * a + x[i]
        else:
            y[i] = y[i - 1] * a - x[i] * x[i]
    return np.sum(y * y)
"""


def test_a_gradient_file_with_float_zeros_differentiated(tmp_path):
    """Adjoints written in place start as `float_zeros(y)` in the gradient
    file (`s2s-ad grad -o`; writes in a loop, behind a branch); differentiated
    again they are constants (`np.zeros_like(y) + 0.0`): the second-order
    gradient, through grad and vjp, against central differences."""
    (tmp_path / "fillz.py").write_text(FILL, encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "grad", "fillz.py:f", "-o",
                           "fillz_grad.py"], cwd=str(tmp_path), capture_output=True, text=True,
                          timeout=300, env=dict(os.environ, PYTHONPATH=f"{tmp_path}{os.pathsep}{ROOT}"))
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "fillz_grad.py").read_text(encoding="utf-8")
    assert "= float_zeros(" in text, text
    sys.path.insert(0, str(tmp_path))
    importlib.invalidate_caches()
    try:
        probe = import_source(str(tmp_path), "import numpy as np\nfrom fillz_grad import "
                              "grad_f\n\n\ndef probe(x, a, c):\n    dx, da = grad_f(x, a)\n"
                              "    return np.sum(dx * c) + da * np.sum(c)\n", "fillz_probe")
        for a in (0.7, -0.6):
            x, c = RNG.uniform(0.5, 1.5, 6), RNG.normal(size=6)
            x[np.abs(x - 1.0) < 0.05] += 0.1  # away from the branch's edge
            want = fd_gradient(probe.probe, [x, a, c], 0)
            np.testing.assert_allclose(s2s_ad.grad(probe.probe, wrt=0)(x, a, c), want,
                                       rtol=1e-6, atol=1e-8)
            _, pull = s2s_ad.vjp(probe.probe, x, a, c)
            np.testing.assert_allclose(pull(1.0)[0], want, rtol=1e-6, atol=1e-8)
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("fillz_grad", None)


def test_a_function_named_float_zeros_is_the_users_own(tmp_path):
    """Only s2s-ad's own helper text is read as zeros: a `float_zeros` of the
    user's is differentiated as written."""
    mod = import_source(str(tmp_path), "import numpy as np\n\n\ndef float_zeros(x):\n"
                        "    return x * x + 0.0\n\n\ndef f(x):\n    return np.sum(float_zeros(x) * x)\n",
                        "users_float_zeros")
    x = RNG.normal(size=4)
    np.testing.assert_allclose(s2s_ad.grad(mod.f, wrt=0)(x), 3 * x * x, rtol=1e-12)
