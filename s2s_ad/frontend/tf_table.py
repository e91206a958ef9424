"""Frontend: the table of TensorFlow functions and tensor methods, and the
NumPy each is read as; used by :mod:`s2s_ad.frontend.tf_forms`.

Contract: :data:`FUNCTIONS` maps a TensorFlow function's name after
``tensorflow.`` (``"reduce_sum"``, ``"math.log"``, ``"linalg.matvec"``) and
:data:`METHODS` a tensor method's name to a
:class:`~s2s_ad.frontend.library_forms.Spec`: TensorFlow's parameters in
order and a builder taking the rewriter ``r`` and the bound arguments ``a``
(parameter name → the argument's AST, rewritten already), returning the NumPy
expression with TensorFlow's meaning. ``tf.cond`` and ``tf.while_loop`` are
control flow, built by :mod:`s2s_ad.frontend.tf_forms` itself.

>>> FUNCTIONS["reduce_sum"].params
('input_tensor', 'axis', 'keepdims')
"""

from __future__ import annotations

import ast

from s2s_ad.frontend import library_names
from s2s_ad.frontend.library_table import Spec, sigmoid


def _unary(np_name: str) -> Spec:
    return Spec("x", lambda r, a: r.np(np_name, a["x"]))


def _operator(op) -> Spec:
    return Spec("x y", lambda r, a: ast.BinOp(a["x"], op(), a["y"]))


def _compare(op) -> Spec:
    return Spec("x y", lambda r, a: ast.Compare(a["x"], [op()], [a["y"]]))


def _reduction(np_name: str) -> Spec:
    return Spec("input_tensor axis keepdims", lambda r, a: r.np(
        np_name, a["input_tensor"], axis=a.get("axis"), keepdims=a.get("keepdims")))


def _statistic(np_name: str) -> Spec:
    """``tf.math.reduce_std``/``reduce_variance``: divided by n (ddof 0)."""
    return Spec("input_tensor axis keepdims", lambda r, a: r.np(
        np_name, a["input_tensor"], axis=a.get("axis"), keepdims=a.get("keepdims")))


def _false(r, a, *names) -> None:
    """TensorFlow flags the reading takes at their default only."""
    for name in names:
        flag = a.get(name)
        if flag is not None and not (isinstance(flag, ast.Constant) and flag.value in (
                False, 0, None)):
            raise r.refuse(flag, f"`{name}=` of `{ast.unparse(r.current.func)}` is read at its "
                           "default (False) only")


def _float64(r, x, dtype, what):
    """``x`` as TensorFlow's ``dtype``: a float64 array for ``tf.float64``
    (``np.array(x).astype(np.float64)``); no dtype: as it is."""
    if dtype is None:
        return x
    if r.float64(dtype):
        return ast.Call(ast.Attribute(r.np("array", x), "astype", ast.Load()),
                        [r.dtype(dtype)], [])
    raise r.refuse(dtype, f"`dtype=` of `{what}` is read for tf.float64 only (s2s-ad "
                   "computes in float64): write float entries, or cast with "
                   "tf.cast(x, tf.float64)")


def _number(node) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _constant(r, a):
    """``tf.constant(value, dtype, shape)``, ``tf.convert_to_tensor(value,
    dtype)``: a number literal without ``dtype`` stays a number, anything else
    an array (``np.array``), cast to float64 by ``dtype=tf.float64``;
    ``shape=`` fills the shape with a number, or reshapes a list."""
    value, dtype, shape = a["value"], a.get("dtype"), a.get("shape")
    what = ast.unparse(r.current.func)
    if _number(value):
        if shape is not None:
            if dtype is not None and not r.float64(dtype):
                _float64(r, value, dtype, what)  # refused
            return r.np("full", shape, value, dtype=r.dtype(dtype))
        return value if dtype is None else _float64(r, value, dtype, what)
    out = _float64(r, value, dtype, what) if dtype is not None else r.np("array", value)
    if shape is None:
        return out
    if not isinstance(value, (ast.List, ast.Tuple)):
        raise r.refuse(shape, f"`shape=` of `{what}` is read for a list of values or a "
                       "number: reshape with tf.reshape")
    return r.np("reshape", out, shape)


