"""Frontend: the table of torch functions and tensor methods, and the NumPy
each is read as; used by :mod:`s2s_ad.frontend.torch_forms`.

Contract: :data:`FUNCTIONS` maps a torch function's name after ``torch.``
(``"sum"``, ``"nn.functional.pad"``, ``"special.multigammaln"``) and
:data:`METHODS` a tensor method's name to a :class:`Spec`: torch's parameters
in order (``*name`` collects the remaining positional arguments) and a
builder. The builder takes the rewriter ``r`` (its ``np``, ``scipy``,
``shape``, ``dtype``, ``clone``, ``refuse``, ... make the NumPy AST) and the
bound arguments ``a`` (parameter name → the argument's AST, rewritten
already), and returns the NumPy expression with torch's meaning.

>>> sorted(FUNCTIONS["sum"].params)
['dim', 'input', 'keepdim']
"""

from __future__ import annotations

import ast
import copy

import numpy

from s2s_ad.frontend import torch_names
from s2s_ad.frontend.library_table import Spec, sigmoid
from s2s_ad.syntax_walk import walk


def _unary(np_name: str) -> Spec:
    return Spec("input", lambda r, a: r.np(np_name, a["input"]))


def _binary(np_name: str) -> Spec:
    return Spec("input other", lambda r, a: r.np(np_name, a["input"], a["other"]))


def _reduction(np_name: str) -> Spec:
    return Spec("input dim keepdim", lambda r, a: r.np(
        np_name, a["input"], axis=a.get("dim"), keepdims=a.get("keepdim")))


def _spread(np_name: str, first: str = "size") -> Spec:
    """``torch.zeros(2, 3)`` and ``torch.zeros((2, 3))``: the sizes as one shape."""
    def build(r, a):
        return r.np(np_name, r.shape(a[f"*{first}"]), dtype=r.dtype(a.get("dtype")))
    return Spec(f"*{first} dtype", build)


def _like(np_name: str, fill: bool = False) -> Spec:
    def build(r, a):
        args = [a["input"]] + ([a["fill_value"]] if fill else [])
        return r.np(np_name, *args, dtype=r.dtype(a.get("dtype")))
    return Spec("input fill_value dtype" if fill else "input dtype", build)


def _extreme(np_name: str, arg_name: str, pair_name: str) -> Spec:
    """``torch.max(x)``; ``torch.max(x, dim)``: the pair (values, indices);
    ``torch.max(x, y)``: ``torch.maximum``."""
    def build(r, a):
        x, dim, other = a["input"], a.get("dim"), a.get("other")
        if other is not None:
            return r.np(pair_name, x, other)
        if dim is None:
            return r.np(np_name, x)
        keep = a.get("keepdim")
        pair = ast.Tuple([r.np(np_name, x, axis=dim, keepdims=keep),
                          r.np(arg_name, x, axis=dim, keepdims=keep)], ast.Load())
        pair.torch_pair = True
        return pair
    return Spec("input dim keepdim other", build)


def _var(np_name: str) -> Spec:
    def build(r, a):
        return r.np(np_name, a["input"], axis=a.get("dim"), ddof=r.ddof(a),
                    keepdims=a.get("keepdim"))
    return Spec("input dim unbiased keepdim correction", build)


def _pow(r, a):
    return ast.BinOp(a["input"], ast.Pow(), a["exponent"])


def _div(r, a):
    if a.get("rounding_mode") is not None:
        raise r.refuse(a["rounding_mode"], "`rounding_mode=` of torch.div is not supported: "
                       "write `//` (floor) or np.trunc of the quotient")
    return ast.BinOp(a["input"], ast.Div(), a["other"])


