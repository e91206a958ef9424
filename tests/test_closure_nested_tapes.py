"""Gradient files of a helper calling a looping helper in its own loop, read
back: the tape of tapes in the helper's tape holds lists (the inner loop's
tapes), and the caller keeps those tapes of tapes in a loop of its own.

``mid_fwd`` keeps ``inner``'s tapes on a list, split per item of ``inner``'s
tape; the item that is ``inner``'s loop tape is a list of lists there, which
was refused ("a list grown at run time holds numbers or arrays, not a list of
any length") where ``mid``'s forward function writes it, also with ``mid``
called once. It is passed as its items, where each list starts and its
length (``s2s_ad/frontend/tape_offsets.py``), at any depth (a helper calling
``mid`` in its loop). Each file's gradient against central differences of
the function; its second derivatives (grad of every output, ``jvp``,
``vjp``) against central differences of the file's gradient, and against
``s2s_ad.hessian`` of the function; the CLI's second module run in a fresh
interpreter; NumPy arrays in the tapes, checked by the file's JVP."""

from __future__ import annotations

import numpy as np
import pytest

import s2s_ad
from s2s_ad.errors import SourceError
from tests.array_oracle import assert_file_jvp, make_function
from tests.modules import import_source, run_generated
from tests.test_closure import _cli, central_jacobian, checked_file_gradient, loaded
from tests.test_closure_readback import second_against_differences

SOURCE = '''
import math


def inner(x, n):
    s = x
    for _ in range(n):
        s = s * 0.9 + math.sin(s)
    return s


def mid(x, m):
    t = 0.0
    for j in range(m):
        t = t + inner(x * (j + 1), 3)
    return t


def example(x, y):
    acc = 0.0
    for k in range(4):
        acc = acc + mid(x + k * y, 2)
    return acc


def once(x, y):
    return mid(x, 3) * y + mid(y, 2)


def outer(x, p):
    u = 0.0
    for i in range(p):
        u = u + mid(x + 0.1 * i, 2) * 0.5
    return u


def depth_two(x, y):
    acc = 0.0
    for k in range(3):
        acc = acc + outer(x + k * y, 2)
    return acc


def outer4(x, q):
    v = 0.0
    for i in range(q):
        z = x * 0.5 + 0.1 * i
        v = v + outer(z, 2)
    return v


def outer5(x, q):
    w = 0.0
    for i in range(q):
        w = 0.3 * outer4(x + 0.05 * i, 2) + w
    return w


def depth_four(x, y):
    acc = 0.0
    for k in range(2):
        t = outer5(x + k * y, 2)
        acc = acc + t
    return acc


def inner_list(x, ws):
    s = x
    for w in ws:
        s = math.sin(s * w) + s * 0.5
    return s


def mid_list(x, ws):
    t = 0.0
    for j in range(len(ws)):
        t = t + inner_list(x + ws[j], ws)
    return t


def lists(x, y, ws):
    acc = 0.0
    for k in range(len(ws)):
        acc = acc + mid_list(x * (k + 1), ws) * y
    return acc


def inner_while(x, tol):
    s = x
    n = 0
    while abs(s) > tol and n < 6:
        s = s * 0.7 + 0.05 * math.sin(s)
        n = n + 1
    return s


def mid_while(x, m):
    t = 0.0
    j = 0
    while j < m:
        t = t + inner_while(x + j * 0.3, 0.05)
        j = j + 1
    return t


def whiles(x, y):
    acc = 0.0
    k = 0
    while k < 3:
        acc = acc + mid_while(x * y + k, 2)
        k = k + 1
    return acc


def inner_branch(x, n):
    s = x
    for i in range(n):
        if s > 0.5:
            s = s * 0.8 + math.cos(s)
        else:
            s = s + 0.3 * math.sin(s * i)
    return s


def mid_branch(x, m):
    t = 0.0
    for j in range(m):
        if x * j > 0.2:
            t = t + inner_branch(x * (j + 1), 3)
        else:
            t = t + x * j
    return t


def branches(x, y):
    acc = 0.0
    for k in range(4):
        if x * k > 0.3:
            acc = acc + mid_branch(x + k * y, 3)
        else:
            acc = acc + y * k
    return acc


def inner_arm(x, n):
    s = x
    if x > 0.6:
        for i in range(n):
            s = s * math.cos(s) + 0.2 * i
    else:
        s = s * s
    return s


def mid_arm(x, m):
    t = 0.0
    if x > 0.35:
        for j in range(m):
            t = t + inner_arm(x * (j + 1), 3)
    else:
        t = x * x
    return t


def arms(x, y):
    acc = 0.0
    for k in range(3):
        acc = acc + mid_arm(x + k * y, 2)
    return acc
'''

