"""``jax.nn``'s activations and ``jax.lax.stop_gradient`` read as NumPy (for
:mod:`s2s_ad.frontend.jax_forms`).

Contract: :func:`build` returns the NumPy expression that computes what the
JAX function computes, from rules s2s-ad has, so its derivative is JAX's
(at the kinks too, where JAX's is written as a ``where``): an argument read
twice is bound to a name first, by a statement :func:`build` appends to
``pre``. Keywords other than those listed are refused, located.

* ``relu(x)``: ``np.where(x > 0, x, 0.0)`` (no adjoint at 0, as JAX);
  ``leaky_relu(x, negative_slope=0.01)``: ``np.where(x >= 0, x, slope * x)``;
  ``elu(x, alpha=1.0)``: ``np.where(x > 0, x, alpha * np.expm1(x))``;
* ``softplus(x)``: ``np.logaddexp(x, 0.0)``; ``log_sigmoid(x)``:
  ``-np.logaddexp(-x, 0.0)``; ``sigmoid(x)``: ``scipy.special.expit(x)``
  (``0.5 + 0.5 * np.tanh(0.5 * x)`` without SciPy); ``silu``/``swish(x)``:
  ``x * sigmoid(x)``;
* ``gelu(x, approximate=True)``: ``0.5 x (1 + tanh(√(2/π) (x + 0.044715 x³)))``,
  and with ``approximate=False`` ``0.5 x (1 + erf(x / √2))`` (SciPy's ``erf``);
* ``softmax(x, axis=-1)``, ``log_softmax(x, axis=-1)``: ``np.exp(x - lse)``,
  ``x - lse``, ``lse = logsumexp(x, axis, keepdims=True)``; ``logsumexp`` as
  ``jax.scipy.special.logsumexp``;
* ``one_hot(x, num_classes)``: ``(x[..., None] == np.arange(n)) * 1.0``;
* ``jax.lax.stop_gradient(x)``: ``x`` with no derivative (JAX's arrays cannot
  be written into, so no copy is needed).
"""

from __future__ import annotations

import ast
import math

from s2s_ad.frontend import library_names, torch_names
from s2s_ad.frontend.numpy_forms import call_arguments

__all__ = ["NAMES", "build"]

SIGNATURES = {
    "jax.nn.relu": ("x",), "jax.nn.leaky_relu": ("x", "negative_slope"),
    "jax.nn.elu": ("x", "alpha"), "jax.nn.softplus": ("x",), "jax.nn.log_sigmoid": ("x",),
    "jax.nn.sigmoid": ("x",), "jax.nn.silu": ("x",), "jax.nn.swish": ("x",),
    "jax.nn.gelu": ("x", "approximate"), "jax.nn.softmax": ("x", "axis"),
    "jax.nn.log_softmax": ("x", "axis"), "jax.nn.logsumexp": ("a", "axis", "b", "keepdims"),
    "jax.nn.one_hot": ("x", "num_classes"), "jax.lax.stop_gradient": ("x",),
}
NAMES = frozenset(SIGNATURES)
DEFAULTS = {"jax.nn.leaky_relu": {"negative_slope": 0.01}, "jax.nn.elu": {"alpha": 1.0},
            "jax.nn.gelu": {"approximate": True}, "jax.nn.softmax": {"axis": -1},
            "jax.nn.log_softmax": {"axis": -1},
            "jax.nn.logsumexp": {"axis": None, "b": None, "keepdims": False}}
"""JAX's defaults of the arguments not given."""