def _pad(r, a):
    """``F.pad(x, (l, r, t, b), value=v)``: pairs from the last dimension
    back, each a concatenation with ``l`` and ``r`` columns of ``v``."""
    pad = a["pad"]
    if not isinstance(pad, (ast.Tuple, ast.List)) or len(pad.elts) % 2 or not all(
            isinstance(e, ast.Constant) and type(e.value) is int and e.value >= 0
            for e in pad.elts):
        raise r.refuse(pad, "torch.nn.functional.pad takes here a tuple of non-negative int "
                       "literals, two per padded dimension (cropping is not supported)")
    mode = a.get("mode")
    if mode is not None and not (isinstance(mode, ast.Constant) and mode.value == "constant"):
        raise r.refuse(mode, "torch.nn.functional.pad: only mode='constant' is supported")
    value = a.get("value") or ast.Constant(0.0)
    out = a["input"]
    widths = [e.value for e in pad.elts]
    for k in range(len(widths) // 2):
        before, after = widths[2 * k], widths[2 * k + 1]
        axis = -1 - k
        if not before and not after:
            continue
        edge = ast.Subscript(r.clone(out), ast.Tuple([ast.Constant(Ellipsis), ast.Slice(
            None, ast.Constant(1))] + [ast.Slice()] * k, ast.Load()), ast.Load())
        fill = r.np("full_like", edge, value)
        parts = [copy.deepcopy(fill) for _ in range(before)] + [out] + [
            copy.deepcopy(fill) for _ in range(after)]
        out = r.np("concatenate", ast.List(parts, ast.Load()), axis=ast.Constant(axis))
    return out


def _expand(r, a):
    sizes = r.shape(a["*size"])
    if any(isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub)
           for e in walk(sizes)):
        raise r.refuse(sizes, "`expand` with -1 (keep a dimension) is not supported: give "
                       "every size (`x.shape[k]` for a kept one)")
    return r.shared(a["input"], "expand", r.broadcast(a["input"], sizes))


def _cross(r, a):
    x, y, dim = a["input"], a["other"], a.get("dim")
    if dim is None:
        r.check_vectors(x, y)
    elif not (isinstance(dim, ast.UnaryOp) and isinstance(dim.op, ast.USub)
              and isinstance(dim.operand, ast.Constant) and dim.operand.value == 1):
        raise r.refuse(dim, "torch.cross/torch.linalg.cross: only the last dimension "
                       "(`dim=-1`) is supported")
    return r.np("cross", x, y)


def _linalg_cross(r, a):
    if a.get("dim") is None:
        a = dict(a, dim=ast.UnaryOp(ast.USub(), ast.Constant(1)))
    return _cross(r, a)


def _norm(r, a):
    p = a.get("p")
    if p is not None and not (isinstance(p, ast.Constant) and p.value in (2, 2.0, "fro")):
        raise r.refuse(p, "torch.norm: only p=2 / 'fro' is supported here (torch.linalg.norm "
                       "takes ord=)")
    return r.np("linalg.norm", a["input"], axis=a.get("dim"), keepdims=a.get("keepdim"))


def _vector_norm(r, a):
    """``torch.linalg.vector_norm``: over all elements (``np.ravel``) without
    ``dim``; over several dimensions only for the 2-norm (NumPy's ``norm``
    with a pair of axes is a matrix norm, the same number only for ord 2)."""
    x, dim, order, keep = a["input"], a.get("dim"), a.get("ord"), a.get("keepdim")
    two = order is None or isinstance(order, ast.Constant) and order.value in (2, 2.0)
    if isinstance(dim, (ast.Tuple, ast.List)) and len(dim.elts) > 1 and not two:
        raise r.refuse(dim, "torch.linalg.vector_norm over several dimensions is read for "
                       "ord=2 only")
    if dim is None:
        if keep is not None:
            raise r.refuse(keep, "torch.linalg.vector_norm with `keepdim` and no `dim` is not "
                           "supported: give `dim`")
        x, dim = r.np("ravel", x), ast.Constant(0)
    return r.np("linalg.norm", x, order or ast.Constant(None), axis=dim, keepdims=keep)


