"""Forward mode of the whole-adjoint NumPy and SciPy rules that are neither
linear nor bilinear (s2s_ad/forward/recipes.py): np.prod and np.cumprod
(with elements exactly 0), np.var, np.std, np.sort (np.median), and the
linear algebra of np.linalg and scipy.linalg.

Each tangent is checked against central differences in float64 along a
random direction, at random points (well-conditioned matrices, symmetric
positive definite ones where the function needs them; axis None, an int, a
negative int, a tuple; keepdims; stacks of matrices); each second
derivative (``hvp``, ``hessian``, ``jvp(grad(f))``, all reading the JVP
module) against differences of gradients s2s-ad takes no part in: central
differences of central differences, or of a gradient written by hand; and
the CLI's ``jvp -o`` and ``hessian -o`` modules in a fresh interpreter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import s2s_ad
from array_oracle import make_function

RNG = np.random.default_rng(20261206)
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _matrix(shape, kind):
    n = shape[-1]
    a = RNG.normal(size=shape)
    if kind == "well":
        return a + 3 * np.eye(n)
    if kind == "spd":
        return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)
    if kind == "sym":  # distinct eigenvalues, well apart
        s = 0.1 * (a + np.swapaxes(a, -1, -2)) + np.diag(np.arange(1.0, n + 1) * 1.5)
        return s
    if kind == "lower":
        return np.tril(a) + 3 * np.eye(n)
    if kind == "upper":
        return np.triu(a) + 3 * np.eye(n)
    raise ValueError(kind)


def point(spec):
    """A random argument: (shape, kind), kind "any", "zeros" (some elements
    exactly 0, two in one row), "pos", or a matrix kind of :func:`_matrix`."""
    shape, kind = spec
    if kind == "any":
        return RNG.normal(size=shape)
    if kind == "pos":
        return RNG.uniform(0.5, 2.0, size=shape)
    if kind == "zeros":
        x = RNG.normal(size=shape)
        flat = x.reshape(-1, shape[-1])
        flat[0, 1] = 0.0                     # one zero in a row
        if len(flat) > 1:
            flat[-1, 0] = flat[-1, 2] = 0.0  # two zeros in another
        return x
    return _matrix(shape, kind)


# (expression over x, y; the arguments) — each the operand of np.sum(np.sin(...))
CASES = [
    ("np.prod(x)", [((5,), "any")]),
    ("np.prod(x)", [((5,), "zeros")]),
    ("np.prod(x, axis=1)", [((2, 4, 3), "zeros")]),
    ("np.prod(x, axis=-1, keepdims=True)", [((3, 4), "zeros")]),
    ("np.prod(x, axis=0)", [((3, 4), "any")]),
    ("np.prod(x, keepdims=True)", [((2, 3), "any")]),
    ("np.cumprod(x)", [((2, 3), "zeros")]),
    ("np.cumprod(x, axis=0)", [((4, 3), "any")]),
    ("np.cumprod(x, axis=-1)", [((2, 5), "zeros")]),
    ("np.cumprod(x, axis=1)", [((2, 4, 3), "zeros")]),
    ("np.var(x)", [((3, 4), "any")]),
    ("np.var(x, axis=0, ddof=1)", [((3, 4), "any")]),
    ("np.var(x, axis=(0, -1), keepdims=True)", [((2, 3, 4), "any")]),
    ("np.std(x)", [((3, 4), "any")]),
    ("np.std(x, axis=-1, ddof=1, keepdims=True)", [((3, 4), "any")]),
    ("np.std(x, axis=(1, 2))", [((2, 3, 4), "any")]),
    ("np.sort(x)", [((3, 4), "any")]),
    ("np.sort(x, axis=0)", [((3, 4), "any")]),
    ("np.sort(np.ravel(x))", [((3, 4), "any")]),
    ("np.median(x)", [((3, 4), "any")]),
    ("np.median(x, axis=1)", [((3, 5), "any")]),
    ("np.median(x, axis=-1)", [((2, 3, 4), "any")]),
    ("np.linalg.inv(x)", [((3, 3), "well")]),
    ("np.linalg.inv(x)", [((2, 3, 3), "well")]),
    ("np.linalg.det(x)", [((3, 3), "well")]),
    ("np.linalg.det(x)", [((2, 3, 3), "well")]),
    ("np.linalg.slogdet(x)[1] * np.linalg.slogdet(x)[0]", [((3, 3), "well")]),
    ("np.linalg.slogdet(x)[1]", [((2, 3, 3), "well")]),
    ("np.linalg.solve(x, y)", [((3, 3), "well"), ((3,), "any")]),
    ("np.linalg.solve(x, y)", [((3, 3), "well"), ((3, 2), "any")]),
    ("np.linalg.solve(x, y)", [((2, 3, 3), "well"), ((3,), "any")]),
    ("np.linalg.solve(x, y)", [((2, 3, 3), "well"), ((2, 3, 2), "any")]),
    ("np.linalg.solve(x, y)", [((2, 3, 3), "well"), ((3, 2), "any")]),
    ("np.linalg.solve(x, np.ones(3))", [((3, 3), "well")]),
    ("np.linalg.solve(np.eye(3) * 2.0 + 1.0, x)", [((3, 2), "any")]),
    ("np.linalg.cholesky(x)", [((3, 3), "spd")]),
    ("np.linalg.cholesky(x)", [((2, 3, 3), "spd")]),
    ("np.linalg.eigvalsh(x)", [((3, 3), "sym")]),
    ("np.linalg.eigh(x)[0]", [((2, 3, 3), "sym")]),
    ("np.linalg.eigh(x)[1] ** 2", [((3, 3), "sym")]),
    ("np.linalg.eigh(x)[1] ** 2", [((2, 3, 3), "sym")]),
    ("np.linalg.pinv(x)", [((4, 3), "any")]),
    ("np.linalg.pinv(x)", [((2, 4), "any")]),
]
IDS = [f"{e}|{'/'.join(str(s) + k for s, k in a)}" for e, a in CASES]

SCIPY = [
    ("solve_triangular(x, y, lower=True)", [((3, 3), "lower"), ((3,), "any")]),
    ("solve_triangular(x, y, lower=False)", [((3, 3), "upper"), ((3, 2), "any")]),
    ("cho_factor(x, lower=True)[0]", [((3, 3), "spd")]),
    ("cho_factor(x)[0]", [((3, 3), "spd")]),
    ("cho_solve(cho_factor(x, lower=True), y)", [((3, 3), "spd"), ((3,), "any")]),
    ("cho_solve(cho_factor(x), y)", [((3, 3), "spd"), ((3, 2), "any")]),
]


def _function(expr: str, n: int):
    params = "x, y" if n == 2 else "x"
    env = {}
    if "cho_" in expr or "solve_triangular" in expr:
        linalg = pytest.importorskip("scipy.linalg")
        env = {k: getattr(linalg, k) for k in ("solve_triangular", "cho_factor", "cho_solve")}
    return make_function(f"def f({params}):\n    return np.sum(np.sin({expr}))\n", env=env)


def _directional(f, args, direction, h=1e-6):
    plus = f(*[a + h * d for a, d in zip(args, direction)])
    minus = f(*[a - h * d for a, d in zip(args, direction)])
    return (plus - minus) / (2 * h)


def _fd_gradient(f, args, h=1e-5):
    """Central differences of ``f`` for every element of every argument."""
    out = []
    for i, a in enumerate(args):
        g = np.zeros_like(a)
        for k in np.ndindex(a.shape):
            e = np.zeros_like(a)
            e[k] = h
            up = list(args)
            down = list(args)
            up[i], down[i] = a + e, a - e
            g[k] = (f(*up) - f(*down)) / (2 * h)
        out.append(g)
    return out


def _fd_hvp(f, args, v, h=1e-4):
    """H·v by central differences (along v) of central-difference gradients."""
    up = _fd_gradient(f, [a + h * d for a, d in zip(args, v)])
    down = _fd_gradient(f, [a - h * d for a, d in zip(args, v)])
    return [(u - w) / (2 * h) for u, w in zip(up, down)]


def _check_jvp(expr, specs):
    f = _function(expr, len(specs))
    args = [point(s) for s in specs]
    direction = [RNG.normal(size=a.shape) for a in args]
    names = ["dx", "dy"][:len(args)]
    value, tangent = s2s_ad.jvp(f)(*args, **dict(zip(names, direction)))
    assert np.isclose(value, f(*args), rtol=1e-12, atol=1e-12)
    ref = _directional(f, args, direction)
    assert np.isclose(tangent, ref, rtol=1e-6, atol=1e-7), (tangent, ref)
    # each operand alone carrying a tangent (the other's zero)
    for k in range(len(args)):
        wrt = ["x", "y"][k]
        alone = [d if i == k else np.zeros_like(d) for i, d in enumerate(direction)]
        _, t = s2s_ad.jvp(f, wrt=[wrt])(*args, **{"d" + wrt: direction[k]})
        assert np.isclose(t, _directional(f, args, alone), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("expr,specs", CASES, ids=IDS)
def test_jvp_against_central_differences(expr, specs):
    _check_jvp(expr, specs)


@pytest.mark.parametrize("expr,specs", SCIPY, ids=[e for e, _ in SCIPY])
def test_scipy_jvp_against_central_differences(expr, specs):
    _check_jvp(expr, specs)


HVP = [CASES[i] for i in (1, 2, 3, 6, 9, 12, 15, 18, 21, 23, 25, 26, 28, 30, 31, 35, 36, 38,
                          39, 40, 41)] + [SCIPY[0], SCIPY[3], SCIPY[5]]


@pytest.mark.parametrize("expr,specs", HVP, ids=[f"{e}|{s[0][0]}" for e, s in HVP])
def test_hvp_against_differences_of_differences(expr, specs):
    """hvp (the gradient of the JVP module) against central differences of
    central-difference gradients."""
    f = _function(expr, len(specs))
    args = [point(s) for s in specs]
    v = [RNG.normal(size=a.shape) for a in args]
    wrt = ("x", "y")[:len(args)]
    got = s2s_ad.hvp(f, wrt=wrt if len(args) > 1 else "x")(*args, tuple(v) if len(args) > 1
                                                            else v[0])
    got = list(got) if len(args) > 1 else [got]
    for g, ref in zip(got, _fd_hvp(f, args, v)):
        scale = max(1.0, float(np.max(np.abs(ref))))
        np.testing.assert_allclose(g, ref, rtol=1e-4, atol=1e-4 * scale)


def _others(x, skip):
    """The product of the elements of x not at the flat positions ``skip``."""
    flat = x.ravel()
    return float(np.prod([flat[k] for k in range(flat.size) if k not in skip]))


@pytest.mark.parametrize("zeros", [0, 1, 2, 3])
def test_hessian_of_prod_with_zeros_against_a_written_out_one(zeros):
    """hessian of np.prod at points with 0, 1, 2 and 3 elements exactly 0
    against ∂²/∂xᵢ∂xⱼ = the product of the other elements (0 on the
    diagonal), and hvp against central differences of the gradient written
    out the same way."""
    f = make_function("def f(x):\n    return np.prod(x)\n")
    x = RNG.uniform(0.5, 1.5, size=(2, 3)) * np.array([1, -1, 1])
    x.ravel()[[4, 1, 3][:zeros]] = 0.0
    n = x.size
    want = np.zeros((n, n))
    for i in range(n):
        for j in range(n):
            if i != j:
                want[i, j] = _others(x, {i, j})
    got = s2s_ad.hessian(f)(x)
    np.testing.assert_allclose(got.reshape(n, n), want, rtol=1e-12, atol=1e-15)

    def written(x):
        return np.array([_others(x, {i}) for i in range(x.size)]).reshape(x.shape)
    v = RNG.normal(size=x.shape)
    h = 1e-5
    ref = (written(x + h * v) - written(x - h * v)) / (2 * h)
    np.testing.assert_allclose(s2s_ad.hvp(f)(x, v), ref, rtol=1e-8, atol=1e-8)


def test_hessian_of_cumprod_and_var_with_zeros():
    """hessian of a function using np.cumprod (a zero in the array, so the
    quadratic branch) and np.std, against differences of differences."""
    f = make_function("def f(x):\n    c = np.cumprod(x, axis=1)\n"
                      "    return np.sum(c * c) + np.std(x) * np.var(x, axis=0)[1]\n")
    x = point(((2, 3), "zeros"))
    got = s2s_ad.hessian(f)(x)
    cols = [_fd_hvp(f, [x], [np.eye(x.size)[k].reshape(x.shape)])[0] for k in range(x.size)]
    want = np.stack(cols, axis=-1).reshape(x.shape + x.shape)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)


def test_jvp_of_grad_of_log_determinant():
    """jvp(grad(f)) of f = log|det A| + Σ x², x = solve(A, b), against
    central differences of the gradient written out, A⁻ᵀ − 2·A⁻ᵀ·x·xᵀ."""
    f = make_function("def f(a, b):\n    s, l = np.linalg.slogdet(a)\n"
                      "    x = np.linalg.solve(a, b)\n    return l + np.sum(x * x)\n")

    def written(a, b):
        ait = np.linalg.inv(a).T
        x = np.linalg.solve(a, b)
        return ait - 2 * ait @ np.outer(x, x)
    a, b = _matrix((3, 3), "well"), RNG.normal(size=3)
    v = RNG.normal(size=(3, 3))
    g, hv = s2s_ad.jvp(s2s_ad.grad(f, wrt="a"), wrt="a")(a, b, da=v)
    np.testing.assert_allclose(g, written(a, b), rtol=1e-10)
    h = 1e-5
    ref = (written(a + h * v, b) - written(a - h * v, b)) / (2 * h)
    np.testing.assert_allclose(hv, ref, rtol=1e-6, atol=1e-8)


def test_equal_eigenvalues_refuse_the_eigenvector_tangent():
    """The eigenvectors are not a function of the matrix where two
    eigenvalues coincide: the tangent raises instead of returning inf or
    nan; the eigenvalues' tangent is defined there."""
    vectors = make_function("def f(x):\n    return np.sum(np.linalg.eigh(x)[1] ** 2)\n")
    values = make_function("def f(x):\n    return np.sum(np.linalg.eigvalsh(x) ** 2)\n")
    x, v = np.diag([1.0, 1.0, 2.0]), RNG.normal(size=(3, 3))
    with pytest.raises(ValueError, match="eigenvalues are equal"):
        s2s_ad.jvp(vectors)(x, dx=v)
    _, t = s2s_ad.jvp(values)(x, dx=v)
    assert np.isclose(t, _directional(values, [x], [v]), rtol=1e-6)


