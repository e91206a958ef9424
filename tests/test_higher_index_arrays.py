"""Second derivatives of NumPy functions using integer index arrays computed
from ints (tests/index_arrays_src.py: ``np.arange``, ``np.repeat`` by counts,
``np.tril_indices``, a concatenation of a comprehension, writes by them into
a fresh array). ``hvp``, ``hessian``, ``jvp`` and ``vjp`` of the generated
gradient read the JVP module's text, which holds the checks s2s-ad writes
around index arrays (a write picks distinct elements; a parameter an index
array is made from is an int). Each product is compared with central
differences (float64) of the gradient, itself checked first against central
differences of the function, at the top level, in a helper called in a loop
and under a branch; the CLI's ``s2s-ad hessian`` module runs in a fresh
interpreter."""

import os
import subprocess
import sys

import numpy as np
import pytest

import index_arrays_src as m
import s2s_ad
from array_oracle import fd_gradient

HERE = os.path.dirname(__file__)
ROOT = os.path.dirname(HERE)
rng = np.random.default_rng(1418)

CASES = {
    # name: (arguments, position of the array differentiated)
    "tril_write": ([0.3 * rng.normal(size=10), 4], 0),
    "inline_triangle": ([rng.normal(size=(3, 6)), rng.normal(size=(4, 2)), 4], 0),
    "shifted_read": ([rng.normal(size=5), 4], 0),
    "mixture": ([rng.normal(size=2), rng.normal(size=(2, 3)), 0.3 * rng.normal(size=(2, 3)),
                 rng.normal(size=(2, 3)), rng.normal(size=(4, 3)), 3], 0),
    "in_a_loop": ([rng.normal(size=(2, 3)), rng.normal(size=(3, 2)), 3], 0),  # helper in a loop
    "in_a_branch": ([rng.normal(size=(2, 3)), rng.normal(size=(3, 2)), 3], 0),  # under a branch
    "written_in_a_loop": ([rng.normal(size=(3, 6)), 4], 0),
    "dtype_constructors": ([rng.normal(size=4)], 0),
}


def _checked_gradient(f, args, i):
    """The generated gradient, after checking it against central differences of f."""
    g = s2s_ad.grad(f, wrt=i)
    np.testing.assert_allclose(g(*args), fd_gradient(f, args, i), rtol=1e-5, atol=1e-7)
    return g


def _fd_hvp(g, args, i, v, h=1e-5):
    """Central differences of the gradient ``g`` along ``v``."""
    up, down = list(args), list(args)
    up[i] = args[i] + h * v
    down[i] = args[i] - h * v
    return (np.asarray(g(*up)) - np.asarray(g(*down))) / (2 * h)


@pytest.mark.parametrize("name", sorted(CASES))
def test_hvp_jvp_and_vjp_of_the_gradient(name):
    args, i = CASES[name]
    f = getattr(m, name)
    g = _checked_gradient(f, args, i)
    v = rng.normal(size=np.shape(args[i]))
    want = _fd_hvp(g, args, i, v)
    got = s2s_ad.hvp(f, wrt=i)(*args, v)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    first = list(__import__("inspect").signature(g).parameters)[i]
    value, tangent = s2s_ad.jvp(g, wrt=i)(*args, **{"d" + first: v})
    np.testing.assert_allclose(value, g(*args), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(tangent, want, rtol=1e-5, atol=1e-6)
    # vjp of the gradient: H v for every parameter of f (the ints get 0.0), the seed last
    _, back = s2s_ad.vjp(g, *args)
    cotangents = back(v)
    np.testing.assert_allclose(cotangents[i], want, rtol=1e-5, atol=1e-6)
    assert all(c == 0.0 for k, c in enumerate(cotangents[:-1]) if isinstance(args[k], int))
    np.testing.assert_allclose(cotangents[-1], np.sum(g(*args) * v), rtol=1e-10)


@pytest.mark.parametrize("name", ["tril_write", "shifted_read"])
def test_hessian_against_differences_of_the_gradient(name):
    args, i = CASES[name]
    f = getattr(m, name)
    g = _checked_gradient(f, args, i)
    n = np.size(args[i])
    want = np.stack([_fd_hvp(g, args, i, e) for e in np.eye(n)], axis=-1)
    got = s2s_ad.hessian(f, wrt=i)(*args)
    assert got.shape == (n, n)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got, got.T, rtol=1e-8, atol=1e-9)


