"""Frontend: code written against PyTorch rewritten as the NumPy code it means.

Contract: :func:`desugar` rewrites, in place and before lowering, a function
that reads torch (:func:`s2s_ad.frontend.torch_names.reads_torch`): every call
of a torch function and every tensor method in :data:`FUNCTIONS` /
:data:`METHODS` becomes the NumPy expression with torch's meaning (arguments
bound by torch's signature, ``dim`` → ``axis``, ``keepdim`` → ``keepdims``,
``std``/``var`` unbiased by default, ``x.repeat`` → ``np.tile``,
``x.transpose(a, b)`` → ``np.swapaxes``, ``F.pad``'s pairs listed from the
last dimension, ``max(x, dim)`` → the pair ``(values, indices)``, ...),
torch's dtypes and numbers become NumPy's, and ``device=``/``requires_grad=``
are dropped. The generated gradient then calls NumPy only. Anything torch
without a mapping is refused, located, naming it; a keyword argument torch
takes but the mapping does not is refused naming the argument.

Where torch and NumPy differ and the rewrite cannot tell which applies from
the text, it refuses: ``torch.max(x, k)`` with ``k`` neither an integer
literal nor ``dim=`` (a dimension, or ``torch.maximum``?), ``expand`` with a
``-1``. ``torch.cross(a, b)`` without ``dim`` (torch takes the first
dimension of size 3) becomes ``np.cross`` after a check, kept in the
generated code, that both are vectors.

Before → after::

    torch.sum(x ** 2, dim=1, keepdim=True)     np.sum(x ** 2, axis=1, keepdims=True)
    x.unsqueeze(0).expand(3, -1)               refused: expand with -1
    v, _ = torch.min(d, dim=0)          ──▶    v, _ = (np.min(d, axis=0), np.argmin(d, axis=0))
"""

from __future__ import annotations

import ast
import builtins
import copy
import types

import numpy

from s2s_ad.frontend import torch_names

DROPPED = frozenset({"device", "requires_grad", "layout", "pin_memory", "memory_format",
                     "non_blocking"})
"""Keywords with no meaning for the NumPy computation (dropped, never read)."""
NOT_ON_LISTS = frozenset({"index", "count", "copy", "append", "pop", "insert", "extend",
                          "remove", "reverse", "sort", "keys", "values", "items", "get",
                          "update", "split", "join", "format"})
"""Method names of Python's own containers: never read as tensor methods."""
HINTS = {
    "no_grad": "compute the value outside and pass it as an argument (a parameter not in wrt)",
    "autograd": "differentiate with s2s_ad.grad / s2s_ad.vjp instead",
    "backward": "differentiate with s2s_ad.grad / s2s_ad.vjp instead",
}


class _Spec:
    """A torch function: its parameters in torch's order (``*name`` collects
    the rest of the positional arguments) and the NumPy it is read as."""

    def __init__(self, params: str, build):
        self.params = tuple(p for p in params.split() if p)
        self.build = build


def _sig(params: str):
    def wrap(build):
        return _Spec(params, build)
    return wrap


def _unary(np_name: str) -> _Spec:
    return _Spec("input", lambda r, a: r.np(np_name, a["input"]))


def _binary(np_name: str) -> _Spec:
    return _Spec("input other", lambda r, a: r.np(np_name, a["input"], a["other"]))


def _reduction(np_name: str) -> _Spec:
    return _Spec("input dim keepdim", lambda r, a: r.np(
        np_name, a["input"], axis=a.get("dim"), keepdims=a.get("keepdim")))


def _spread(np_name: str, first: str = "size") -> _Spec:
    """``torch.zeros(2, 3)`` and ``torch.zeros((2, 3))``: the sizes as one shape."""
    def build(r, a):
        return r.np(np_name, r.shape(a[f"*{first}"]), dtype=r.dtype(a.get("dtype")))
    return _Spec(f"*{first} dtype", build)


def _like(np_name: str, fill: bool = False) -> _Spec:
    def build(r, a):
        args = [a["input"]] + ([a["fill_value"]] if fill else [])
        return r.np(np_name, *args, dtype=r.dtype(a.get("dtype")))
    return _Spec("input fill_value dtype" if fill else "input dtype", build)


