"""Frontend: what the tables of another library's functions share (torch's,
:mod:`s2s_ad.frontend.torch_table`; TensorFlow's,
:mod:`s2s_ad.frontend.tf_table`): :class:`Spec`, one entry, and the builders
whose NumPy is the same for both.

>>> Spec("input dim keepdim", None).params
('input', 'dim', 'keepdim')
"""

from __future__ import annotations

import ast


class Spec:
    """A library function: its parameters in the library's order (``*name``
    collects the rest of the positional arguments) and a builder of the NumPy
    it is read as, ``build(rewrite, bound arguments)``."""

    def __init__(self, params: str, build):
        self.params = tuple(p for p in params.split() if p)
        self.build = build


def sigmoid(r, a):
    """σ(x): scipy.special.expit where SciPy is installed, else
    ``0.5 + 0.5·tanh(x/2)`` (the same function, never overflowing)."""
    try:
        import scipy.special  # noqa: F401
    except ImportError:
        half = ast.Constant(0.5)
        return ast.BinOp(half, ast.Add(), ast.BinOp(half, ast.Mult(), r.np(
            "tanh", ast.BinOp(a["input"], ast.Mult(), ast.Constant(0.5)))))
    return r.scipy("expit", a["input"])
