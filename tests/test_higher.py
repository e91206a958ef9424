"""Second derivatives of every example and of random programs: ``hessian``,
``hvp``, ``grad(grad(f))``, ``jvp(grad(f))`` and ``grad(jvp(f))``, against
central finite differences of the first derivative (itself checked against
central differences of ``f`` first, at the same point), so loops with tapes,
recorded branch decisions, helper pairs and NumPy are all differentiated twice."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pytest

import s2s_ad
from s2s_ad.errors import SourceError
from tests.examples_numpy import mlp_args
from tests.oracle import central_difference
from tests.fuzz import evaluate, fd_agrees, import_program
from tests.programs import RandomDraw, program
from tests.programs_helpers import helper_program
from tests.soak import beyond, soak
from examples import (black_scholes, gaussian_nll, horner, kmeans, logistic_map, mlp, newton,
                      pendulum, piecewise, rosenbrock, saddle, seed_ggml, softmax_xent,
                      spring_chain, tied_weights)

RNG = np.random.default_rng(14)

# (function, arguments, the parameters differentiated)
EXAMPLES = [
    (seed_ggml.f, [0.7, 1.3], ("a", "x")),
    (gaussian_nll.nll, [1.0, 0.2, 0.1], ("x", "mu", "log_sigma")),
    (black_scholes.call_price, [1.0, 0.95, 0.5, 0.03, 0.2], ("s", "k", "t", "r", "sigma")),
    (horner.horner, [[0.5, -1.2, 0.3, 2.0], 0.7], ("c", "x")),
    (logistic_map.logistic, [0.3, 3.2, 5], ("x", "r")),
    (newton.cube_root, [2.0], ("c",)),
    (pendulum.energy_after_step, [0.4, -0.2, 1.3, 0.1, 0.05],
     ("theta", "omega", "length", "damping", "dt")),
    (piecewise.piecewise, [1.5, 2.0], ("x", "a")),
    (piecewise.piecewise, [0.5, 2.0], ("x", "a")),
    (piecewise.piecewise, [-0.5, 2.0], ("x", "a")),
    (rosenbrock.rosenbrock4, [0.1, 0.2, 0.3, 0.4], ("x0", "x1", "x2", "x3")),
    (mlp.mlp_loss, mlp_args(RNG, 4, 3, 3, 1), ("W1", "b1", "W2", "b2")),
    (softmax_xent.softmax_xent, [RNG.normal(size=(3, 2)), RNG.normal(size=(4, 3)),
                                 np.eye(2)[[0, 1, 1, 0]]], ("W",)),
    (tied_weights.sigmoid, [0.3], ("u",)),
    (tied_weights.net, [RNG.normal(size=(3, 2)), RNG.normal(size=(2, 3)), RNG.normal(size=2),
                        RNG.normal(size=2)], ("W", "V")),
    (tied_weights.tied, [RNG.normal(size=(3, 2)), RNG.normal(size=2), RNG.normal(size=2)], ("W",)),
    (kmeans.kmeans_cost, [RNG.normal(size=(3, 2)), RNG.normal(size=(10, 2))], ("C",)),
    (saddle.f, [0.3, -0.2, 0.5, 0.1], ("x1", "x2", "y1", "y2")),
    (spring_chain.energy, [RNG.normal(scale=0.3, size=2 * spring_chain.N)], ("y",)),
]


def flatten(parts) -> np.ndarray:
    return np.concatenate([np.ravel(np.asarray(p, dtype=float)) for p in parts])


def unflatten(vector: np.ndarray, like) -> list:
    out, k = [], 0
    for p in like:
        n = len(p) if isinstance(p, (list, tuple)) else int(np.size(p))
        chunk = vector[k:k + n]
        k += n
        if isinstance(p, (list, tuple)):
            out.append(type(p)(float(c) for c in chunk))
        elif isinstance(p, np.ndarray):
            out.append(chunk.reshape(p.shape).copy())
        else:
            out.append(float(chunk[0]))
    return out


def with_params(fn, args, wrt, values) -> list:
    names = list(inspect.signature(fn).parameters)
    args = list(args)
    for w, v in zip(wrt, values):
        args[names.index(w)] = v
    return args


def checked_gradient(fn, args, wrt):
    """s2s-ad's gradient, compared with central differences of ``fn`` here
    first: the Hessian reference is built from it."""
    grad_fn = s2s_ad.grad(fn, wrt=tuple(wrt))
    names = list(inspect.signature(fn).parameters)
    x = flatten([args[names.index(w)] for w in wrt])
    like = [args[names.index(w)] for w in wrt]
    g = flatten(grad_fn(*args))
    for k in range(x.size):
        h = 1e-6 * max(1.0, abs(x[k]))
        up, down = x.copy(), x.copy()
        up[k] += h
        down[k] -= h
        fd = (fn(*with_params(fn, args, wrt, unflatten(up, like)))
              - fn(*with_params(fn, args, wrt, unflatten(down, like)))) / (2 * h)
        assert math.isclose(g[k], fd, rel_tol=1e-5, abs_tol=1e-7), (fn.__name__, k, g[k], fd)
    return grad_fn


def fd_hessian(fn, args, wrt) -> np.ndarray:
    """Central differences of the (checked) gradient, column by column."""
    grad_fn = checked_gradient(fn, args, wrt)
    names = list(inspect.signature(fn).parameters)
    like = [args[names.index(w)] for w in wrt]
    x = flatten(like)
    columns = []
    for k in range(x.size):
        h = 1e-5 * max(1.0, abs(x[k]))
        up, down = x.copy(), x.copy()
        up[k] += h
        down[k] -= h
        columns.append((flatten(grad_fn(*with_params(fn, args, wrt, unflatten(up, like))))
                        - flatten(grad_fn(*with_params(fn, args, wrt, unflatten(down, like)))))
                       / (2 * h))
    return np.stack(columns, axis=1)


def tangent_keywords(wrt, parts) -> dict:
    return {"d" + w: p for w, p in zip(wrt, parts)}


@pytest.mark.parametrize("fn,args,wrt", EXAMPLES,
                         ids=[f"{f.__name__}-{i}" for i, (f, _, _) in enumerate(EXAMPLES)])
def test_examples_second_derivatives(fn, args, wrt):
    H = fd_hessian(fn, args, wrt)
    names = list(inspect.signature(fn).parameters)
    like = [args[names.index(w)] for w in wrt]
    scale = max(1.0, float(np.max(np.abs(H))))
    tol = dict(rtol=1e-4, atol=1e-5 * scale)

    # hessian: blocks [i][j], assembled
    blocks = s2s_ad.hessian(fn, wrt=tuple(wrt))(*args)
    rows = [np.concatenate([np.reshape(blocks[i][j], (np.size(like[i]) if not isinstance(
        like[i], list) else len(like[i]), -1)) for j in range(len(wrt))], axis=1)
        for i in range(len(wrt))]
    np.testing.assert_allclose(np.concatenate(rows, axis=0), H, **tol)

    v = RNG.normal(size=H.shape[0])
    direction = unflatten(v, like)
    # hvp: one pass
    got = s2s_ad.hvp(fn, wrt=tuple(wrt))(*args, tuple(direction))
    np.testing.assert_allclose(flatten(got), H @ v, **tol)
    # jvp of the generated gradient: (gradient, H v)
    grad_fn = s2s_ad.grad(fn, wrt=tuple(wrt))
    value, tangent = s2s_ad.jvp(grad_fn, wrt=wrt)(*args, **tangent_keywords(wrt, direction))
    np.testing.assert_allclose(flatten(value), flatten(grad_fn(*args)), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(flatten(tangent), H @ v, **tol)
    # grad of the generated JVP's tangent: H v again, reverse over forward
    forward = s2s_ad.jvp(fn, wrt=list(wrt))
    got = s2s_ad.grad(forward, wrt=tuple(wrt), output=1)(*args, **tangent_keywords(wrt, direction))
    np.testing.assert_allclose(flatten(got), H @ v, **tol)
    # grad of a generated gradient, for each number parameter: a row of H
    offsets = np.cumsum([0] + [len(p) if isinstance(p, list) else int(np.size(p)) for p in like])
    for i, w in enumerate(wrt):
        if not isinstance(like[i], (int, float)):
            continue
        row = s2s_ad.grad(s2s_ad.grad(fn, wrt=w), wrt=tuple(wrt))(*args)
        np.testing.assert_allclose(flatten(row), H[offsets[i]], **tol)


def test_seed_and_its_tangent():
    """grad(f)'s output seed σ is a parameter like any other: ∂(σ·∇f)/∂σ = ∇f."""
    f, args = logistic_map.logistic, [0.3, 3.2, 4]
    g = s2s_ad.grad(f, wrt="x")
    seed = [n for n in inspect.signature(g).parameters if n not in ("x", "r", "n")][0]
    first = g(*args)
    H = fd_hessian(f, args, ("x",))[0, 0]
    value, tangent = s2s_ad.jvp(g, wrt=("x", seed))(*args, **{seed: 2.0, "dx": 0.25,
                                                                 "d" + seed: 0.5})
    assert math.isclose(value, 2.0 * first, rel_tol=1e-12)
    assert math.isclose(tangent, 2.0 * H * 0.25 + 0.5 * first, rel_tol=1e-5)
    d_x, d_seed = s2s_ad.grad(g, wrt=("x", seed))(*args, **{seed: 2.0})
    assert math.isclose(d_seed, first, rel_tol=1e-12)
    assert math.isclose(d_x, 2.0 * H, rel_tol=1e-5)