def _extreme(np_name: str, arg_name: str, pair_name: str) -> _Spec:
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
    return _Spec("input dim keepdim other", build)


def _var(np_name: str) -> _Spec:
    def build(r, a):
        return r.np(np_name, a["input"], axis=a.get("dim"), ddof=r.ddof(a),
                    keepdims=a.get("keepdim"))
    return _Spec("input dim unbiased keepdim correction", build)


def _pow(r, a):
    return ast.BinOp(a["input"], ast.Pow(), a["exponent"])


def _sigmoid(r, a):
    """σ(x): scipy.special.expit where SciPy is installed, else
    ``0.5 + 0.5·tanh(x/2)`` (the same function, never overflowing)."""
    try:
        import scipy.special  # noqa: F401
    except ImportError:
        half = ast.Constant(0.5)
        return ast.BinOp(half, ast.Add(), ast.BinOp(half, ast.Mult(), r.np(
            "tanh", ast.BinOp(a["input"], ast.Mult(), ast.Constant(0.5)))))
    return r.scipy("expit", a["input"])


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
           for e in ast.walk(sizes)):
        raise r.refuse(sizes, "`expand` with -1 (keep a dimension) is not supported: give "
                       "every size (`x.shape[k]` for a kept one)")
    return r.broadcast(a["input"], sizes)


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


def _tensor(r, a):
    """``torch.tensor(data)``: ``np.array(data)``; with ``dtype=torch.float64``
    (or ``double``) ``np.array(data) * 1.0``, a float array of the same values."""
    data, dtype = a["data"], a.get("dtype")
    if dtype is None:
        return r.np("array", data)
    if r.resolve(dtype) is numpy.float64:  # torch.float64, read as np.float64
        return ast.BinOp(r.np("array", data), ast.Mult(), ast.Constant(1.0))
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