def _cast(r, a):
    dtype = a["dtype"]
    if not r.float64(dtype):
        raise r.refuse(dtype, "tf.cast is read to tf.float64 only (s2s-ad computes in "
                       "float64; a cast to an integer has no derivative: compute it outside)")
    return _float64(r, a["x"], dtype, "tf.cast")


def _spread(np_name: str) -> Spec:
    return Spec("shape dtype", lambda r, a: r.np(np_name, a["shape"],
                                                 dtype=r.dtype(a.get("dtype"))))


def _like(np_name: str) -> Spec:
    return Spec("input dtype", lambda r, a: r.np(np_name, a["input"],
                                                 dtype=r.dtype(a.get("dtype"))))


def _eye(r, a):
    if a.get("batch_shape") is not None:
        raise r.refuse(a["batch_shape"], "`batch_shape=` of tf.eye is not supported: "
                       "broadcast the identity yourself")
    rows = a["num_rows"]
    return r.np("eye", rows, *([a["num_columns"]] if a.get("num_columns") is not None else []),
                dtype=r.dtype(a.get("dtype")))


def _transpose(r, a):
    _false(r, a, "conjugate")
    perm = a.get("perm")
    return r.np("transpose", a["a"], *([perm] if perm is not None else []))


def _matvec(r, a):
    """``tf.linalg.matvec(a, b)``: ``a @ b[..., None]`` without its last
    axis, batched (the leading dimensions broadcast)."""
    _false(r, a, "transpose_a", "adjoint_a", "a_is_sparse", "b_is_sparse")
    column = r.np("expand_dims", a["b"], ast.Constant(-1))
    return r.np("squeeze", r.np("matmul", a["a"], column), ast.Constant(-1))


def _matmul(r, a):
    _false(r, a, "transpose_a", "transpose_b", "adjoint_a", "adjoint_b", "a_is_sparse",
           "b_is_sparse")
    return ast.BinOp(a["a"], ast.MatMult(), a["b"])


def _gather(r, a):
    if a.get("batch_dims") is not None and not (isinstance(a["batch_dims"], ast.Constant)
                                                 and a["batch_dims"].value == 0):
        raise r.refuse(a["batch_dims"], "`batch_dims=` of tf.gather is not supported: "
                       "index with arrays (`params[rows, idx]`)")
    indices = a["indices"]
    if isinstance(indices, (ast.List, ast.Tuple)):
        indices = r.np("array", indices)
    return r.np("take", a["params"], indices, axis=a.get("axis") or ast.Constant(0))


def _cumulative(np_name: str) -> Spec:
    def build(r, a):
        _false(r, a, "exclusive", "reverse")
        return r.np(np_name, a["x"], axis=a.get("axis") or ast.Constant(0))
    return Spec("x axis exclusive reverse", build)


def _logsumexp(r, a):
    return r.call_global("logsumexp", library_names.logsumexp, a["input_tensor"],
                         axis=a.get("axis"), keepdims=a.get("keepdims"))


def _where(r, a):
    if a.get("x") is None:
        raise r.refuse(a["condition"], "tf.where(condition) with one argument (indices) is "
                       "not supported: use the three-argument form")
    return r.np("where", a["condition"], a["x"], a["y"])


def _values(r, values):
    """The tensors ``tf.stack``/``tf.concat`` join: ``tuple(e for ...)`` (or
    ``list``) is the list ``[e for ...]``, ``tuple(xs)`` the sequence ``xs``
    (joined alike)."""
    if isinstance(values, ast.Call) and isinstance(values.func, ast.Name) \
            and values.func.id in ("tuple", "list") and len(values.args) == 1 \
            and not values.keywords and r.resolve(values.func) in (tuple, list):
        inner = values.args[0]
        if isinstance(inner, ast.GeneratorExp):
            return ast.copy_location(ast.ListComp(inner.elt, inner.generators), inner)
        return inner
    return values