def _random_second(prog, fn):
    """For each differentiated parameter w: grad(grad(f, w)) against central
    differences of grad(f, w), component by component (the first derivative
    is checked against differences of f first)."""
    value = evaluate(fn, prog.point)
    if value is None:
        return
    wrt = list(prog.wrt_names)
    try:
        first = {w: s2s_ad.grad(fn, wrt=w) for w in wrt}
    except SourceError:
        return  # refused already at first order
    for w in wrt:
        try:
            g = float(first[w](**prog.point))
        except (ValueError, ZeroDivisionError, OverflowError):
            continue
        if fd_agrees(fn, prog.point, w, g, value) is not True:
            continue  # the reference would rest on an unchecked first derivative
        component = lambda **p: first[w](**p)  # noqa: E731
        second = s2s_ad.grad(first[w], wrt=tuple(wrt))
        forward = s2s_ad.jvp(first[w], wrt=tuple(wrt))
        keys = forward.__s2s_ad_tangents__  # d<name>, made unique (a parameter `dz`...)
        try:
            row = second(**prog.point)
            value_t, tangent = forward(**prog.point, **{keys[q]: float(q == w) for q in wrt})
        except (ValueError, ZeroDivisionError, OverflowError):
            continue
        for q, got in zip(wrt, row):
            verdict = fd_agrees(component, prog.point, q, float(got), g)
            assert verdict is not False, f"{prog.source}\nat {prog.point}: ∂²/∂{w}∂{q} = {got}"
        assert math.isclose(value_t, g, rel_tol=1e-9, abs_tol=1e-12)
        ww = wrt.index(w)
        assert math.isclose(tangent, row[ww], rel_tol=1e-7, abs_tol=1e-9), (tangent, row[ww])