def _flatten(r, a):
    start, end = a.get("start_dim"), a.get("end_dim")
    if (start is not None and not (isinstance(start, ast.Constant) and start.value == 0)) or (
            end is not None and not (isinstance(end, ast.UnaryOp) and isinstance(
                end.operand, ast.Constant) and end.operand.value == 1)):
        raise r.refuse(start or end, "`flatten` of some dimensions only is not supported: "
                       "reshape to the shape you want")
    return r.np("ravel", a["input"])


def _squeeze(r, a):
    return r.np("squeeze", a["input"], axis=a.get("dim"))


def _softmax(r, a, log=False):
    x, dim = a["input"], a.get("dim")
    if dim is None:
        raise r.refuse(x, "softmax without `dim=` is not supported: give the dimension")
    lse = r.call_global("logsumexp", torch_names.logsumexp, x, axis=dim,
                        keepdims=ast.Constant(True))
    shifted = ast.BinOp(r.clone(x), ast.Sub(), lse)
    return shifted if log else r.np("exp", shifted)


def _constant(r, a, name: str, default):
    """A keyword the form needs while lowering (``beta=2.0``,
    ``reduction="sum"``): a constant, else refused, located."""
    node = a.get(name)
    if node is None:
        return default
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) \
            and isinstance(node.operand, ast.Constant):
        return -node.operand.value
    if not isinstance(node, ast.Constant):
        raise r.refuse(node, f"`{name}=` must be a constant here")
    return node.value


def _softplus(r, a):
    """``F.softplus(x, beta, threshold)``: ``log(1 + exp(βx)) / β``, and ``x``
    itself where ``βx > threshold`` (torch's switch to the line)."""
    x = a["input"]
    beta, threshold = _constant(r, a, "beta", 1.0), _constant(r, a, "threshold", 20.0)
    scaled = ast.BinOp(r.clone(x), ast.Mult(), ast.Constant(float(beta)))
    smooth = ast.BinOp(r.np("logaddexp", ast.Constant(0.0), scaled), ast.Div(),
                       ast.Constant(float(beta)))
    test = ast.Compare(ast.BinOp(r.clone(x), ast.Mult(), ast.Constant(float(beta))),
                       [ast.Gt()], [ast.Constant(float(threshold))])
    return r.np("where", test, x, smooth)


def _loss(kind: str):
    """``F.mse_loss``/``F.l1_loss(x, y, reduction="mean")``: the squared or
    absolute differences, averaged, summed or left (``"none"``)."""
    def build(r, a):
        if a.get("size_average") is not None or a.get("reduce") is not None:
            raise r.refuse(a.get("size_average") or a.get("reduce"), "`size_average=`/"
                           "`reduce=` are deprecated in torch; give `reduction=`")
        diff = ast.BinOp(a["input"], ast.Sub(), a["target"])
        each = ast.BinOp(diff, ast.Pow(), ast.Constant(2)) if kind == "mse" else r.np("abs", diff)
        how = _constant(r, a, "reduction", "mean")
        if how not in ("mean", "sum", "none"):
            raise r.refuse(a["reduction"], f"`reduction={how!r}`: torch takes 'mean', 'sum' "
                           "or 'none'")
        return each if how == "none" else r.np(how, each)
    return Spec("input target size_average reduce reduction", build)


def _leaky_relu(r, a):
    slope = a.get("negative_slope") or ast.Constant(0.01)
    x = a["input"]
    return r.np("where", ast.Compare(r.clone(x), [ast.Gt()], [ast.Constant(0)]), r.clone(x),
                ast.BinOp(x, ast.Mult(), slope))


def _elu(r, a):
    alpha = a.get("alpha") or ast.Constant(1.0)
    x = a["input"]
    return r.np("where", ast.Compare(r.clone(x), [ast.Gt()], [ast.Constant(0)]), r.clone(x),
                ast.BinOp(alpha, ast.Mult(), r.np("expm1", x)))


