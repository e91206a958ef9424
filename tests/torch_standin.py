"""A stand-in for the torch names tests/torch_src.py uses, where torch is not
installed (no extra of the test dependencies installs it).

It is never put on ``sys.path`` or in ``sys.modules`` as ``torch`` (other
tests may ask whether torch is installed): tests/torch_src.py imports the real
``torch`` when it can (and S2S_TORCH_STANDIN is not set) and this module's
``torch`` otherwise. Its objects carry torch's names, which is how s2s-ad
recognises torch (docs/numpy.md, "PyTorch-flavoured code"): ``torch`` is a
module named ``torch``, ``torch.nn.functional``, ``torch.special`` and
``torch.linalg`` modules of those names. Running the corpus's functions
themselves (the finite-difference references) needs torch's meaning, written
here in plain NumPy, independently of s2s-ad's rewrite: :class:`Tensor` is an
ndarray with torch's methods (``sum(dim=, keepdim=)``, ``unsqueeze``,
``view``, ``expand``, ``permute``, ``repeat`` as tiling, ``pow``, ``t``), and
the functions take torch's arguments (``dim``, ``keepdim``, ``unbiased``,
``F.pad``'s pairs from the last dimension, ``max(x, dim)`` returning
``(values, indices)``).
"""

from __future__ import annotations

import math
import types
from collections import namedtuple

import numpy as np

Pair = namedtuple("Pair", ["values", "indices"])


def _t(x):
    return np.asarray(x).view(Tensor)


class Tensor(np.ndarray):
    """An ndarray with the tensor methods the corpus calls."""

    def sum(self, dim=None, keepdim=False, *, axis=None, keepdims=False, out=None, dtype=None):
        # (axis=, keepdims=: torch's NumPy-style aliases, which np.sum of a tensor passes)
        return _t(np.sum(np.asarray(self), axis=dim if axis is None else axis,
                         keepdims=keepdim or keepdims))

    def mean(self, dim=None, keepdim=False, *, axis=None, keepdims=False, out=None, dtype=None):
        return _t(np.mean(np.asarray(self), axis=dim if axis is None else axis,
                          keepdims=keepdim or keepdims))

    def pow(self, p):
        return _t(np.asarray(self) ** p)

    def unsqueeze(self, dim):
        return _t(np.expand_dims(np.asarray(self), dim))

    def squeeze(self, dim=None):
        a = np.asarray(self)
        if dim is not None and a.shape[dim] != 1:
            return _t(a)  # torch leaves a dimension of another size alone
        return _t(np.squeeze(a, axis=dim))

    def view(self, *shape):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return _t(np.reshape(np.asarray(self), shape))

    reshape = view

    def expand(self, *sizes):
        if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
            sizes = tuple(sizes[0])
        a = np.asarray(self)
        lead = len(sizes) - a.ndim
        sizes = tuple(a.shape[k - lead] if s == -1 else s for k, s in enumerate(sizes))
        return _t(np.broadcast_to(a, sizes))

    def permute(self, *dims):
        return _t(np.transpose(np.asarray(self), dims))

    def repeat(self, *sizes):
        return _t(np.tile(np.asarray(self), sizes))

    def t(self):
        return _t(np.asarray(self).T)

    def sqrt(self):
        return _t(np.sqrt(np.asarray(self)))

    def clone(self):
        return _t(np.array(self))

    def detach(self):
        return self  # (the stand-in has no derivatives to stop)

    def sin(self):
        return _t(np.sin(np.asarray(self)))

    def double(self):
        return _t(np.asarray(self, dtype=np.float64))  # itself when float64, as torch

    def contiguous(self):
        return self

    def expand_as(self, other):
        return self.expand(*np.shape(other))

    def flatten(self):
        return _t(np.reshape(np.asarray(self), -1))  # a view where NumPy can, as torch

    def item(self):
        return np.asarray(self).item()


def _fn(module: str):
    def named(f):
        f.__module__ = module
        return f
    return named


torch = types.ModuleType("torch")
special = types.ModuleType("torch.special")
linalg = types.ModuleType("torch.linalg")
nn = types.ModuleType("torch.nn")
functional = types.ModuleType("torch.nn.functional")
torch.special, torch.linalg, torch.nn, nn.functional = special, linalg, nn, functional
torch.float64, torch.float32, torch.int64 = np.float64, np.float32, np.int64