CASES = [
    ("example", [0.3, 0.2], ("x", "y")),
    ("once", [0.3, 0.2], ("x", "y")),
    ("depth_two", [0.3, 0.2], ("x", "y")),
    ("lists", [0.3, 0.7, [0.3, -0.7, 1.1, 0.4]], ("x", "y")),
    ("whiles", [0.8, 0.9], ("x", "y")),
    ("branches", [0.35, 0.2], ("x", "y")),
    ("branches", [0.6, -0.1], ("x", "y")),
    ("arms", [0.3, 0.07], ("x", "y")),
]


@pytest.mark.parametrize("name,args,wrt", CASES,
                         ids=[f"{n}-{k}" for k, (n, _, _) in enumerate(CASES)])
def test_second_derivative_from_the_file(name, args, wrt, tmp_path):
    fn = getattr(import_source(str(tmp_path), SOURCE, f"nested_{name}"), name)
    g = checked_file_gradient(fn, args, wrt, tmp_path, f"nested_grad_{name}")
    assert "_tapes" in s2s_ad.gradient_source(fn, wrt=wrt)  # tapes of tapes, not inlined
    H = central_jacobian(g, args, wrt)
    if len(args) == len(wrt):
        second_against_differences(g, args, wrt)
    else:
        # (the vjp of every parameter would differentiate the list `ws` too, which
        # `inner_list`'s tape returns: refused, located, with one helper as well)
        for k in range(len(wrt)):
            row = s2s_ad.grad(g, wrt=wrt, output=k)(*args)
            np.testing.assert_allclose(np.array(row, dtype=float), H[k], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.array(s2s_ad.hessian(fn, wrt=wrt)(*args), dtype=float), H,
                               rtol=1e-5, atol=1e-6)


def test_six_levels(tmp_path):
    """``depth_four``: six functions, each calling the next in a loop (the
    helpers' tapes of tapes read back hold 1986 lists in the second module,
    each popped at a counter: ``s2s_ad/frontend/pop_counters.py`` reads them
    in one walk of the function). A row of the second derivative from the
    file against central differences of its gradient."""
    fn = getattr(import_source(str(tmp_path), SOURCE, "nested_six_src"), "depth_four")
    args, wrt = [0.3, 0.2], ("x", "y")
    g = checked_file_gradient(fn, args, wrt, tmp_path, "nested_six_grad")
    H = central_jacobian(g, args, wrt)
    row = s2s_ad.grad(g, wrt=wrt, output=0)(*args)
    np.testing.assert_allclose(np.array(row, dtype=float), H[0], rtol=1e-5, atol=1e-6)