def _tensor(r, a, shares: bool = False):
    """``torch.tensor(data)``: ``np.array(data)``; with ``dtype=torch.float64``
    (or ``double``) ``np.array(data) * 1.0``, a float array of the same values.
    ``torch.as_tensor(data)`` and ``torch.from_numpy(data)`` (``shares``) keep
    the array they are given, as torch does: ``np.asarray(data)``, which a
    write through either name shows in the other."""
    data, dtype = a["data"], a.get("dtype")
    if dtype is None:
        return r.np("asarray" if shares else "array", data)
    if r.resolve(dtype) is numpy.float64:  # torch.float64, read as np.float64
        copy = ast.BinOp(r.np("array", data), ast.Mult(), ast.Constant(1.0))
        return r.shared(data, "as_tensor", copy) if shares else copy
    raise r.refuse(dtype, "`dtype=` of torch.tensor is read for torch.float64 only: write "
                   "float entries (`1.0`) for a float tensor, int entries for an index")


def _arange(r, a):
    args = [a[k] for k in ("start", "end", "step") if a.get(k) is not None]
    return r.np("arange", *args, dtype=r.dtype(a.get("dtype")))


def _where(r, a):
    if a.get("input") is None:
        raise r.refuse(a["condition"], "torch.where(condition) with one argument (indices) "
                       "is not supported: use torch.nonzero outside, or the three-argument form")
    return r.np("where", a["condition"], a["input"], a["other"])


def _repeat_interleave(r, a):
    if a.get("repeats") is None:
        raise r.refuse(a["input"], "torch.repeat_interleave(repeats) with one argument is not "
                       "supported: write np.repeat(np.arange(len(repeats)), repeats)")
    return r.np("repeat", a["input"], a["repeats"], axis=a.get("dim"))


def _einsum(r, a):
    operands = a["*operands"]
    if len(operands) == 1 and isinstance(operands[0], (ast.List, ast.Tuple)):
        operands = list(operands[0].elts)  # torch.einsum(eq, [a, b])
    return r.np("einsum", a["equation"], *operands)


def _multigammaln(r, a):
    return r.scipy("multigammaln", a["input"], a["p"])