def _elementwise(name, f):
    def g(x):
        return _t(f(np.asarray(x)))
    g.__name__ = g.__qualname__ = name
    g.__module__ = "torch"
    setattr(torch, name, g)


for _name, _f in (("exp", np.exp), ("log", np.log), ("sqrt", np.sqrt), ("sin", np.sin),
                  ("cos", np.cos), ("tanh", np.tanh), ("atan", np.arctan), ("neg", np.negative),
                  ("square", np.square), ("abs", np.abs),
                  ("sigmoid", lambda a: 1.0 / (1.0 + np.exp(-a)))):
    _elementwise(_name, _f)


def _register(module, module_name):
    def put(f):
        f.__module__ = module_name
        setattr(module, f.__name__, f)
        return f
    return put


_torch = _register(torch, "torch")


@_torch
def sum(x, dim=None, keepdim=False):  # noqa: A001 (torch's name)
    return _t(np.sum(np.asarray(x), axis=dim, keepdims=keepdim))


def _extreme(np_fn, arg_fn):
    def f(x, dim=None, keepdim=False):
        a = np.asarray(x)
        if dim is None:
            return _t(np_fn(a))
        return Pair(_t(np_fn(a, axis=dim, keepdims=keepdim)),
                    _t(arg_fn(a, axis=dim, keepdims=keepdim)))
    return f


torch.max = _extreme(np.max, np.argmax)
torch.max.__name__, torch.max.__module__ = "max", "torch"
torch.min = _extreme(np.min, np.argmin)
torch.min.__name__, torch.min.__module__ = "min", "torch"


@_torch
def amax(x, dim=(), keepdim=False):
    return _t(np.max(np.asarray(x), axis=dim if dim != () else None, keepdims=keepdim))


@_torch
def amin(x, dim=(), keepdim=False):
    return _t(np.min(np.asarray(x), axis=dim if dim != () else None, keepdims=keepdim))


@_torch
def mean(x, dim=None, keepdim=False):
    return _t(np.mean(np.asarray(x), axis=dim, keepdims=keepdim))


@_torch
def maximum(x, y):
    return _t(np.maximum(np.asarray(x), np.asarray(y)))


@_torch
def minimum(x, y):
    return _t(np.minimum(np.asarray(x), np.asarray(y)))


@_torch
def ones(*size, dtype=None):
    shape = size[0] if len(size) == 1 else size
    return _t(np.ones(shape, dtype=dtype or np.float32))


@_torch
def ones_like(x, dtype=None):
    return _t(np.ones_like(np.asarray(x), dtype=dtype))


@_torch
def std(x, dim=None, unbiased=True, keepdim=False):
    return _t(np.std(np.asarray(x), axis=dim, ddof=1 if unbiased else 0, keepdims=keepdim))


@_torch
def var(x, dim=None, unbiased=True, keepdim=False):
    return _t(np.var(np.asarray(x), axis=dim, ddof=1 if unbiased else 0, keepdims=keepdim))


@_torch
def cumsum(x, dim):
    return _t(np.cumsum(np.asarray(x), axis=dim))


@_torch
def logsumexp(x, dim, keepdim=False):
    a = np.asarray(x)
    top = np.max(a, axis=dim, keepdims=True)
    out = np.log(np.sum(np.exp(a - top), axis=dim, keepdims=True)) + top
    return _t(out if keepdim else np.squeeze(out, axis=dim))


@_torch
def matmul(a, b):
    return _t(np.matmul(a, b))


@_torch
def dot(a, b):
    return _t(np.dot(a, b))


@_torch
def outer(a, b):
    return _t(np.outer(a, b))


@_torch
def einsum(equation, *operands):
    return _t(np.einsum(equation, *[np.asarray(o) for o in operands]))


@_torch
def arange(*args, dtype=None):
    return _t(np.arange(*args, dtype=dtype))


@_torch
def tril(x, diagonal=0):
    return _t(np.tril(np.asarray(x), diagonal))


@_torch
def triu(x, diagonal=0):
    return _t(np.triu(np.asarray(x), diagonal))


@_torch
def diagonal(x, offset=0, dim1=0, dim2=1):
    return _t(np.diagonal(np.asarray(x), offset, dim1, dim2))


@_torch
def transpose(x, dim0, dim1):
    return _t(np.swapaxes(np.asarray(x), dim0, dim1))