FUNCTIONS: dict[str, _Spec] = {
    # elementwise
    **{n: _unary(n) for n in ("exp", "log", "sqrt", "sin", "cos", "tan", "tanh", "sinh",
                              "cosh", "abs", "log1p", "expm1", "square", "sign", "log2",
                              "log10", "exp2", "reciprocal", "negative", "arcsin", "arccos",
                              "arctan", "arcsinh", "arctanh")},
    **{t: _unary(n) for t, n in (("asin", "arcsin"), ("acos", "arccos"), ("atan", "arctan"),
                                 ("asinh", "arcsinh"), ("atanh", "arctanh"), ("neg", "negative"),
                                 ("absolute", "abs"))},
    "rsqrt": _Spec("input", lambda r, a: ast.BinOp(ast.Constant(1.0), ast.Div(),
                                                   r.np("sqrt", a["input"]))),
    "sigmoid": _Spec("input", _sigmoid), "special.expit": _Spec("input", _sigmoid),
    "nn.functional.sigmoid": _Spec("input", _sigmoid),
    "relu": _Spec("input", lambda r, a: r.np("where", ast.Compare(
        a["input"], [ast.Gt()], [ast.Constant(0)]), r.clone(a["input"]), ast.Constant(0.0))),
    "special.erf": _Spec("input", lambda r, a: r.scipy("erf", a["input"])),
    "erf": _Spec("input", lambda r, a: r.scipy("erf", a["input"])),
    "lgamma": _Spec("input", lambda r, a: r.scipy("gammaln", a["input"])),
    "special.gammaln": _Spec("input", lambda r, a: r.scipy("gammaln", a["input"])),
    "special.multigammaln": _Spec("input p", _multigammaln),
    "mvlgamma": _Spec("input p", _multigammaln),
    **{n: _Spec("input other", lambda r, a, op=op: ast.BinOp(a["input"], op(), a["other"]))
       for n, op in (("add", ast.Add), ("subtract", ast.Sub), ("sub", ast.Sub),
                     ("multiply", ast.Mult), ("mul", ast.Mult))},
    **{n: _binary(n) for n in ("maximum", "minimum", "hypot", "logaddexp", "matmul", "dot",
                               "outer", "inner")},
    **{t: _binary(n) for t, n in (("atan2", "arctan2"), ("arctan2", "arctan2"),
                                  ("mm", "matmul"), ("bmm", "matmul"), ("mv", "matmul"),
                                  ("ger", "outer"), ("fmax", "maximum"), ("fmin", "minimum"))},
    **{n: _Spec("input other rounding_mode", _div) for n in ("div", "divide", "true_divide")},
    "pow": _Spec("input exponent", _pow),
    "float_power": _Spec("input exponent", lambda r, a: r.np("float_power", a["input"],
                                                             a["exponent"])),
    "clamp": _Spec("input min max", lambda r, a: r.np("clip", a["input"], a.get("min") or
                                                      ast.Constant(None), a.get("max") or
                                                      ast.Constant(None))),
    "where": _Spec("condition input other", _where),
    "einsum": _Spec("equation *operands", _einsum),
    "cross": _Spec("input other dim", _cross),
    "linalg.cross": _Spec("input other dim", _linalg_cross),
    # reductions
    "sum": _reduction("sum"), "mean": _reduction("mean"), "prod": _reduction("prod"),
    "amax": _reduction("max"), "amin": _reduction("min"),
    "max": _extreme("max", "argmax", "maximum"), "min": _extreme("min", "argmin", "minimum"),
    "argmax": _reduction("argmax"), "argmin": _reduction("argmin"),
    "logsumexp": _Spec("input dim keepdim", lambda r, a: r.call_global(
        "logsumexp", torch_names.logsumexp, a["input"], axis=a.get("dim"),
        keepdims=a.get("keepdim"))),
    "special.logsumexp": _Spec("input dim keepdim", lambda r, a: r.call_global(
        "logsumexp", torch_names.logsumexp, a["input"], axis=a.get("dim"),
        keepdims=a.get("keepdim"))),
    "softmax": _Spec("input dim", _softmax),
    "nn.functional.softmax": _Spec("input dim", _softmax),
    "log_softmax": _Spec("input dim", lambda r, a: _softmax(r, a, log=True)),
    "nn.functional.log_softmax": _Spec("input dim", lambda r, a: _softmax(r, a, log=True)),
    "nn.functional.relu": _Spec("input", lambda r, a: FUNCTIONS["relu"].build(r, a)),
    "cumsum": _Spec("input dim", lambda r, a: r.np("cumsum", a["input"], axis=a["dim"])),
    "cumprod": _Spec("input dim", lambda r, a: r.np("cumprod", a["input"], axis=a["dim"])),
    "var": _var("var"), "std": _var("std"),
    "norm": _Spec("input p dim keepdim", _norm),
    "linalg.norm": _Spec("input ord dim keepdim", lambda r, a: r.np(
        "linalg.norm", a["input"], a.get("ord") or ast.Constant(None), axis=a.get("dim"),
        keepdims=a.get("keepdim"))),
    "linalg.vector_norm": _Spec("input ord dim keepdim", lambda r, a: r.np(
        "linalg.norm", a["input"] if a.get("dim") is not None else r.np("ravel", a["input"]),
        a.get("ord") or ast.Constant(None), axis=a.get("dim"), keepdims=a.get("keepdim"))),
    "trace": _unary("trace"),
    "linalg.det": _unary("linalg.det"), "det": _unary("linalg.det"),
    "linalg.inv": _unary("linalg.inv"), "inverse": _unary("linalg.inv"),
    "linalg.cholesky": _unary("linalg.cholesky"),
    "linalg.solve": _Spec("A B", lambda r, a: r.np("linalg.solve", a["A"], a["B"])),
    "linalg.slogdet": _unary("linalg.slogdet"), "slogdet": _unary("linalg.slogdet"),
    # shapes
    **{n: _Spec("tensors dim", lambda r, a: r.np("concatenate", a["tensors"],
                                                 axis=a.get("dim") or ast.Constant(0)))
       for n in ("cat", "concat", "concatenate")},
    "stack": _Spec("tensors dim", lambda r, a: r.np("stack", a["tensors"],
                                                    axis=a.get("dim") or ast.Constant(0))),
    "hstack": _Spec("tensors", lambda r, a: r.np("hstack", a["tensors"])),
    "vstack": _Spec("tensors", lambda r, a: r.np("vstack", a["tensors"])),
    "reshape": _Spec("input shape", lambda r, a: r.np("reshape", a["input"], a["shape"])),
    "ravel": _unary("ravel"),
    "flatten": _Spec("input start_dim end_dim", _flatten),
    "squeeze": _Spec("input dim", _squeeze),
    "unsqueeze": _Spec("input dim", lambda r, a: r.np("expand_dims", a["input"], a["dim"])),
    **{n: _Spec("input dim0 dim1", lambda r, a: r.np("swapaxes", a["input"], a["dim0"],
                                                     a["dim1"]))
       for n in ("transpose", "swapaxes", "swapdims")},
    "permute": _Spec("input *dims", lambda r, a: r.np("transpose", a["input"],
                                                      r.shape(a["*dims"]))),
    "t": _unary("transpose"),
    **{n: _Spec("input source destination", lambda r, a: r.np(
        "moveaxis", a["input"], a["source"], a["destination"])) for n in ("movedim", "moveaxis")},
    "flip": _Spec("input dims", lambda r, a: r.np("flip", a["input"], axis=a["dims"])),
    "roll": _Spec("input shifts dims", lambda r, a: r.np("roll", a["input"], a["shifts"],
                                                          axis=a.get("dims"))),
    "tril": _Spec("input diagonal", lambda r, a: r.np("tril", a["input"], k=a.get("diagonal"))),
    "triu": _Spec("input diagonal", lambda r, a: r.np("triu", a["input"], k=a.get("diagonal"))),
    "diag": _Spec("input diagonal", lambda r, a: r.np("diag", a["input"], k=a.get("diagonal"))),
    "diagonal": _Spec("input offset dim1 dim2", lambda r, a: r.np(
        "diagonal", a["input"], offset=a.get("offset"), axis1=a.get("dim1"),
        axis2=a.get("dim2"))),
    "repeat_interleave": _Spec("input repeats dim", _repeat_interleave),
    "tile": _Spec("input dims", lambda r, a: r.np("tile", a["input"], a["dims"])),
    "broadcast_to": _Spec("input size", lambda r, a: r.broadcast(a["input"], a["size"])),
    "nn.functional.pad": _Spec("input pad mode value", _pad),
    # construction
    "zeros": _spread("zeros"), "ones": _spread("ones"), "empty": _spread("zeros"),
    "full": _Spec("size fill_value dtype", lambda r, a: r.np(
        "full", a["size"], a["fill_value"], dtype=r.dtype(a.get("dtype")))),
    "zeros_like": _like("zeros_like"), "ones_like": _like("ones_like"),
    "empty_like": _like("zeros_like"), "full_like": _like("full_like", fill=True),
    "eye": _Spec("n m dtype", lambda r, a: r.np(
        "eye", a["n"], *([a["m"]] if a.get("m") is not None else []),
        dtype=r.dtype(a.get("dtype")))),
    "arange": _Spec("start end step dtype", _arange),
    "linspace": _Spec("start end steps dtype", lambda r, a: r.np(
        "linspace", a["start"], a["end"], a["steps"], dtype=r.dtype(a.get("dtype")))),
    "tensor": _Spec("data dtype", _tensor),
    "as_tensor": _Spec("data dtype", _tensor), "from_numpy": _Spec("data", _tensor),
}
"""torch functions (by their name after ``torch.``) and the NumPy each is read as."""