FUNCTIONS: dict[str, Spec] = {
    # elementwise
    **{n: _unary(n) for n in ("exp", "log", "sqrt", "sin", "cos", "tan", "tanh", "sinh",
                              "cosh", "abs", "log1p", "expm1", "square", "sign", "log2",
                              "log10", "exp2", "reciprocal", "negative", "arcsin", "arccos",
                              "arctan", "arcsinh", "arctanh")},
    **{t: _unary(n) for t, n in (("asin", "arcsin"), ("acos", "arccos"), ("atan", "arctan"),
                                 ("asinh", "arcsinh"), ("atanh", "arctanh"), ("neg", "negative"),
                                 ("absolute", "abs"))},
    "rsqrt": Spec("input", lambda r, a: ast.BinOp(ast.Constant(1.0), ast.Div(),
                                                   r.np("sqrt", a["input"]))),
    "sigmoid": Spec("input", sigmoid), "special.expit": Spec("input", sigmoid),
    "nn.functional.sigmoid": Spec("input", sigmoid),
    "relu": Spec("input", lambda r, a: r.np("where", ast.Compare(
        a["input"], [ast.Gt()], [ast.Constant(0)]), r.clone(a["input"]), ast.Constant(0.0))),
    "special.erf": Spec("input", lambda r, a: r.scipy("erf", a["input"])),
    "erf": Spec("input", lambda r, a: r.scipy("erf", a["input"])),
    "lgamma": Spec("input", lambda r, a: r.scipy("gammaln", a["input"])),
    "special.gammaln": Spec("input", lambda r, a: r.scipy("gammaln", a["input"])),
    "special.multigammaln": Spec("input p", _multigammaln),
    "mvlgamma": Spec("input p", _multigammaln),
    **{n: Spec("input other", lambda r, a, op=op: ast.BinOp(a["input"], op(), a["other"]))
       for n, op in (("add", ast.Add), ("subtract", ast.Sub), ("sub", ast.Sub),
                     ("multiply", ast.Mult), ("mul", ast.Mult))},
    **{n: _binary(n) for n in ("maximum", "minimum", "hypot", "logaddexp", "matmul", "dot",
                               "outer", "inner")},
    **{t: _binary(n) for t, n in (("atan2", "arctan2"), ("arctan2", "arctan2"),
                                  ("mm", "matmul"), ("bmm", "matmul"), ("mv", "matmul"),
                                  ("ger", "outer"), ("fmax", "maximum"), ("fmin", "minimum"))},
    **{n: Spec("input other rounding_mode", _div) for n in ("div", "divide", "true_divide")},
    "pow": Spec("input exponent", _pow),
    "float_power": Spec("input exponent", lambda r, a: r.np("float_power", a["input"],
                                                             a["exponent"])),
    "clamp": Spec("input min max", lambda r, a: r.np("clip", a["input"], a.get("min") or
                                                      ast.Constant(None), a.get("max") or
                                                      ast.Constant(None))),
    "where": Spec("condition input other", _where),
    "einsum": Spec("equation *operands", _einsum),
    "cross": Spec("input other dim", _cross),
    "linalg.cross": Spec("input other dim", _linalg_cross),
    # reductions
    "sum": _reduction("sum"), "mean": _reduction("mean"), "prod": _reduction("prod"),
    "amax": _reduction("max"), "amin": _reduction("min"),
    "max": _extreme("max", "argmax", "maximum"), "min": _extreme("min", "argmin", "minimum"),
    "argmax": _reduction("argmax"), "argmin": _reduction("argmin"),
    "logsumexp": Spec("input dim keepdim", lambda r, a: r.call_global(
        "logsumexp", torch_names.logsumexp, a["input"], axis=a.get("dim"),
        keepdims=a.get("keepdim"))),
    "special.logsumexp": Spec("input dim keepdim", lambda r, a: r.call_global(
        "logsumexp", torch_names.logsumexp, a["input"], axis=a.get("dim"),
        keepdims=a.get("keepdim"))),
    "softmax": Spec("input dim", _softmax),
    "nn.functional.softmax": Spec("input dim", _softmax),
    "log_softmax": Spec("input dim", lambda r, a: _softmax(r, a, log=True)),
    "nn.functional.log_softmax": Spec("input dim", lambda r, a: _softmax(r, a, log=True)),
    "nn.functional.relu": Spec("input", lambda r, a: FUNCTIONS["relu"].build(r, a)),
    "nn.functional.softplus": Spec("input beta threshold", _softplus),
    "nn.functional.mse_loss": _loss("mse"), "nn.functional.l1_loss": _loss("l1"),
    "nn.functional.leaky_relu": Spec("input negative_slope inplace", _leaky_relu),
    "nn.functional.elu": Spec("input alpha inplace", _elu),
    "nn.functional.silu": Spec("input inplace", lambda r, a: ast.BinOp(
        r.clone(a["input"]), ast.Mult(), sigmoid(r, a))),
    "nn.functional.tanh": _unary("tanh"),
    "cumsum": Spec("input dim", lambda r, a: r.np("cumsum", a["input"], axis=a["dim"])),
    "cumprod": Spec("input dim", lambda r, a: r.np("cumprod", a["input"], axis=a["dim"])),
    "var": _var("var"), "std": _var("std"),
    "norm": Spec("input p dim keepdim", _norm),
    "linalg.norm": Spec("input ord dim keepdim", lambda r, a: r.np(
        "linalg.norm", a["input"], a.get("ord") or ast.Constant(None), axis=a.get("dim"),
        keepdims=a.get("keepdim"))),
    "linalg.vector_norm": Spec("input ord dim keepdim", _vector_norm),
    "trace": _unary("trace"),
    "linalg.det": _unary("linalg.det"), "det": _unary("linalg.det"),
    "linalg.inv": _unary("linalg.inv"), "inverse": _unary("linalg.inv"),
    "linalg.cholesky": _unary("linalg.cholesky"),
    "linalg.solve": Spec("A B", lambda r, a: r.np("linalg.solve", a["A"], a["B"])),
    "linalg.slogdet": _unary("linalg.slogdet"), "slogdet": _unary("linalg.slogdet"),
    # shapes
    **{n: Spec("tensors dim", lambda r, a: r.np("concatenate", a["tensors"],
                                                 axis=a.get("dim") or ast.Constant(0)))
       for n in ("cat", "concat", "concatenate")},
    "stack": Spec("tensors dim", lambda r, a: r.np("stack", a["tensors"],
                                                    axis=a.get("dim") or ast.Constant(0))),
    "hstack": Spec("tensors", lambda r, a: r.np("hstack", a["tensors"])),
    "vstack": Spec("tensors", lambda r, a: r.np("vstack", a["tensors"])),
    "reshape": Spec("input shape", lambda r, a: r.np("reshape", a["input"], a["shape"])),
    "ravel": _unary("ravel"),
    "flatten": Spec("input start_dim end_dim", _flatten),
    "squeeze": Spec("input dim", _squeeze),
    "unsqueeze": Spec("input dim", lambda r, a: r.np("expand_dims", a["input"], a["dim"])),
    **{n: Spec("input dim0 dim1", lambda r, a: r.np("swapaxes", a["input"], a["dim0"],
                                                     a["dim1"]))
       for n in ("transpose", "swapaxes", "swapdims")},
    "permute": Spec("input *dims", lambda r, a: r.np("transpose", a["input"],
                                                      r.shape(a["*dims"]))),
    "t": _unary("transpose"),
    **{n: Spec("input source destination", lambda r, a: r.np(
        "moveaxis", a["input"], a["source"], a["destination"])) for n in ("movedim", "moveaxis")},
    "flip": Spec("input dims", lambda r, a: r.np("flip", a["input"], axis=a["dims"])),
    "roll": Spec("input shifts dims", lambda r, a: r.np("roll", a["input"], a["shifts"],
                                                          axis=a.get("dims"))),
    "tril": Spec("input diagonal", lambda r, a: r.np("tril", a["input"], k=a.get("diagonal"))),
    "triu": Spec("input diagonal", lambda r, a: r.np("triu", a["input"], k=a.get("diagonal"))),
    "diag": Spec("input diagonal", lambda r, a: r.np("diag", a["input"], k=a.get("diagonal"))),
    "diagonal": Spec("input offset dim1 dim2", lambda r, a: r.np(
        "diagonal", a["input"], offset=a.get("offset"), axis1=a.get("dim1"),
        axis2=a.get("dim2"))),
    "repeat_interleave": Spec("input repeats dim", _repeat_interleave),
    "tile": Spec("input dims", lambda r, a: r.np("tile", a["input"], a["dims"])),
    "broadcast_to": Spec("input size", lambda r, a: r.shared(
        a["input"], "broadcast_to", r.broadcast(a["input"], a["size"]))),
    "nn.functional.pad": Spec("input pad mode value", _pad),
    # construction
    "zeros": _spread("zeros"), "ones": _spread("ones"), "empty": _spread("zeros"),
    "full": Spec("size fill_value dtype", lambda r, a: r.np(
        "full", a["size"], a["fill_value"], dtype=r.dtype(a.get("dtype")))),
    "zeros_like": _like("zeros_like"), "ones_like": _like("ones_like"),
    "empty_like": _like("zeros_like"), "full_like": _like("full_like", fill=True),
    "eye": Spec("n m dtype", lambda r, a: r.np(
        "eye", a["n"], *([a["m"]] if a.get("m") is not None else []),
        dtype=r.dtype(a.get("dtype")))),
    "arange": Spec("start end step dtype", _arange),
    "linspace": Spec("start end steps dtype", lambda r, a: r.np(
        "linspace", a["start"], a["end"], a["steps"], dtype=r.dtype(a.get("dtype")))),
    "tensor": Spec("data dtype", _tensor),
    "as_tensor": Spec("data dtype", lambda r, a: _tensor(r, a, shares=True)),
    "from_numpy": Spec("data", lambda r, a: _tensor(r, a, shares=True)),
}
"""torch functions (by their name after ``torch.``) and the NumPy each is read as."""