@pytest.mark.parametrize("seed", beyond(range(40), 8))
def test_random_programs_second_derivatives(seed, tmp_path):
    prog = program(RandomDraw(700_000 + seed))
    _random_second(prog, import_program(prog, str(tmp_path), f"h2_{seed}"))


@pytest.mark.parametrize("seed", beyond(range(20), 4))
def test_random_helper_programs_second_derivatives(seed, tmp_path):
    prog = helper_program(RandomDraw(710_000 + seed))
    if not hasattr(prog, "wrt_names"):  # a NumPy base
        from tests.modules import import_source
        if prog.output is None:
            _numpy_second(prog, import_source(str(tmp_path), prog.source, f"h3_{seed}").f)
        return
    _random_second(prog, import_program(prog, str(tmp_path), f"h3_{seed}"))


def _directional(fn, point: dict, direction: dict, h: float):
    up = {k: v + h * direction[k] if k in direction else v for k, v in point.items()}
    down = {k: v - h * direction[k] if k in direction else v for k, v in point.items()}
    return (fn(**up) - fn(**down)) / (2 * h)


def _numpy_second(prog, fn):
    """hvp along a random direction against central differences of the
    gradient along it (the gradient checked against differences of f along
    it first), and jvp(grad(f)) the same; skipped where the difference
    quotients at h and h/2 disagree (a kink within the step)."""
    wrt = tuple(prog.wrt)
    rng = np.random.default_rng(len(prog.source))
    with np.errstate(all="ignore"):
        value = evaluate(lambda **kw: float(fn(**kw)), prog.point)
    if value is None:
        return False
    direction = {k: (rng.normal(size=np.shape(v)) if isinstance(v, np.ndarray)
                     else float(rng.normal())) for k, v in prog.point.items()}
    v = tuple(direction[w] for w in wrt)
    try:
        grad_fn = s2s_ad.grad(fn, wrt=wrt)
    except SourceError:
        return False
    g = lambda **kw: flatten(grad_fn(**kw))  # noqa: E731
    with np.errstate(all="ignore"):
        slope = float(flatten(grad_fn(**prog.point)) @ flatten(v))
        d1 = _directional(lambda **kw: float(fn(**kw)), prog.point, direction, 1e-4)
        d2 = _directional(lambda **kw: float(fn(**kw)), prog.point, direction, 5e-5)
        if not (np.isfinite(d1) and abs(d1 - d2) < 1e-6 * max(1.0, abs(d2))
                and math.isclose(slope, d2, rel_tol=1e-5, abs_tol=1e-6)):
            return False
        c1 = _directional(g, prog.point, direction, 1e-4)
        c2 = _directional(g, prog.point, direction, 5e-5)
    if not np.all(np.isfinite(c1)) or np.max(np.abs(c1 - c2)) > 1e-5 * max(1.0, np.max(np.abs(c2))):
        return False  # a kink in the gradient within the step
    got = flatten(s2s_ad.hvp(fn, wrt=wrt)(*(prog.point[k] for k in ("a", "b", "s")), v))
    tol = 1e-4 * max(1.0, float(np.max(np.abs(c2))))
    np.testing.assert_allclose(got, c2, rtol=1e-4, atol=tol, err_msg=prog.source)
    _, tangent = s2s_ad.jvp(grad_fn, wrt=wrt)(**prog.point, **{"d" + w: direction[w] for w in wrt})
    np.testing.assert_allclose(flatten(tangent), c2, rtol=1e-4, atol=tol, err_msg=prog.source)
    # the number parameter's row of H, by grad of its generated gradient: (H v)_s = row · v
    row = s2s_ad.grad(s2s_ad.grad(fn, wrt="s"), wrt=wrt)(**prog.point)
    k = sum(int(np.size(prog.point[w])) for w in wrt[:wrt.index("s")])
    assert math.isclose(float(flatten(row) @ flatten(v)), float(c2[k]), rel_tol=1e-4,
                        abs_tol=tol), prog.source
    return True