def build(forms, name: str, node: ast.Call, pre: list) -> ast.expr:
    """The NumPy form of the call ``node`` of ``name`` (see the module);
    ``forms`` is the JAX rewrite (its names and globals)."""
    a = call_arguments(forms.src, node, SIGNATURES[name], DEFAULTS.get(name, {}))
    np = ast.Name(forms.numpy_name(), ast.Load())

    def call(fn: str, *args, **kw) -> ast.Call:
        return ast.Call(ast.Attribute(np, fn, ast.Load()), list(args),
                        [ast.keyword(k, v) for k, v in kw.items() if v is not None])

    def num(v: float) -> ast.Constant:
        return ast.Constant(v)

    def once(x: ast.expr) -> ast.Name:
        if isinstance(x, ast.Name):
            return x
        tmp = forms.fresh("nn_arg")
        pre.append(ast.Assign([ast.Name(tmp, ast.Store())], x))
        return ast.Name(tmp, ast.Load())

    def again(x: ast.Name) -> ast.Name:
        return ast.Name(x.id, ast.Load())

    def sigmoid(x: ast.expr) -> ast.expr:
        try:
            import scipy.special
        except ImportError:
            return ast.BinOp(num(0.5), ast.Add(), ast.BinOp(num(0.5), ast.Mult(), call(
                "tanh", ast.BinOp(x, ast.Mult(), num(0.5)))))
        return ast.Call(ast.Attribute(ast.Name(forms.global_for(scipy.special, "scipy_special"),
                                               ast.Load()), "expit", ast.Load()), [x], [])

    def lse(x: ast.expr, axis, keepdims) -> ast.Call:
        return ast.Call(ast.Name(forms.global_for(library_names.logsumexp, "logsumexp"),
                                 ast.Load()), [x],
                        [ast.keyword(k, v) for k, v in (("axis", axis), ("keepdims", keepdims))
                         if v is not None])

    x = a.get("x")  # (logsumexp names it `a`)
    if name == "jax.lax.stop_gradient":
        return ast.Call(ast.Name(forms.global_for(torch_names.detached, "detached"),
                                 ast.Load()), [x], [])
    if name == "jax.nn.logsumexp":
        if not (isinstance(a["b"], ast.Constant) and a["b"].value is None):
            raise forms.src.error(a["b"], "`jax.nn.logsumexp` with `b=` is not supported")
        return lse(a["a"], a["axis"], a["keepdims"])
    if name == "jax.nn.softplus":
        return call("logaddexp", x, num(0.0))
    if name == "jax.nn.log_sigmoid":
        return ast.UnaryOp(ast.USub(), call("logaddexp", ast.UnaryOp(ast.USub(), x), num(0.0)))
    if name == "jax.nn.sigmoid":
        return sigmoid(x)
    if name == "jax.nn.one_hot":
        n = a["num_classes"]
        return ast.BinOp(ast.Compare(call("expand_dims", x, num(-1)), [ast.Eq()],
                                     [call("arange", n)]), ast.Mult(), num(1.0))
    x = once(x)
    if name == "jax.nn.relu":
        return call("where", ast.Compare(x, [ast.Gt()], [num(0)]), again(x), num(0.0))
    if name == "jax.nn.leaky_relu":
        slope = a["negative_slope"]
        return call("where", ast.Compare(x, [ast.GtE()], [num(0)]), again(x),
                    ast.BinOp(slope, ast.Mult(), again(x)))
    if name == "jax.nn.elu":
        alpha = a["alpha"]
        return call("where", ast.Compare(x, [ast.Gt()], [num(0)]), again(x),
                    ast.BinOp(alpha, ast.Mult(), call("expm1", again(x))))
    if name in ("jax.nn.silu", "jax.nn.swish"):
        return ast.BinOp(x, ast.Mult(), sigmoid(again(x)))
    if name in ("jax.nn.softmax", "jax.nn.log_softmax"):
        axis = a["axis"]
        shifted = ast.BinOp(x, ast.Sub(), lse(again(x), axis, num(True)))
        return shifted if name == "jax.nn.log_softmax" else call("exp", shifted)
    # gelu
    approximate = a["approximate"]
    if not isinstance(approximate, ast.Constant) or type(approximate.value) is not bool:
        raise forms.src.error(approximate, "`approximate=` of `jax.nn.gelu` must be True "
                              "or False written out")
    half_x = ast.BinOp(num(0.5), ast.Mult(), x)
    if approximate.value:
        cube = ast.BinOp(again(x), ast.Add(), ast.BinOp(num(0.044715), ast.Mult(), ast.BinOp(
            again(x), ast.Pow(), num(3))))
        inner = call("tanh", ast.BinOp(num(math.sqrt(2.0 / math.pi)), ast.Mult(), cube))
    else:
        try:
            import scipy.special
        except ImportError:
            raise forms.src.error(node, "`jax.nn.gelu(x, approximate=False)` is read with "
                                  "scipy.special.erf: install scipy") from None
        inner = ast.Call(ast.Attribute(ast.Name(forms.global_for(scipy.special,
                                                                 "scipy_special"),
                                                ast.Load()), "erf", ast.Load()),
                         [ast.BinOp(again(x), ast.Div(), num(math.sqrt(2.0)))], [])
    return ast.BinOp(half_x, ast.Mult(), ast.BinOp(num(1.0), ast.Add(), inner))