def _method_view(r, a):
    return r.np("reshape", a["input"], r.shape(a["*shape"]))


def _size(r, a):
    shape = ast.Attribute(a["input"], "shape", ast.Load())
    return shape if a.get("dim") is None else ast.Subscript(shape, a["dim"], ast.Load())


METHODS: dict[str, Spec] = {
    **{n: FUNCTIONS[n] for n in (
        "exp", "log", "sqrt", "sin", "cos", "tan", "tanh", "sinh", "cosh", "abs", "log1p",
        "expm1", "square", "sign", "reciprocal", "neg", "sigmoid", "relu", "rsqrt", "pow",
        "sum", "mean", "prod", "amax", "amin", "max", "min", "argmax", "argmin", "logsumexp",
        "cumsum", "cumprod", "var", "std", "norm", "matmul", "dot", "mm", "mv", "outer",
        "clamp", "flatten", "ravel", "squeeze", "unsqueeze", "transpose", "swapaxes",
        "permute", "t", "flip", "roll", "tril", "triu", "diag", "diagonal", "trace",
        "repeat_interleave", "tile", "softmax", "log_softmax", "add", "sub", "mul", "div",
        "maximum", "minimum", "cross", "lgamma", "erf", "movedim")},
    "view": Spec("input *shape", _method_view),
    "reshape": Spec("input *shape", _method_view),
    "expand": Spec("input *size", _expand),
    "expand_as": Spec("input other", lambda r, a: r.shared(a["input"], "expand_as", r.broadcast(
        a["input"], ast.Attribute(a["other"], "shape", ast.Load())))),
    "view_as": Spec("input other", lambda r, a: r.np(
        "reshape", a["input"], ast.Attribute(a["other"], "shape", ast.Load()))),
    "reshape_as": Spec("input other", lambda r, a: r.np(
        "reshape", a["input"], ast.Attribute(a["other"], "shape", ast.Load()))),
    "repeat": Spec("input *sizes", lambda r, a: r.np("tile", a["input"],
                                                      r.shape(a["*sizes"]))),
    "clone": Spec("input", lambda r, a: r.np("copy", a["input"])),
    "detach": Spec("input", lambda r, a: r.detach(a["input"])),
    "double": Spec("input", lambda r, a: r.shared(a["input"], "double", ast.BinOp(
        a["input"], ast.Mult(), ast.Constant(1.0)))),
    "contiguous": Spec("input", lambda r, a: a["input"]),
    "size": Spec("input dim", _size),
    "dim": Spec("input", lambda r, a: r.np("ndim", a["input"])),
    "ndimension": Spec("input", lambda r, a: r.np("ndim", a["input"])),
    "numel": Spec("input", lambda r, a: r.np("size", a["input"])),
    "item": Spec("input", lambda r, a: ast.Call(ast.Name("float", ast.Load()),
                                                 [a["input"]], [])),
}
"""Tensor methods (``x.unsqueeze(0)``) and the NumPy each is read as; the
receiver is the ``input`` parameter."""

ATTRIBUTES = {"mT": lambda r, x: r.np("swapaxes", x, ast.Constant(-1), ast.Constant(-2))}