def test_one_module_for_every_size():
    """The index arrays are computed from ``d`` where the code runs, at second order too."""
    product = s2s_ad.hvp(m.tril_write, wrt=0)
    for d in (3, 4, 5):
        args = [0.3 * rng.normal(size=d * (d - 1) // 2 + d), d]
        g = _checked_gradient(m.tril_write, args, 0)
        v = rng.normal(size=args[0].shape)
        np.testing.assert_allclose(product(*args, v), _fd_hvp(g, args, 0, v), rtol=1e-5,
                                   atol=1e-6)


def folded_write(x, d: int):
    """Writes ``x`` at ``np.arange(d) % k``: distinct positions for d <= k only."""
    idx = np.arange(d) % 3
    y = np.zeros(3)
    y[idx] = np.sin(x)
    return np.sum(y * y * x[:3])


def test_a_repeated_position_still_stops_the_second_order_code():
    """The distinct-write check is read back from the JVP module and kept by
    its gradient: distinct positions give the product, a repeated one raises
    where the code runs, as the first-order gradient does."""
    product = s2s_ad.hvp(folded_write, wrt=0)
    x = rng.normal(size=3)
    g = _checked_gradient(folded_write, [x, 3], 0)
    v = rng.normal(size=3)
    np.testing.assert_allclose(product(x, 3, v), _fd_hvp(g, [x, 3], 0, v), rtol=1e-5, atol=1e-6)
    x4 = rng.normal(size=4)
    with pytest.raises(ValueError, match="writes an element more than once"):
        g(x4, 4)
    with pytest.raises(ValueError, match="writes an element more than once"):
        product(x4, 4, rng.normal(size=4))


def test_cli_hessian_module_in_a_fresh_interpreter(tmp_path):
    args, _ = CASES["tril_write"]
    out = tmp_path / "hess_tril.py"
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "hessian",
                           os.path.join(HERE, "index_arrays_src.py") + ":tril_write",
                           "--wrt", "v", "-o", str(out)], capture_output=True, text=True,
                          cwd=ROOT)
    assert done.returncode == 0, done.stderr
    np.save(tmp_path / "v.npy", args[0])
    run = subprocess.run([sys.executable, "-c",
                          "import numpy as np, hess_tril; v = np.load('v.npy'); "
                          "np.save('H.npy', hess_tril.hessian_tril_write(v, 4))"],
                         capture_output=True, text=True, cwd=tmp_path,
                         env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert run.returncode == 0, run.stderr
    g = _checked_gradient(m.tril_write, args, 0)
    want = np.stack([_fd_hvp(g, args, 0, e) for e in np.eye(10)], axis=-1)
    np.testing.assert_allclose(np.load(tmp_path / "H.npy"), want, rtol=1e-5, atol=1e-6)


def test_einsum_of_the_parameter():
    """The second order with respect to an operand of ``np.einsum`` (forward
    mode: the einsum with that operand's tangent, one term per operand),
    against central differences of the checked gradient."""
    args, _ = CASES["mixture"]
    g = _checked_gradient(m.mixture, args, 3)
    v = rng.normal(size=np.shape(args[3]))
    got = s2s_ad.hvp(m.mixture, wrt=3)(*args, v)
    np.testing.assert_allclose(got, _fd_hvp(g, args, 3, v), rtol=1e-5, atol=1e-6)