@_torch
def flip(x, dims):
    return _t(np.flip(np.asarray(x), axis=dims))


@_torch
def roll(x, shifts, dims=None):
    return _t(np.roll(np.asarray(x), shifts, axis=dims))


@_torch
def where(condition, x, y):
    return _t(np.where(condition, x, y))


@_torch
def tensor(data, dtype=None):
    return _t(np.array(data, dtype=dtype))


@_torch
def permute(x, dims):
    return _t(np.transpose(np.asarray(x), tuple(dims)))


@_torch
def from_numpy(a):
    return a.view(Tensor)  # shares the array's memory, as torch


@_torch
def as_tensor(data, dtype=None):
    return _t(np.asarray(data, dtype=dtype))  # the array itself where the dtype agrees


@_torch
def zeros(*size, dtype=None):
    shape = size[0] if len(size) == 1 else size
    return _t(np.zeros(shape, dtype=dtype or np.float32))


@_torch
def zeros_like(x, dtype=None):
    return _t(np.zeros_like(np.asarray(x), dtype=dtype))


@_torch
def eye(n, dtype=None):
    return _t(np.eye(n, dtype=dtype or np.float32))


@_torch
def repeat_interleave(x, repeats, dim=None):
    return _t(np.repeat(np.asarray(x), np.asarray(repeats), axis=dim))


@_torch
def cat(tensors, dim=0):
    return _t(np.concatenate([np.asarray(t) for t in tensors], axis=dim))


@_torch
def stack(tensors, dim=0):
    return _t(np.stack([np.asarray(t) for t in tensors], axis=dim))


@_torch
def cross(a, b, dim=None):
    a, b = np.asarray(a), np.asarray(b)
    if dim is None:
        dim = next(k for k, n in enumerate(np.broadcast_shapes(a.shape, b.shape)) if n == 3)
    return _t(np.cross(a, b, axis=dim))


@_register(linalg, "torch.linalg")
def cross(a, b, dim=-1):  # noqa: F811 (torch.linalg's)
    return _t(np.cross(np.asarray(a), np.asarray(b), axis=dim))


@_register(special, "torch.special")
def multigammaln(a, p):
    a = float(np.asarray(a))
    return _t(p * (p - 1) / 4 * math.log(math.pi)
              + np.sum([math.lgamma(a - j / 2) for j in range(p)]))


@_register(functional, "torch.nn.functional")
def pad(x, pad, mode="constant", value=0.0):
    a = np.asarray(x)
    widths = [(0, 0)] * a.ndim
    for k in range(len(pad) // 2):
        widths[a.ndim - 1 - k] = (pad[2 * k], pad[2 * k + 1])
    return _t(np.pad(a, widths, constant_values=value))


@_register(functional, "torch.nn.functional")
def softmax(x, dim):
    a = np.asarray(x)
    e = np.exp(a - np.max(a, axis=dim, keepdims=True))
    return _t(e / np.sum(e, axis=dim, keepdims=True))


@_register(functional, "torch.nn.functional")
def softplus(x, beta=1.0, threshold=20.0):
    a = np.asarray(x)
    return _t(np.where(a * beta > threshold, a, np.log1p(np.exp(a * beta)) / beta))


@_register(functional, "torch.nn.functional")
def mse_loss(input, target, reduction="mean"):  # noqa: A002 (torch's name)
    e = (np.asarray(input) - np.asarray(target)) ** 2
    return _t(e if reduction == "none" else getattr(np, reduction)(e))


@_register(functional, "torch.nn.functional")
def l1_loss(input, target, reduction="mean"):  # noqa: A002 (torch's name)
    e = np.abs(np.asarray(input) - np.asarray(target))
    return _t(e if reduction == "none" else getattr(np, reduction)(e))


@_register(functional, "torch.nn.functional")
def leaky_relu(x, negative_slope=0.01):
    a = np.asarray(x)
    return _t(np.where(a > 0, a, a * negative_slope))


@_register(functional, "torch.nn.functional")
def elu(x, alpha=1.0):
    a = np.asarray(x)
    return _t(np.where(a > 0, a, alpha * np.expm1(a)))


@_register(functional, "torch.nn.functional")
def silu(x):
    a = np.asarray(x)
    return _t(a / (1.0 + np.exp(-a)))


Tensor.__module__ = "torch"  # torch's class, for annotations such as `x: torch.Tensor`
torch.Tensor = Tensor