NUMPY_SECOND_SEEDS = [s if s < 12 and (s % 3 == 0 or s >= 10) else soak(s) for s in range(30)]
"""Seeds 0 to 11 in the default run but 1, 2, 4, 5, 7 and 8: those draw
numpy_program(720000 + seed), the programs test_random_numpy_programs_are_compared
checks (the same _numpy_second) in the default run; all 30 with ``--soak``."""


@pytest.mark.parametrize("seed", NUMPY_SECOND_SEEDS)
def test_random_numpy_programs_second_derivatives(seed, tmp_path):
    from tests.modules import import_source
    from tests.programs_numpy import numpy_loop_program, numpy_program

    draw = numpy_program if seed % 3 else numpy_loop_program  # loops filling arrays
    prog = draw(RandomDraw(720_000 + seed))
    fn = import_source(str(tmp_path), prog.source, f"h4_{seed}").f
    _numpy_second(prog, fn)


def test_random_numpy_programs_are_compared():
    """The NumPy programs above are not all skipped: most reach the comparison."""
    import tempfile
    from tests.modules import import_source
    from tests.programs_numpy import numpy_program

    folder = tempfile.mkdtemp()
    compared = sum(bool(_numpy_second(p, import_source(folder, p.source, f"h5_{k}").f))
                   for k, p in enumerate(numpy_program(RandomDraw(720_000 + s))
                                         for s in range(10)))
    assert compared >= 5, compared