def _method_view(r, a):
    return r.np("reshape", a["input"], r.shape(a["*shape"]))


def _size(r, a):
    shape = ast.Attribute(a["input"], "shape", ast.Load())
    return shape if a.get("dim") is None else ast.Subscript(shape, a["dim"], ast.Load())


METHODS: dict[str, _Spec] = {
    **{n: FUNCTIONS[n] for n in (
        "exp", "log", "sqrt", "sin", "cos", "tan", "tanh", "sinh", "cosh", "abs", "log1p",
        "expm1", "square", "sign", "reciprocal", "neg", "sigmoid", "relu", "rsqrt", "pow",
        "sum", "mean", "prod", "amax", "amin", "max", "min", "argmax", "argmin", "logsumexp",
        "cumsum", "cumprod", "var", "std", "norm", "matmul", "dot", "mm", "mv", "outer",
        "clamp", "flatten", "ravel", "squeeze", "unsqueeze", "transpose", "swapaxes",
        "permute", "t", "flip", "roll", "tril", "triu", "diag", "diagonal", "trace",
        "repeat_interleave", "tile", "softmax", "log_softmax", "add", "sub", "mul", "div",
        "maximum", "minimum", "cross", "lgamma", "erf", "movedim")},
    "view": _Spec("input *shape", _method_view),
    "reshape": _Spec("input *shape", _method_view),
    "expand": _Spec("input *size", _expand),
    "expand_as": _Spec("input other", lambda r, a: r.broadcast(
        a["input"], ast.Attribute(a["other"], "shape", ast.Load()))),
    "view_as": _Spec("input other", lambda r, a: r.np(
        "reshape", a["input"], ast.Attribute(a["other"], "shape", ast.Load()))),
    "reshape_as": _Spec("input other", lambda r, a: r.np(
        "reshape", a["input"], ast.Attribute(a["other"], "shape", ast.Load()))),
    "repeat": _Spec("input *sizes", lambda r, a: r.np("tile", a["input"],
                                                      r.shape(a["*sizes"]))),
    "clone": _Spec("input", lambda r, a: r.np("copy", a["input"])),
    "detach": _Spec("input", lambda r, a: r.detach(a["input"])),
    "double": _Spec("input", lambda r, a: ast.BinOp(a["input"], ast.Mult(), ast.Constant(1.0))),
    "contiguous": _Spec("input", lambda r, a: a["input"]),
    "size": _Spec("input dim", _size),
    "dim": _Spec("input", lambda r, a: r.np("ndim", a["input"])),
    "ndimension": _Spec("input", lambda r, a: r.np("ndim", a["input"])),
    "numel": _Spec("input", lambda r, a: r.np("size", a["input"])),
    "item": _Spec("input", lambda r, a: ast.Call(ast.Name("float", ast.Load()),
                                                 [a["input"]], [])),
}
"""Tensor methods (``x.unsqueeze(0)``) and the NumPy each is read as; the
receiver is the ``input`` parameter."""