def _shape_of(r, a):
    return ast.Attribute(a["input"], "shape", ast.Load())


def _range(r, a):
    args = [a[k] for k in ("start", "limit", "delta") if a.get(k) is not None]
    return r.np("arange", *args, dtype=r.dtype(a.get("dtype")))


UNARY = ("exp", "sqrt", "sin", "cos", "tan", "tanh", "sinh", "cosh", "abs", "square", "sign")
"""Elementwise functions TensorFlow has under both ``tf.`` and ``tf.math.``."""
MATH_ONLY = {"log": "log", "log1p": "log1p", "expm1": "expm1", "reciprocal": "reciprocal",
             "negative": "negative", "asin": "arcsin", "acos": "arccos", "atan": "arctan",
             "asinh": "arcsinh", "atanh": "arctanh", "rsqrt": None, "lgamma": None,
             "erf": None, "softplus": None, "sigmoid": None}
COMPARISONS = {"equal": ast.Eq, "not_equal": ast.NotEq, "less": ast.Lt, "less_equal": ast.LtE,
               "greater": ast.Gt, "greater_equal": ast.GtE}
OPERATORS = {"add": ast.Add, "subtract": ast.Sub, "multiply": ast.Mult, "divide": ast.Div,
             "truediv": ast.Div, "pow": ast.Pow}
REDUCTIONS = {"reduce_sum": "sum", "reduce_mean": "mean", "reduce_prod": "prod",
              "reduce_max": "max", "reduce_min": "min"}


def _both(entries: dict) -> dict:
    """Each entry under ``tf.NAME`` and ``tf.math.NAME``."""
    return {**entries, **{f"math.{k}": v for k, v in entries.items()}}


