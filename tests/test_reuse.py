"""emit/reuse.py: in the gradient of a JVP module (Hessian-vector products),
a value the forward pass holds is read again instead of computed again —
only where the name's value provably never changes. Every second derivative
here is compared with an independent reference (sympy, or central
differences of a hand-written gradient)."""

import ast
import math
import textwrap

import numpy as np
import pytest
import sympy

import s2s_ad
from s2s_ad.emit import reuse
from s2s_ad.emit.code import Block, CodeFunction, Stmt


def _function(src: str) -> CodeFunction:
    """A CodeFunction whose statements are those of ``src``'s ``def``."""
    tree = ast.parse(textwrap.dedent(src)).body[0]

    def stmts(nodes):
        out = []
        for n in nodes:
            if isinstance(n, (ast.For, ast.While, ast.If)):
                out.append(Block(n, stmts(n.body), stmts(getattr(n, "orelse", []))))
            else:
                out.append(Stmt(n))
        return out

    ret = tree.body[-1]
    return CodeFunction(tree.name, tree.args, stmts(tree.body[:-1]), ret.value, None, [])


def _text(fn: CodeFunction) -> list[str]:
    return [ast.unparse(s.node) if isinstance(s, Stmt) else "block" for s in fn.body]


def test_a_forward_value_is_read_again():
    fn = _function("""
        def g(H, d):
            t5 = H * H
            t6 = 1 - t5
            dt2 = d * (1 - H * H)
            e = math.cos(H) + d
            f = math.cos(H) * 2.0
            c = math.cos(H)
            k = math.cos(H) * 2.0 + (math.cos(H) + d)
            return dt2
        """)
    reuse.run(fn, {"math": "math"})
    assert _text(fn)[2:] == ["dt2 = d * t6", "e = math.cos(H) + d", "f = math.cos(H) * 2.0",
                             "c = math.cos(H)", "k = f + e"]


@pytest.mark.parametrize("spoil", [
    "H = H + 1.0",          # reassigned
    "H[0] = 2.0",           # written through
    "H += 1.0",             # added to in place
    "K = H",                # another name shares it
    "scatter(H, 1.0)",      # given to a call that may write into it
    "H.fill(0.0)",          # a method of it
    "np.add(H, 1.0, out=H)",
])
def test_a_value_that_may_change_is_not_reused(spoil):
    fn = _function(f"""
        def g(H, d):
            t5 = H * H
            t6 = 1 - t5
            {spoil}
            dt2 = d * (1 - H * H)
            return dt2
        """)
    reuse.run(fn, {"numpy": "np"})
    assert _text(fn)[3] == "dt2 = d * (1 - H * H)"


def test_a_name_set_in_a_loop_is_not_reused():
    fn = _function("""
        def g(x, n):
            for i in range(n):
                t = x * x
            y = x * x
            s = 0.0
            s = x * x
            z = x * x + 1.0
            return z
        """)
    reuse.run(fn, {})
    assert _text(fn)[1:] == ["y = x * x", "s = 0.0", "s = y", "z = y + 1.0"]


def test_integer_and_float_constants_differ():
    fn = _function("""
        def g(H, d):
            t6 = 1 - H * H
            a = d * (1.0 - H * H)
            return a
        """)
    reuse.run(fn, {})
    assert _text(fn)[1] == "a = d * (1.0 - H * H)"


# -- through s2s_ad.hvp and the hessian module --------------------------------------------


def tanh_net(w, b, x, y):
    h = np.tanh(x @ w + b)
    return np.mean((h - y) ** 2)


def _tanh_net_grad(w, b, x, y):
    a = x @ w + b
    h = np.tanh(a)
    g = 2.0 * (h - y) / h.size * (1.0 - h * h)
    return x.T @ g, g.sum(axis=0)


def test_hvp_of_a_tanh_network_reads_one_minus_h_squared_once():
    rng = np.random.default_rng(0)
    w, b, x, y = (rng.normal(size=s) for s in ((3, 4), (4,), (5, 3), (5, 4)))
    vw, vb = rng.normal(size=(3, 4)), rng.normal(size=(4,))
    got = s2s_ad.hvp(tanh_net, wrt=("w", "b"))(w, b, x, y, (vw, vb))
    eps = 1e-6
    plus = _tanh_net_grad(w + eps * vw, b + eps * vb, x, y)
    minus = _tanh_net_grad(w - eps * vw, b - eps * vb, x, y)
    for g, p, m in zip(got, plus, minus):
        assert np.allclose(g, (p - m) / (2 * eps), rtol=1e-6, atol=1e-8)
    from s2s_ad.hessian_module import hessian_module
    text = hessian_module(tanh_net, wrt=("w", "b"), arrays=("w", "b", "x", "y"))[0]
    sweep = text.split("# reverse sweep")[1].split("def hessian_")[0]
    code = [line.split("#")[0] for line in sweep.splitlines()]
    assert not any("1 - h * h" in line for line in code), sweep


def helper_sq(u):
    return math.tanh(u) * math.sin(u)


def scalar_f(x, z):
    s = 0.0
    for i in range(3):
        s = s + helper_sq(x * z + i) * math.cos(x)
    if x > 0.1:
        s = s * math.tanh(z)
    return s


def test_second_derivatives_through_helpers_loops_and_branches_against_sympy():
    X, Z = sympy.symbols("x z")
    expr = sum((sympy.tanh(X * Z + i) * sympy.sin(X * Z + i)) * sympy.cos(X)
               for i in range(3)) * sympy.tanh(Z)
    H = sympy.hessian(expr, (X, Z))
    at = {X: 0.7, Z: -0.4}
    want = [[float(H[i, j].subs(at)) for j in range(2)] for i in range(2)]
    h = s2s_ad.hvp(scalar_f, wrt=("x", "z"))
    for j in range(2):
        col = h(0.7, -0.4, (float(j == 0), float(j == 1)))
        for i in range(2):
            assert math.isclose(col[i], want[i][j], rel_tol=1e-10, abs_tol=1e-12)


def test_no_name_read_again_goes_into_a_call_that_may_write_into_it():
    # added_into(c, x, i, g) adds g into c in place, c an array made right
    # there: read again as the forward value t9 (which unbroadcast returns
    # as it is where the shapes agree), the addition would change t9 itself
    fn = _function("""
        def g(a, b, x, g1):
            t9 = a * b
            r = t9 + 1.0
            dx = added_into(unbroadcast(a * b, x), x, 0, g1)
            s = unbroadcast(a * b, x)
            return dx
        """)
    fn.helpers = {"unbroadcast": "unbroadcast", "added_into": "added_into"}
    reuse.run(fn, {"numpy": "np"})
    assert _text(fn)[2:] == ["dx = added_into(unbroadcast(a * b, x), x, 0, g1)",
                             "s = unbroadcast(t9, x)"]