@pytest.mark.parametrize("target,wrt,extra,fn,args", [
    ("examples/pendulum.py:energy_after_step", "theta,omega,length", [],
     pendulum.energy_after_step, [0.4, -0.2, 1.3, 0.1, 0.05]),
    ("examples/horner.py:horner", "c,x", ["--length", "c=3"], horner.horner, [[0.5, -1.2, 2.0], 0.7]),
    ("examples/mlp.py:mlp_loss", "W2,b2", [], mlp.mlp_loss, mlp_args(np.random.default_rng(3), 4, 3, 3, 1)),
])
def test_cli_hessian_module_in_a_fresh_interpreter(target, wrt, extra, fn, args, tmp_path):
    """`s2s-ad hessian -o FILE` writes a module that needs no s2s-ad: its
    hessian_FN against central differences of the checked gradient."""
    import os
    import pickle
    import subprocess
    import sys
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = tmp_path / "hess_mod.py"
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "hessian", target, "--wrt", wrt,
                           *extra, "-o", str(out)], cwd=root, capture_output=True, text=True,
                          timeout=300, env=dict(os.environ, PYTHONPATH=root))
    assert done.returncode == 0, done.stderr
    (tmp_path / "args.pkl").write_bytes(pickle.dumps(args))
    run = subprocess.run([sys.executable, "-c", "import pickle, sys; from hess_mod import *; "
                          f"h = hessian_{fn.__name__}(*pickle.load(open('args.pkl', 'rb'))); "
                          "sys.stdout.buffer.write(pickle.dumps(h))"],
                         cwd=tmp_path, capture_output=True, timeout=120,
                         env={"PATH": os.environ.get("PATH", "")})
    assert run.returncode == 0, run.stderr.decode()
    blocks = pickle.loads(run.stdout)
    names = wrt.split(",")
    H = fd_hessian(fn, args, names)
    parts = _parts(fn, args, names)
    rows = [np.concatenate([np.reshape(np.asarray(blocks[i][j], dtype=float),
                                       (_size(parts[i]), _size(parts[j])))
                            for j in range(len(names))], axis=1) for i in range(len(names))]
    np.testing.assert_allclose(np.concatenate(rows, axis=0), H, rtol=1e-4, atol=1e-6)


def _parts(fn, args, names):
    order = list(inspect.signature(fn).parameters)
    return [args[order.index(n)] for n in names]


def _size(p):
    return len(p) if isinstance(p, (list, tuple)) else int(np.size(p))


def _vector_field(x, y):
    return math.sin(x) * y, x * x + y, math.exp(0.3 * y) - x


def _array_field(W, v):
    return np.tanh(W @ v) * 2.0


def _fd_jacobian(fn, args, i, h=1e-6):
    """Central differences of fn's output (flattened) in args[i] (flattened)."""
    x = np.asarray(args[i], dtype=float)
    columns = []
    for k in range(x.size):
        up, down = x.copy().ravel(), x.copy().ravel()
        up[k] += h
        down[k] -= h
        a_up, a_down = list(args), list(args)
        a_up[i] = up.reshape(x.shape) if x.ndim else float(up[0])
        a_down[i] = down.reshape(x.shape) if x.ndim else float(down[0])
        columns.append((np.ravel(np.asarray(fn(*a_up), dtype=float))
                        - np.ravel(np.asarray(fn(*a_down), dtype=float))) / (2 * h))
    return np.stack(columns, axis=1)


@pytest.mark.parametrize("how", [s2s_ad.jacrev, s2s_ad.jacfwd, s2s_ad.jacobian])
def test_jacobians_against_finite_differences(how):
    args = [0.7, -0.4]
    for i, w in enumerate(("x", "y")):
        got = how(_vector_field, wrt=w)(*args)
        np.testing.assert_allclose(np.ravel(np.asarray(got, dtype=float)),
                                   _fd_jacobian(_vector_field, args, i)[:, 0], rtol=1e-6)
    W, v = RNG.normal(size=(4, 3)), RNG.normal(size=3)
    for i, w in enumerate(("W", "v")):
        got = how(_array_field, wrt=w)(W, v)
        want = _fd_jacobian(_array_field, [W, v], i)
        assert got.shape == (4,) + np.shape([W, v][i])
        np.testing.assert_allclose(got.reshape(want.shape), want, rtol=1e-6, atol=1e-9)
    both = how(_array_field, wrt=("W", "v"))(W, v)
    assert isinstance(both, tuple) and both[1].shape == (4, 3)
    # a number-valued function: the gradient's shape
    g = how(rosenbrock.rosenbrock4, wrt=("x0", "x1"))(0.1, 0.2, 0.3, 0.4)
    assert np.allclose(g, [central_difference(rosenbrock.rosenbrock4, [0.1, 0.2, 0.3, 0.4], k)
                           for k in (0, 1)], rtol=1e-6)


