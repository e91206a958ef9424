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

import numpy


from s2s_ad.frontend import torch_names
from s2s_ad.frontend.library_forms import Rewrite
from s2s_ad.frontend.torch_table import ATTRIBUTES, FUNCTIONS, METHODS
from s2s_ad.syntax_walk import walk

NUMPY_VIEWS = {"asarray", "asanyarray", "reshape", "transpose", "ravel", "swapaxes", "moveaxis",
               "expand_dims", "squeeze", "diagonal", "broadcast_to", "atleast_1d", "atleast_2d",
               "atleast_3d", "flip", "real", "imag"}
"""NumPy functions whose result may be a view of their argument."""

DROPPED = frozenset({"device", "requires_grad", "layout", "pin_memory", "memory_format",
                     "non_blocking"})
"""Keywords with no meaning for the NumPy computation (dropped, never read)."""
HINTS = {
    "no_grad": "compute the value outside and pass it as an argument (a parameter not in wrt)",
    "autograd": "differentiate with s2s_ad.grad / s2s_ad.vjp instead",
    "backward": "differentiate with s2s_ad.grad / s2s_ad.vjp instead",
}


def desugar(src) -> None:
    """Rewrite ``src.tree`` (a function reading torch) into NumPy code."""
    if not getattr(src, "torch", False) or getattr(src, "torch_desugared", False):
        return
    src.torch_desugared = True
    _TorchRewrite(src).run()


class _TorchRewrite(Rewrite):
    """torch's tables, and what only torch's reading needs."""

    prefix = "torch"
    section = "PyTorch-flavoured code"
    functions, methods, attributes = FUNCTIONS, METHODS, ATTRIBUTES
    dtypes, constants = torch_names.DTYPES, torch_names.CONSTANTS
    hints, dropped = HINTS, DROPPED
    renamed = {"axis": "dim", "keepdims": "keepdim"}
    refused_attributes = frozenset({"data", "grad", "requires_grad"})

    def owns(self, obj) -> bool:
        return torch_names.is_torch(obj)

    def public_name(self, obj) -> str:
        return torch_names.torch_name(obj)

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
        self.unshared(x, "`.detach()` shares the tensor's storage, which a function that "
                      "writes into arrays could see: write `.clone().detach()` (a copy "
                      "without derivative)")
        if self.copies(x):  # np.copy(detached(...)): a new array the function may write into
            x.args = [self.call_global("detached", torch_names.detached, *x.args)]
            return x
        return self.call_global("detached", torch_names.detached, x)

    def shared(self, x, what: str, rewritten):
        """``rewritten``, a new array standing for a torch result that may
        share ``x``'s storage (``x.double()`` of a float64 tensor is ``x``
        itself, ``x.expand(...)`` a view of it, ``torch.as_tensor(a, dtype=)``
        of a float64 array ``a`` itself), where no write can tell the two
        apart (as :meth:`unshared`)."""
        self.unshared(x, f"`{what}` may share the tensor's storage (torch returns the tensor "
                      "itself or a view of it), which a function that writes into arrays "
                      f"could see: write `.clone()` before or after it for a copy")
        return rewritten

    def unshared(self, x, message: str) -> None:
        """Refuse the current call, whose torch result may share ``x``'s
        storage, unless it is read on a copy or the function writes into no
        array (no subscript or augmented assignment)."""
        node = self.current
        copied = self.copies(x) or id(node) in self.cloned or self.fresh(x)
        if not copied and self.writes_arrays():
            raise self.refuse(node, message)

    def fresh(self, x) -> bool:
        """Whether ``x`` (rewritten) is a value no name holds: arithmetic, a
        comparison, or a NumPy function that returns a new array (not one of
        the views, ``np.reshape``, ``np.transpose``, ...)."""
        if isinstance(x, (ast.BinOp, ast.UnaryOp, ast.Compare)):
            return True
        if not isinstance(x, ast.Call):
            return False
        obj = self.resolve(x.func)
        module = getattr(obj, "__module__", None) or ""
        numpy_fn = module == "numpy" or module.startswith("numpy.") \
            or isinstance(obj, numpy.ufunc)
        return numpy_fn and getattr(obj, "__name__", "") not in NUMPY_VIEWS

    def writes_arrays(self) -> bool:
        return any(isinstance(n, ast.AugAssign) or isinstance(n, (ast.Assign, ast.AnnAssign))
                   and any(isinstance(t, ast.Subscript) for t in (
                       n.targets if isinstance(n, ast.Assign) else [n.target])
                       for t in walk(t))
                   for n in walk(self.src.tree))

    def copies(self, node) -> bool:
        """Whether ``node`` (rewritten) is a fresh copy: ``np.copy(...)``."""
        return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr == "copy" and self.resolve(node.func.value) is numpy

    def check_bound(self, node, positional: list, what: str, bound: dict) -> None:
        dim = bound.get("dim")
        if isinstance(dim, (ast.Tuple, ast.List)) and not dim.elts:
            raise self.refuse(dim, f"`{what}` with an empty `dim` is not supported (torch reads "
                              "it as every dimension, NumPy's axis=() as none): omit it")
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


def _int_literal(node) -> bool:
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) is int