PROGRAM = textwrap.dedent('''
    import numpy as np


    def model(a, x):
        L = np.linalg.cholesky(a)
        s, logdet = np.linalg.slogdet(a)
        z = np.linalg.solve(L, x.T)
        spread = np.std(x, axis=0, ddof=1)
        return logdet + np.sum(z * z) + np.prod(x[:, 0]) + np.sum(spread * np.median(x, axis=0))
''')

RUN = textwrap.dedent('''
    import json, sys
    import numpy as np
    sys.path.insert(0, sys.argv[1])
    import jvp_model, hessian_model
    a = np.array(json.loads(sys.argv[2])); x = np.array(json.loads(sys.argv[3]))
    da = np.array(json.loads(sys.argv[4])); dx = np.array(json.loads(sys.argv[5]))
    value, tangent = jvp_model.jvp_model(a, x, da=da, dx=dx)
    H = hessian_model.hessian_model(a, x)
    print(json.dumps({"value": float(value), "tangent": float(tangent),
                      "hxx": np.asarray(H[1][1]).tolist()}))
''')


def test_cli_jvp_and_hessian_modules_in_a_fresh_interpreter(tmp_path):
    """`s2s-ad jvp file.py:model -o` and `s2s-ad hessian file.py:model -o`
    of a function using cholesky, slogdet, solve, std, prod (a zero in the
    column) and median, imported and run in a fresh interpreter."""
    (tmp_path / "model.py").write_text(PROGRAM)
    env = dict(os.environ, PYTHONPATH=ROOT)
    for cmd, out in (("jvp", "jvp_model.py"), ("hessian", "hessian_model.py")):
        r = subprocess.run([sys.executable, "-m", "s2s_ad", cmd, str(tmp_path / "model.py") +
                            ":model", "-o", str(tmp_path / out)], capture_output=True,
                           text=True, timeout=120, env=env)
        assert r.returncode == 0, r.stderr
    ns: dict = {}
    exec(PROGRAM, ns)
    model = ns["model"]
    a, x = _matrix((3, 3), "spd"), RNG.normal(size=(4, 3))
    x[1, 0] = 0.0
    da, dx = RNG.normal(size=(3, 3)), RNG.normal(size=(4, 3))
    (tmp_path / "run.py").write_text(RUN)
    r = subprocess.run([sys.executable, str(tmp_path / "run.py"), str(tmp_path)] +
                       [json.dumps(v.tolist()) for v in (a, x, da, dx)],
                       capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert np.isclose(got["value"], model(a, x))
    assert np.isclose(got["tangent"], _directional(model, [a, x], [da, dx]), rtol=1e-6)
    hxx = np.array(got["hxx"])
    for k in range(x.size):
        e = np.eye(x.size)[k].reshape(x.shape)
        ref = _fd_hvp(model, [a, x], [np.zeros_like(a), e])[1]
        np.testing.assert_allclose(hxx[..., k // 3, k % 3], ref, rtol=1e-4, atol=1e-4)


POSITIONS = textwrap.dedent('''
    import numpy as np


    def step(a, x):
        return np.linalg.solve(a, x) * np.prod(x) + np.linalg.det(a)


    def inner(a, x):
        return step(a, x) + np.var(x)


    def f(a, x, n):
        s = 0.0
        for i in range(n):
            if i % 2 == 0:
                x = inner(a, x)
            else:
                x = np.cumprod(x) * np.std(x) + np.sort(x)
            s = s + np.sum(np.linalg.inv(a) @ x)
        return s
''')


def test_in_a_helper_a_helper_of_a_helper_a_loop_and_a_branch():
    """The tangents in every position (jvp, jacfwd) and the second
    derivatives through them (hvp) against central differences."""
    f = make_function(POSITIONS, "f")
    a, x = _matrix((3, 3), "well"), RNG.uniform(0.5, 1.0, size=3)
    da, dx = RNG.normal(size=(3, 3)), RNG.normal(size=3)
    _, t = s2s_ad.jvp(f, wrt=("a", "x"))(a, x, 4, da=da, dx=dx)
    assert np.isclose(t, _directional(lambda a, x: f(a, x, 4), [a, x], [da, dx]), rtol=1e-6)
    J = s2s_ad.jacfwd(f, wrt="x")(a, x, 4)
    np.testing.assert_allclose(J, _fd_gradient(lambda x: f(a, x, 4), [x])[0], rtol=1e-6)
    got = s2s_ad.hvp(f, wrt=("a", "x"))(a, x, 4, (da, dx))
    for g, ref in zip(got, _fd_hvp(lambda a, x: f(a, x, 4), [a, x], [da, dx])):
        np.testing.assert_allclose(g, ref, rtol=1e-4, atol=1e-4 * max(1.0, np.max(np.abs(ref))))


LOOPING_HELPER = textwrap.dedent('''
    import numpy as np


    def h(a, x, n):
        for i in range(n):
            x = np.linalg.solve(a, x) + np.prod(x) * np.cumprod(x)
            x = x / np.std(x)
        return x


    def f(a, x):
        y = h(a, x, 2)
        return np.sum(np.sort(y) * np.arange(3.0)) + np.linalg.slogdet(a)[1]
''')


def test_in_a_helper_with_its_own_jvp_function():
    """A helper with a loop (not copied into the caller: its own jvp_h),
    an element of x exactly 0: jvp and hvp against central differences.
    Its own generator: ``np.sort`` has a kink where two items of ``y`` meet,
    and a draw of the file's shared generator (which depends on the order
    the tests run in) once put a central difference across one."""
    f = make_function(LOOPING_HELPER, "f")
    assert "def jvp_h" in s2s_ad.jvp_source(f, wrt=("a", "x"))
    rng = np.random.default_rng(401)
    a, x = rng.normal(size=(3, 3)) + 3 * np.eye(3), rng.uniform(0.5, 1.0, size=3)
    x[1] = 0.0
    da, dx = rng.normal(size=(3, 3)), rng.normal(size=3)
    y = make_function(LOOPING_HELPER, "h")(a, x, 2)
    assert np.min(np.diff(np.sort(y))) > 1e-3  # away from the kink
    _, t = s2s_ad.jvp(f, wrt=("a", "x"))(a, x, da=da, dx=dx)
    assert np.isclose(t, _directional(f, [a, x], [da, dx]), rtol=1e-6)
    got = s2s_ad.hvp(f, wrt="x")(a, x, dx)
    ref = _fd_hvp(lambda x: f(a, x), [x], [dx])[0]
    np.testing.assert_allclose(got, ref, rtol=1e-4, atol=1e-4 * max(1.0, np.max(np.abs(ref))))