ATTRIBUTES = {"mT": lambda r, x: r.np("swapaxes", x, ast.Constant(-1), ast.Constant(-2))}


def desugar(src) -> None:
    """Rewrite ``src.tree`` (a function reading torch) into NumPy code."""
    if not getattr(src, "torch", False) or getattr(src, "torch_desugared", False):
        return
    src.torch_desugared = True
    _Rewrite(src).run()


class _Rewrite(ast.NodeTransformer):
    def __init__(self, src):
        self.src = src
        tree = src.tree
        self.locals = {a.arg for a in ast.walk(tree) if isinstance(a, ast.arg)} \
            | {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)
               and isinstance(n.ctx, ast.Store)} \
            | {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)
               and n is not tree}
        self.taken = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)} | self.locals \
            | set(src.globals)
        self.bound: dict = {}
        self.cloned = {id(n.func.value) for n in ast.walk(tree) if isinstance(n, ast.Call)
                       and isinstance(n.func, ast.Attribute) and n.func.attr == "clone"}
        """ids of the calls whose result is cloned (``x.detach().clone()``)."""
        self.pending: list = []
        self.once = 0
        """>0 inside code evaluated conditionally or repeatedly (a lambda, a
        comprehension, a conditional expression, a ``while`` condition), where
        no check can be placed before the statement."""

    def run(self) -> None:
        self.src.tree.body = self.statements(self.src.tree.body)
        ast.fix_missing_locations(self.src.tree)

    # -- names ---------------------------------------------------------------

    def global_name(self, base: str, obj) -> str:
        """A global name bound to ``obj`` in the function's globals."""
        if id(obj) in self.bound:
            return self.bound[id(obj)]
        name = next((k for k, v in self.src.globals.items() if v is obj
                     and k not in self.locals), None)
        if name is None:
            name, i = base, 1
            while name in self.taken or hasattr(builtins, name):
                name, i = f"{base}_{i}", i + 1
            self.taken.add(name)
            if self.src.globals is getattr(self.src.fn, "__globals__", None):
                self.src.globals = dict(self.src.globals)
            self.src.globals[name] = obj
        self.bound[id(obj)] = name
        return name

    def resolve(self, node):
        """The global object an expression names (None for locals and others)."""
        if isinstance(node, ast.Name):
            return None if node.id in self.locals else self.src.globals.get(
                node.id, getattr(builtins, node.id, None))
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            if isinstance(base, types.ModuleType):
                return getattr(base, node.attr, None)
        return None

    def public(self, node) -> str | None:
        """``"sum"``, ``"nn.functional.pad"``: the torch name of what
        ``node`` refers to, after ``torch.``; None when it is not torch's."""
        if isinstance(node, ast.Attribute):
            base = self.resolve(node.value)
            if isinstance(base, types.ModuleType) and torch_names.is_torch(base):
                return f"{base.__name__}.{node.attr}".partition(".")[2]
        obj = self.resolve(node)
        if obj is None or not torch_names.is_torch(obj):
            return None
        return (torch_names.torch_name(obj) or "").partition(".")[2]

    # -- building NumPy --------------------------------------------------------

    def np(self, path: str, *args, **keywords) -> ast.Call:
        func = ast.Name(self.global_name("np", numpy), ast.Load())
        for part in path.split("."):
            func = ast.Attribute(func, part, ast.Load())
        return ast.Call(func, list(args), [ast.keyword(k, v) for k, v in keywords.items()
                                           if v is not None])

    def scipy(self, name: str, *args) -> ast.Call:
        try:
            import scipy.special
        except ImportError:
            raise self.refuse(self.current, f"torch's `{name}` is read as "
                              f"scipy.special.{name}: install scipy") from None
        func = ast.Attribute(ast.Name(self.global_name("scipy_special", scipy.special),
                                      ast.Load()), name, ast.Load())
        return ast.Call(func, list(args), [])

    def call_global(self, base: str, obj, *args, **keywords) -> ast.Call:
        return ast.Call(ast.Name(self.global_name(base, obj), ast.Load()), list(args),
                        [ast.keyword(k, v) for k, v in keywords.items() if v is not None])

    def shape(self, parts):
        """Sizes given as ``*size`` (``2, 3`` or one ``(2, 3)``) as one shape."""
        if len(parts) == 1 and not isinstance(parts[0], ast.Starred):
            return parts[0]
        return ast.Tuple(list(parts), ast.Load())

    def broadcast(self, x, shape):
        """``x`` broadcast to ``shape``: ``x + np.zeros(shape, dtype=x.dtype)``
        (the adjoint is summed back to ``x``'s shape)."""
        zeros = self.np("zeros", shape, dtype=ast.Attribute(self.clone(x), "dtype", ast.Load()))
        return ast.BinOp(x, ast.Add(), zeros)

    def clone(self, node):
        """``node`` read a second time (the NumPy form reads it twice): a copy
        of the expression, which is computed twice; refused where it calls
        anything but NumPy (a helper might do more than compute a value)."""
        for n in ast.walk(node):
            if isinstance(n, ast.Call):
                obj = self.resolve(n.func)
                if not (torch_names.belongs_to_numpy(obj) or obj is torch_names.logsumexp):
                    raise self.refuse(node, f"`{ast.unparse(node)}` is read twice by the "
                                      f"NumPy form of `{ast.unparse(self.current)}`: assign "
                                      "it to a name first")
        return copy.deepcopy(node)

    def dtype(self, node):
        if node is None:
            return None
        if isinstance(node, ast.Attribute) and node.attr == "dtype":
            return node  # x.dtype: an array's, read when the code runs
        name = self.public(node)
        if name is not None and name in torch_names.DTYPES:
            return ast.Attribute(ast.Name(self.global_name("np", numpy), ast.Load()),
                                 torch_names.DTYPES[name], ast.Load())
        return node

    def ddof(self, a):
        """torch's ``var``/``std`` divide by n - 1 unless told otherwise."""
        if a.get("correction") is not None:
            return a["correction"]
        unbiased = a.get("unbiased")
        if unbiased is None:
            return ast.Constant(1)
        if isinstance(unbiased, ast.Constant) and isinstance(unbiased.value, bool):
            return ast.Constant(int(unbiased.value))
        raise self.refuse(unbiased, "`unbiased=` must be True or False written out")

    def check_vectors(self, x, y) -> None:
        """Before the statement: ``assert np.ndim(x) == 1 == np.ndim(y)``."""
        if self.once:
            raise self.refuse(self.current, "torch.cross without `dim=` inside a lambda, "
                              "comprehension, conditional expression or `while` condition "
                              "is not supported: pass `dim=-1` (the last dimension)")
        test = ast.Compare(self.np("ndim", self.clone(x)), [ast.Eq(), ast.Eq()],
                           [ast.Constant(1), self.np("ndim", self.clone(y))])
        message = ast.Constant("torch.cross without dim= takes the first dimension of size 3; "
                               "s2s-ad reads it for vectors only: pass dim=")
        self.pending.append(ast.copy_location(ast.Assert(test, message), self.current))

    def detach(self, x):
        """``x.detach()``: a copy with no derivative. torch's result shares
        ``x``'s storage, a copy does not: read where that cannot show, on a
        copy (``x.clone().detach()``, ``x.detach().clone()``) or in a function
        that writes into no array (no subscript or augmented assignment)."""
        node = self.current
        copied = self.copies(x) or id(node) in self.cloned
        writes = any(isinstance(n, ast.AugAssign) or isinstance(n, (ast.Assign, ast.AnnAssign))
                     and any(isinstance(t, ast.Subscript) for t in (
                         n.targets if isinstance(n, ast.Assign) else [n.target])
                         for t in ast.walk(t))
                     for n in ast.walk(self.src.tree))
        if not copied and writes:
            raise self.refuse(node, "`.detach()` shares the tensor's storage, which a function "
                              "that writes into arrays could see: write `.clone().detach()` "
                              "(a copy without derivative)")
        if self.copies(x):  # np.copy(detached(...)): a new array the function may write into
            x.args = [self.call_global("detached", torch_names.detached, *x.args)]
            return x
        return self.call_global("detached", torch_names.detached, x)

    def copies(self, node) -> bool:
        """Whether ``node`` (rewritten) is a fresh copy: ``np.copy(...)``."""
        return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr == "copy" and self.resolve(node.func.value) is numpy

    def refuse(self, node, message: str):
        return self.src.error(node, message)

    # -- statements ------------------------------------------------------------

    def statements(self, stmts: list) -> list:
        out = []
        for s in stmts:
            outer, self.pending = self.pending, []
            s = self.visit(s)
            out += self.pending + (s if isinstance(s, list) else [s])
            self.pending = outer
        return out

    def generic_visit(self, node):
        for field, value in ast.iter_fields(node):
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                setattr(node, field, self.statements(value))
            elif isinstance(value, list):
                setattr(node, field, [self.visit(v) if isinstance(v, ast.AST) else v
                                      for v in value])
            elif isinstance(value, ast.AST):
                setattr(node, field, self.visit(value))
        return node

    def visit_While(self, node):
        self.once += 1
        node.test = self.visit(node.test)
        self.once -= 1
        node.body, node.orelse = self.statements(node.body), self.statements(node.orelse)
        return node

    def _repeated(self, node):
        self.once += 1
        node = self.generic_visit(node)
        self.once -= 1
        return node

    visit_Lambda = visit_ListComp = visit_SetComp = visit_DictComp = _repeated
    visit_GeneratorExp = visit_IfExp = _repeated

    def visit_BoolOp(self, node):
        node.values[0] = self.visit(node.values[0])
        self.once += 1
        node.values[1:] = [self.visit(v) for v in node.values[1:]]
        self.once -= 1
        return node

    # -- expressions -------------------------------------------------------------

    def visit_Call(self, node):
        name = self.public(node.func)
        if name is not None:
            spec = FUNCTIONS.get(name)
            if spec is None:
                raise self.unmapped(node.func, f"torch.{name}")
            return self.apply(spec, node, list(node.args), f"torch.{name}")
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in METHODS \
                and func.attr not in NOT_ON_LISTS \
                and not isinstance(self.resolve(func.value), types.ModuleType):
            return self.apply(METHODS[func.attr], node, [func.value] + list(node.args),
                              f"Tensor.{func.attr}")
        if isinstance(func, ast.Attribute) and func.attr in HINTS:
            raise self.unmapped(func, f"Tensor.{func.attr}")
        return self.generic_visit(node)

    def visit_Attribute(self, node):
        name = self.public(node)
        if name is not None:
            if name in torch_names.DTYPES:
                return ast.copy_location(self.dtype(node), node)
            if name in torch_names.CONSTANTS:
                return ast.copy_location(ast.Attribute(ast.Name(
                    self.global_name("np", numpy), ast.Load()), torch_names.CONSTANTS[name],
                    ast.Load()), node)
            raise self.unmapped(node, f"torch.{name}")
        node = self.generic_visit(node)
        if getattr(node.value, "torch_pair", False) and node.attr in ("values", "indices"):
            return node.value.elts[0 if node.attr == "values" else 1]
        if node.attr in ATTRIBUTES and not isinstance(self.resolve(node.value),
                                                      types.ModuleType):
            self.current = node
            return ast.copy_location(ATTRIBUTES[node.attr](self, node.value), node)
        if node.attr in ("data", "grad", "requires_grad"):
            raise self.unmapped(node, f"Tensor.{node.attr}")
        return node

    def visit_Name(self, node):
        name = self.public(node) if isinstance(node.ctx, ast.Load) else None
        if name is not None:
            if name in torch_names.DTYPES:
                return ast.copy_location(self.dtype(node), node)
            raise self.unmapped(node, f"torch.{name}" if name else "torch")
        return node

    def unmapped(self, node, what: str):
        short = what.rpartition(".")[2]
        hint = HINTS.get(short) or HINTS.get(what.split(".")[1] if "." in what else "")
        return self.refuse(node, f"`{ast.unparse(node)}` ({what}) has no NumPy reading in "
                           "s2s-ad" + (f": {hint}" if hint else "; docs/numpy.md "
                                       "(PyTorch-flavoured code) lists what is read"))

    def apply(self, spec: _Spec, node: ast.Call, positional: list, what: str):
        self.current = node
        bound = self.bind(spec, node, positional, what)
        bound = {k: (self.visit(v) if isinstance(v, ast.AST) else [self.visit(e) for e in v])
                 for k, v in bound.items()}
        self.current = node
        out = spec.build(self, bound)
        return ast.fix_missing_locations(_located(out, node))

    def bind(self, spec: _Spec, node: ast.Call, positional: list, what: str) -> dict:
        bound: dict = {}
        params = list(spec.params)
        star = next((p for p in params if p.startswith("*")), None)
        i = 0
        for arg in positional:
            if i < len(params) and params[i].startswith("*"):
                bound.setdefault(params[i], []).append(arg)
                continue
            if isinstance(arg, ast.Starred):
                raise self.refuse(arg, f"`{what}`: a starred argument is not supported here")
            if i >= len(params):
                raise self.refuse(arg, f"`{what}` takes at most {i} positional argument(s) "
                                  "here")
            bound[params[i]] = arg
            i += 1
        if star is not None:
            bound.setdefault(star, [])
        names = {p for p in params if not p.startswith("*")}
        for kw in node.keywords:
            key = {"axis": "dim", "keepdims": "keepdim"}.get(kw.arg, kw.arg)
            if kw.arg in DROPPED:
                continue
            if kw.arg is None or key not in names:
                raise self.refuse(kw.value if kw.arg is None else kw, f"`{what}`: the argument "
                                  f"`{kw.arg or '**'}` is not supported")
            if key in bound:
                raise self.refuse(kw, f"`{what}` got `{kw.arg}` twice")
            bound[key] = kw.value
        if what in ("torch.max", "torch.min", "Tensor.max", "Tensor.min"):
            second = positional[1] if len(positional) > 1 else None
            if second is not None and not _int_literal(second):
                # torch.max(x, 1): a dimension; torch.max(x, y): elementwise
                raise self.refuse(second, f"`{what}(x, {ast.unparse(second)})`: a dimension "
                                  "or a second tensor? Write `dim=` for a dimension, "
                                  f"`torch.{'maximum' if 'max' in what else 'minimum'}` for "
                                  "the elementwise form")
            if bound.get("other") is not None and "dim" in bound:
                raise self.refuse(node, f"`{what}` takes a dimension or a second tensor, "
                                  "not both")
        return bound


def _int_literal(node) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) is int


def _located(expr, node):
    """``expr`` with every node that has no position yet at ``node``'s."""
    for n in ast.walk(expr):
        if "lineno" in n._attributes and not hasattr(n, "lineno"):
            n.lineno, n.col_offset = node.lineno, node.col_offset
            n.end_lineno = getattr(node, "end_lineno", node.lineno)
            n.end_col_offset = getattr(node, "end_col_offset", node.col_offset)
    return expr