FUNCTIONS: dict[str, Spec] = {
    # elementwise
    **_both({n: _unary(n) for n in UNARY}),
    **{f"math.{t}": _unary(n) for t, n in MATH_ONLY.items() if n is not None},
    "negative": _unary("negative"),
    "math.rsqrt": Spec("x", lambda r, a: ast.BinOp(ast.Constant(1.0), ast.Div(),
                                                   r.np("sqrt", a["x"]))),
    "math.lgamma": Spec("x", lambda r, a: r.scipy("gammaln", a["x"])),
    "math.erf": Spec("x", lambda r, a: r.scipy("erf", a["x"])),
    **{n: Spec("x", lambda r, a: sigmoid(r, {"input": a["x"]}))
       for n in ("sigmoid", "math.sigmoid", "nn.sigmoid")},
    **{n: Spec("features", lambda r, a: r.np("logaddexp", ast.Constant(0.0), a["features"]))
       for n in ("math.softplus", "nn.softplus")},
    "nn.relu": Spec("features", lambda r, a: r.np("where", ast.Compare(
        a["features"], [ast.Gt()], [ast.Constant(0)]), r.clone(a["features"]),
        ast.Constant(0.0))),
    **_both({n: _operator(op) for n, op in OPERATORS.items()}),
    **_both({n: _compare(op) for n, op in COMPARISONS.items()}),
    **_both({"maximum": Spec("x y", lambda r, a: r.np("maximum", a["x"], a["y"])),
             "minimum": Spec("x y", lambda r, a: r.np("minimum", a["x"], a["y"]))}),
    "math.atan2": Spec("y x", lambda r, a: r.np("arctan2", a["y"], a["x"])),
    "where": Spec("condition x y", _where),
    # reductions
    **_both({n: _reduction(np_name) for n, np_name in REDUCTIONS.items()}),
    **_both({"reduce_logsumexp": Spec("input_tensor axis keepdims", _logsumexp)}),
    "math.reduce_std": _statistic("std"), "math.reduce_variance": _statistic("var"),
    **_both({"cumsum": _cumulative("cumsum")}), "math.cumprod": _cumulative("cumprod"),
    # linear algebra
    **{n: Spec("a b transpose_a transpose_b adjoint_a adjoint_b a_is_sparse b_is_sparse",
               _matmul) for n in ("matmul", "linalg.matmul")},
    "linalg.matvec": Spec("a b transpose_a adjoint_a a_is_sparse b_is_sparse", _matvec),
    "linalg.cross": Spec("a b", lambda r, a: r.np("cross", a["a"], a["b"])),
    "tensordot": Spec("a b axes", lambda r, a: r.np("tensordot", a["a"], a["b"], a["axes"])),
    "linalg.tensordot": Spec("a b axes", lambda r, a: r.np("tensordot", a["a"], a["b"],
                                                            a["axes"])),
    "linalg.det": Spec("input", lambda r, a: r.np("linalg.det", a["input"])),
    "linalg.inv": Spec("input adjoint", lambda r, a: r.np("linalg.inv", a["input"])),
    "linalg.trace": Spec("x", lambda r, a: r.np("sum", r.np(
        "diagonal", a["x"], axis1=ast.Constant(-2), axis2=ast.Constant(-1)), axis=ast.Constant(-1))),
    # shapes
    "transpose": Spec("a perm conjugate", _transpose),
    "reshape": Spec("tensor shape", lambda r, a: r.np("reshape", a["tensor"], a["shape"])),
    "concat": Spec("values axis", lambda r, a: r.np("concatenate", _values(r, a["values"]),
                                                    axis=a["axis"])),
    "stack": Spec("values axis", lambda r, a: r.np("stack", _values(r, a["values"]),
                                                   axis=a.get("axis") or ast.Constant(0))),
    "expand_dims": Spec("input axis", lambda r, a: r.np("expand_dims", a["input"], a["axis"])),
    "squeeze": Spec("input axis", lambda r, a: r.np("squeeze", a["input"], axis=a.get("axis"))),
    "tile": Spec("input multiples", lambda r, a: r.np("tile", a["input"], a["multiples"])),
    "gather": Spec("params indices validate_indices axis batch_dims", _gather),
    "shape": Spec("input out_type", _shape_of),
    "size": Spec("input out_type", lambda r, a: r.np("size", a["input"])),
    "rank": Spec("input", lambda r, a: r.np("ndim", a["input"])),
    # construction
    "zeros": _spread("zeros"), "ones": _spread("ones"),
    "zeros_like": _like("zeros_like"), "ones_like": _like("ones_like"),
    "fill": Spec("dims value", lambda r, a: r.np("full", a["dims"], a["value"])),
    "eye": Spec("num_rows num_columns batch_shape dtype", _eye),
    "range": Spec("start limit delta dtype", _range),
    "linspace": Spec("start stop num", lambda r, a: r.np("linspace", a["start"], a["stop"],
                                                         a["num"])),
    "constant": Spec("value dtype shape", _constant),
    "convert_to_tensor": Spec("value dtype dtype_hint", lambda r, a: _constant(r, dict(
        a, dtype=a.get("dtype")))),
    **{n: Spec("x dtype", _cast) for n in ("cast", "dtypes.cast")},
}
"""TensorFlow functions (by their name after ``tensorflow.``) and the NumPy
each is read as."""

METHODS: dict[str, Spec] = {
    "get_shape": Spec("input", lambda r, a: ast.Attribute(a["input"], "shape", ast.Load())),
    "as_list": Spec("input", lambda r, a: a["input"]),
}
"""Tensor methods and the NumPy each is read as: ``t.get_shape().as_list()``
is ``t.shape`` (a tuple of ints where TensorFlow gives a list: the same
numbers, read the same by indexing, ``len`` and ``*``)."""
