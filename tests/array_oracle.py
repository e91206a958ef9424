"""Independent references for array gradients: central finite differences.

Nothing here uses s2s-ad's transform. :func:`fd_gradient` perturbs one
element at a time, in float64, so it suits the small random shapes tests use.
"""

from __future__ import annotations

import inspect
import re

import numpy as np


def fd_gradient(f, args: list, i: int, h: float = 1e-6) -> np.ndarray:
    """∂f/∂args[i], elementwise central differences (f returns a scalar).

    With h = 1e-6 on O(1) inputs the truncation error (~h²·f''') and the
    rounding error (~1e-16·|f|/h) are both near 1e-10, so comparisons at
    rtol 1e-5 leave a wide margin."""
    x = np.array(args[i], dtype=np.float64)
    grad = np.zeros_like(x)
    for k in np.ndindex(*x.shape):
        up, down = x.copy(), x.copy()
        up[k] += h
        down[k] -= h
        a_up, a_down = list(args), list(args)
        a_up[i], a_down[i] = (up if x.shape else float(up)), (down if x.shape else float(down))
        grad[k] = (float(np.sum(f(*a_up))) - float(np.sum(f(*a_down)))) / (2 * h)
    return grad


def assert_gradients(f, args: list, wrt: list[int], *, rtol: float = 1e-5, atol: float = 1e-7):
    """s2s-ad's gradient of ``f`` at ``args`` matches finite differences, with
    the shape of each argument."""
    import s2s_ad

    got = s2s_ad.grad(f, wrt=list(wrt))(*args)
    assert len(got) == len(wrt)
    for i, g in zip(wrt, got):
        expected = fd_gradient(f, args, i)
        assert np.shape(g) == np.shape(args[i]), (i, np.shape(g), np.shape(args[i]))
        np.testing.assert_allclose(np.asarray(g, dtype=np.float64), expected, rtol=rtol, atol=atol,
                                   err_msg=f"gradient with respect to argument {i}")
    return got


def assert_file_jvp(f, g, args: list, directions: list, h: float = 1e-6):
    """``g`` (the gradient of ``f`` with respect to every argument, from a
    module read back from its file) matches central differences of ``f`` at
    ``args``, and its JVP along ``directions`` matches central differences
    of ``g`` itself."""
    import s2s_ad

    first = g(*args)
    for i, got in enumerate(first):
        np.testing.assert_allclose(got, fd_gradient(f, args, i), rtol=1e-6, atol=1e-8)
    names = list(inspect.signature(g).parameters)[:len(args)]
    _, tangent = s2s_ad.jvp(g, wrt=tuple(range(len(args))))(
        *args, **{f"d{n}": d for n, d in zip(names, directions)})
    up = g(*[a + h * d for a, d in zip(args, directions)])
    down = g(*[a - h * d for a, d in zip(args, directions)])
    for t, u, d in zip(tangent, up, down):
        np.testing.assert_allclose(t, (np.asarray(u) - np.asarray(d)) / (2 * h),
                                   rtol=1e-5, atol=1e-6)


def rand(rng: np.random.Generator, shape, lo: float = -2.0, hi: float = 2.0):
    """A random array (or float for shape ()) in [lo, hi)."""
    if shape == ():
        return float(rng.uniform(lo, hi))
    return rng.uniform(lo, hi, size=shape)


def make_function(source: str, name: str = "f", env: dict | None = None):
    """Define the function in ``source`` with its text registered in
    linecache, so s2s-ad can read it (parametrised tests build functions)."""
    import hashlib
    import linecache

    filename = f"<test {hashlib.sha1(source.encode()).hexdigest()[:10]}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    ns = {"np": np, **(env or {})}
    exec(compile(source, filename, "exec"), ns)
    return ns[name]


def on_arrays(text: str) -> str:
    """A generated module's text with each reverse loop run on Python lists of
    array elements (``y_l, dy_l = float_lists((y,), (dy,), (a,))``, s2s_ad's
    reverse/element_lists.py) read on the arrays: ``y_l[k]`` as ``y[k]``, without
    the statements that make the lists and put them back."""
    out = []
    names: dict[str, str] = {}
    for line in text.splitlines():
        m = re.match(r"\s*\(?([\w, ]+?),?\)? = float_lists(?:_\d+)?\(\(([\w, ]*?),?\), \(([\w, ]*?),?\),", line)
        if m:
            lists = [n.strip() for n in m.group(1).split(",")]
            arrays = [n.strip() for n in (m.group(2) + "," + m.group(3)).split(",") if n.strip()]
            names.update(zip(lists, arrays))
            continue
        if re.match(r"\s*put_floats(_\d+)?\(", line):
            continue
        for l_name, a in names.items():
            line = re.sub(rf"\b{l_name}\[", f"{a}[", line)
        out.append(line)
    return "\n".join(out) + "\n"