def test_cli_second_module_in_a_fresh_interpreter(tmp_path):
    """``s2s-ad grad f.py:example -o g1.py``, then ``s2s-ad grad
    g1.py:grad_example --output K -o g2.py``, run without s2s-ad."""
    src = tmp_path / "nested_cli_src.py"
    src.write_text(SOURCE, encoding="utf-8")
    first = tmp_path / "nested_cli_first.py"
    _cli("grad", f"{src}:example", "-o", str(first))
    g = loaded(tmp_path, first.read_text(encoding="utf-8"), "nested_cli_again", "grad_example")
    args = [0.3, 0.2]
    H = central_jacobian(g, args, ("x", "y"))
    for k in range(2):
        _cli("grad", f"{first}:grad_example", "--wrt", "x,y", "--output", str(k), "-o",
             str(tmp_path / f"nested_cli_second_{k}.py"))
        row = run_generated(tmp_path, f"nested_cli_second_{k}", "grad_grad_example", args)
        np.testing.assert_allclose(np.array(row, dtype=float), H[k], rtol=1e-5, atol=1e-6)


NUMPY = """
def inner(v, n):
    s = v
    for _ in range(n):
        s = np.sin(s) * 0.9 + s * 0.2
    return s


def mid(v, m):
    t = np.zeros_like(v)
    for j in range(m):
        t = t + inner(v * (j + 1), 3)
    return t


def f(x, y):
    acc = 0.0
    for k in range(3):
        acc = acc + np.sum(mid(x + k * y, 2))
    return acc
"""


NUMPY_DEEPER = """
def inner(v, tol):
    s = v
    n = 0
    while np.sum(s * s) > tol and n < 5:
        s = s * 0.8 + 0.1 * np.sin(s)
        n = n + 1
    return s


def mid(v, m):
    t = np.zeros_like(v)
    for j in range(m):
        if np.sum(v) > 0.0:
            t = t + inner(v * (j + 1), 0.01)
        else:
            t = t + v * j
    return t


def outer(v, p):
    u = 0.0
    for i in range(p):
        u = u + np.sum(mid(v + 0.1 * i, 2) ** 2)
    return u


def f(x, y: float):
    acc = 0.0
    for k in range(2):
        acc = acc + np.sum(outer(x * y + k, 2))
    return acc
"""


@pytest.mark.parametrize("source,points", [
    (NUMPY, [[np.array([0.3, -0.4, 0.8]), 0.2]]),
    # a while loop, a branch and one level more
    (NUMPY_DEEPER, [[np.array([0.3, -0.4, 0.8]), 0.7], [np.array([-0.3, -0.4, 0.2]), 0.7]]),
], ids=["numpy", "numpy_deeper"])
def test_numpy_arrays_in_the_tapes(source, points, tmp_path):
    env: dict = {}
    for name in ("inner", "mid", "outer", "f"):
        if f"def {name}(" in source:
            env[name] = make_function(source, name, dict(env))
    f = env["f"]
    text = s2s_ad.gradient_source(f, wrt=[0, 1])
    assert "inner_1_tapes" in text
    g = import_source(str(tmp_path), text, f"nested_numpy_{len(env)}").grad_f
    for point in points:
        assert_file_jvp(f, g, point, [np.array([0.5, -0.2, 0.3]), 0.4])


def test_a_list_of_lists_read_by_the_forward_function_is_refused_located(tmp_path):
    """A file edited so that ``mid_fwd`` reads a tape back from its tape of
    tapes (a form the split follows, into one read per item): refused at that
    read, saying what is followed (the lists are taken apart where written)."""
    fn = getattr(import_source(str(tmp_path), SOURCE, "nested_edited_src"), "example")
    text = s2s_ad.gradient_source(fn, wrt=("x", "y"))
    written = "        inner_1_tapes[j] = inner_1_tape"
    assert written in text
    text = text.replace(written, written + "\n        again = inner_1_tapes[j]", 1)
    g = loaded(tmp_path, text, "nested_edited", "grad_example")
    with pytest.raises(SourceError) as err:
        s2s_ad.grad(g, wrt=("x", "y"), output=0)(0.3, 0.2)
    message = str(err.value)
    assert "nested_edited.py:" in message and "again = inner_1_tapes[j]" in message
    assert "a list of a helper's tapes holding lists" in message
