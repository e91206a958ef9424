"""The fuzzer's NumPy programs written with torch's names.

Contract: :func:`torch_program` draws a program of the ``--numpy`` family
(half the time), the ``--numpy-loops`` family (a quarter) or the NumPy kind
of the ``--lists`` family (a quarter), and rewrites its function, through
``ast``, into the torch idiom with the same meaning: ``np.sin`` →
``torch.sin``, ``np.arctan`` → ``torch.atan``, ``np.negative`` →
``torch.neg``; ``np.sum(x)`` → ``torch.sum(x)`` or ``x.sum()``;
``np.sum(x, axis=k, keepdims=True)`` → ``torch.sum(x, dim=k, keepdim=True)``
(``axis=None`` → the reduction over everything); ``np.max(x, axis=k,
keepdims=True)`` → ``torch.amax(x, dim=k, keepdim=True)`` or
``torch.max(x, dim=k, keepdim=True).values`` (or ``[0]``); ``np.zeros(n)``
→ ``torch.zeros(n, dtype=torch.float64)``; ``np.copy(a)``/``a.copy()`` →
``a.clone()``; ``np.ones_like`` → ``torch.ones_like``; ``np.stack(hs)``,
``np.array(hs)`` → ``torch.stack(hs)``; ``np.array([0, 1])`` →
``torch.tensor([0, 1])``; ``np.outer`` → ``torch.outer``. The program keeps
its NumPy text (``numpy_source``): the runner (tests/fuzz_families.py)
requires the two gradients to agree to rounding, and the torch program's
gradient to agree with central differences of the torch function itself,
run on tests/torch_standin.py (torch's meaning written in NumPy: the
stand-in, not torch, which the test dependencies do not install).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from tests.programs import chance
from tests.programs_lists import _arrays
from tests.programs_numpy import NumpyProgram, numpy_loop_program, numpy_program

ELEMENTWISE = {"sin": "sin", "cos": "cos", "tanh": "tanh", "exp": "exp", "log": "log",
               "sqrt": "sqrt", "abs": "abs", "square": "square", "arctan": "atan",
               "negative": "neg", "maximum": "maximum", "minimum": "minimum",
               "outer": "outer", "ones_like": "ones_like", "zeros_like": "zeros_like"}
REDUCTIONS = {"sum": "sum", "mean": "mean", "max": "amax", "min": "amin"}
HEADER = "from tests.torch_standin import torch\n"


@dataclass
class TorchProgram(NumpyProgram):
    numpy_source: str = ""
    """The same program with NumPy's names (the torch text's twin)."""


def _torch(attr: str) -> ast.expr:
    return ast.Attribute(ast.Name("torch", ast.Load()), attr, ast.Load())


def _call(attr: str, args, keywords=()) -> ast.Call:
    return ast.Call(_torch(attr), list(args), list(keywords))


def _float64() -> ast.keyword:
    return ast.keyword("dtype", _torch("float64"))


class _ToTorch(ast.NodeTransformer):
    def __init__(self, d):
        self.d = d

    def visit_Call(self, node):
        self.generic_visit(node)
        f = node.func
        if isinstance(f, ast.Attribute) and f.attr == "copy" and not node.args:
            return ast.Call(ast.Attribute(f.value, "clone", ast.Load()), [], [])
        if not (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)
                and f.value.id == "np"):
            return node
        name, args = f.attr, node.args
        keywords = {k.arg: k.value for k in node.keywords}
        if name in ELEMENTWISE:
            return _call(ELEMENTWISE[name], args)
        if name in REDUCTIONS:
            return self.reduction(name, args[0], keywords)
        if name in ("zeros", "ones"):
            return _call(name, args, [_float64()])
        if name == "copy":
            return ast.Call(ast.Attribute(args[0], "clone", ast.Load()), [], [])
        if name in ("stack", "array"):
            if isinstance(args[0], ast.List) and all(isinstance(e, ast.Constant)
                                                     for e in args[0].elts):
                return _call("tensor", args)
            return _call("stack", args)
        raise ValueError(f"no torch form for np.{name} in the fuzzer's translation")

    def reduction(self, name: str, x, keywords: dict):
        axis = keywords.get("axis")
        whole = axis is None or (isinstance(axis, ast.Constant) and axis.value is None)
        if whole:
            if name in ("sum", "mean") and isinstance(x, ast.Name) and x.id != "s" \
                    and chance(self.d, 60):  # (a method of an array, not of the float s)
                return ast.Call(ast.Attribute(x, name, ast.Load()), [], [])
            return _call(name, [x])
        keep = [ast.keyword("keepdim", ast.Constant(True))] if "keepdims" in keywords else []
        if name in ("max", "min") and chance(self.d, 50):
            pair = _call(name, [x], [ast.keyword("dim", axis)] + keep)
            if chance(self.d, 50):
                return ast.Attribute(pair, "values", ast.Load())
            return ast.Subscript(pair, ast.Constant(0), ast.Load())
        return _call(REDUCTIONS[name], [x], [ast.keyword("dim", axis)] + keep)


def to_torch(source: str, d) -> str:
    """``source`` (a NumPy program) with torch's names (module docstring)."""
    tree = ast.parse(source)
    tree = _ToTorch(d).visit(tree)
    ast.fix_missing_locations(tree)
    body = ast.unparse(tree).replace("import numpy as np\n", "")
    return HEADER + "\n\n" + body + "\n"


def torch_program(d) -> TorchProgram:
    kind = d.integer(0, 3)
    base = numpy_program(d) if kind <= 1 else numpy_loop_program(d) if kind == 2 else _arrays(d)
    return TorchProgram(to_torch(base.source, d), base.point, base.ops, base.wrt, base.output,
                        numpy_source=base.source)