def test_second_derivatives_of_a_gradient_generated_per_list_length():
    """A gradient made per list length has no signature of its own: its seed
    is found per call; the results against central differences of the
    (checked) gradient."""
    from tests import forward_src as src
    f, args = src.unpacked, [[0.4, -1.3, 0.7], 0.9]
    H = fd_hessian(f, args, ("xs", "y"))
    g_y = s2s_ad.grad(f, wrt="y")
    row = s2s_ad.grad(g_y, wrt=("xs", "y"))(*args)
    np.testing.assert_allclose(flatten(row), H[3], rtol=1e-5, atol=1e-7)
    g_xs = s2s_ad.grad(f, wrt="xs")
    value, tangent = s2s_ad.jvp(g_xs, wrt=("xs",))(*args, dxs=[1.0, 0.0, 0.0])
    np.testing.assert_allclose(value, flatten(g_xs(*args)), rtol=1e-12)
    np.testing.assert_allclose(tangent, H[:3, 0], rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("fn,args,wrt", [EXAMPLES[4], EXAMPLES[11], EXAMPLES[3]],
                         ids=["logistic", "mlp", "horner"])
def test_vjp_of_a_generated_gradient_and_of_a_jvp(fn, args, wrt):
    """vjp(grad(f)) and vjp(jvp(f)): cotangents against central differences
    of the (checked) gradient — H·c for the parameters, c·∇f for the seed."""
    H = fd_hessian(fn, args, wrt)
    names = list(inspect.signature(fn).parameters)
    like = [args[names.index(w)] for w in wrt]
    c = RNG.normal(size=H.shape[0])
    g = s2s_ad.grad(fn, wrt=tuple(wrt))
    value, back = s2s_ad.vjp(g, *args)
    np.testing.assert_allclose(flatten(value), flatten(g(*args)), rtol=1e-12)
    out = back(tuple(unflatten(c, like)))
    got = flatten([out[names.index(w)] for w in wrt])
    scale = max(1.0, float(np.max(np.abs(H))))
    np.testing.assert_allclose(got, H @ c, rtol=1e-4, atol=1e-5 * scale)
    assert math.isclose(float(out[-1]), float(flatten(g(*args)) @ c), rel_tol=1e-9, abs_tol=1e-12)
    forward = s2s_ad.jvp(fn, wrt=list(wrt))
    tangents = tangent_keywords(wrt, unflatten(c, like))
    value, back = s2s_ad.vjp(forward, *args, **tangents)
    out = back((0.0, 1.0))  # the tangent's cotangent: ∇(∇f · c) = H c
    got = flatten([out[names.index(w)] for w in wrt])
    np.testing.assert_allclose(got, H @ c, rtol=1e-4, atol=1e-5 * scale)


@pytest.mark.parametrize("seed", [900115, 900265, 900292])
def test_parameters_named_like_tangents_and_seeds(seed, tmp_path):
    """Programs whose parameters are called `dout`, `dx`, `dz`, `dy`, `tape`:
    the tangents of a generated gradient's JVP are made unique (`dz_1`)."""
    draw = helper_program if (seed - 900_000) % 3 == 0 else program
    prog = draw(RandomDraw(seed))
    _random_second(prog, import_program(prog, str(tmp_path), f"h6_{seed}"))


def _mixed(x, y, s=2.0):
    return np.sum(np.sin(x * y) * s + x ** 3 / (1.0 + y * y))


def test_hessian_called_again_with_other_numbers_and_kinds():
    """After a first call with number arguments, ``hessian`` calls the
    generated products straight (one unrolled function per kinds of the
    arguments): each call, with new numbers, with ints, with an array between
    them and with the default given, against central differences of the
    checked gradient."""
    for wrt in (("x", "y"), ("y",)):
        H = s2s_ad.hessian(_mixed, wrt=wrt if len(wrt) > 1 else wrt[0])
        for args in ([0.3, -0.7], [1.1, 0.4], [2, 1], [np.array([0.3, 0.5]), 0.2],
                     [0.9, -0.1, 3.0], [-0.4, 0.6]):
            got = H(*args)
            blocks = got if len(wrt) > 1 else ((got,),)
            names = list(inspect.signature(_mixed).parameters)
            sizes = [np.size(args[names.index(w)]) for w in wrt]
            full = np.block([[np.reshape(np.asarray(b, dtype=float), (m, n))
                              for b, n in zip(row, sizes)] for row, m in zip(blocks, sizes)])
            want = fd_hessian(_mixed, [a if isinstance(a, np.ndarray) else float(a)
                                       for a in args], wrt)
            np.testing.assert_allclose(full, want, rtol=1e-5, atol=1e-7)
            if not isinstance(args[0], np.ndarray):
                assert blocks[0][0].__class__ is float
