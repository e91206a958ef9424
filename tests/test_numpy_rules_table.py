"""The NumPy rules added for real objectives (statistics, cumulative
products, shape ops, constructors with dtype=, linear algebra, more
elementwise functions), each against central finite differences in float64
at random shapes, and in float32 against the float64 gradient.

Each case is an expression over the arguments ``x, y, z`` and their shapes,
written with letters: every letter is a length drawn at random (2 to 4) for
each run, shared by the arguments that name it (``"ab,b"`` broadcasts a
vector along a matrix's last axis); a digit is that length, ``""`` a number.
``test_every_rule_has_a_case`` fails for a rule added without a case here or
in test_numpy_rules.py."""

import numpy as np
import pytest

import s2s_ad
from array_oracle import assert_gradients, fd_gradient, make_function
from s2s_ad import SourceError

RNG = np.random.default_rng(18)
NANS = "np.where(np.arange(np.size(x)).reshape(np.shape(x)) % 3 == 1, np.nan, 0.0)"
"""NaN at every third element of x (so every row of two or more keeps a number)."""

CASES = {
    "np.var": [("np.var(x)", "abc"), ("np.var(x, axis=1, ddof=1)", "ab"),
               ("np.var(x, -1, keepdims=True)", "abc"), ("np.var(x, axis=(0, 2))", "abc"),
               ("x.var(axis=0)", "ab")],
    "np.std": [("np.std(x)", "ab"), ("np.std(x, axis=0, ddof=1, keepdims=True)", "ab"),
               ("np.std(x, axis=(0, 1))", "abc"), ("x.std(-1)", "ab")],
    "np.cumprod": [("np.cumprod(x)", "ab"), ("np.cumprod(x, axis=1)", "abc"),
                   ("np.cumprod(x, -1)", "ab"), ("x.cumprod(axis=0)", "ab")],
    "np.logaddexp": [("np.logaddexp(x, y)", "ab,b"), ("np.logaddexp(x, y)", "a1,1b"),
                     ("np.logaddexp(x, y)", ",ab")],
    "np.float_power": [("np.float_power(x, y)", "ab,b")],
    "np.float64": [("np.float64(x) * x", "ab"), ("np.float64(x[0, 0]) * x", "ab")],
    # `%` of arrays: the scalar rule, whose partial -(x // y) is elementwise too
    "mod": [("x % (np.abs(y) + 0.5)", "ab,b"), ("x * 3.0 % 0.7", "ab"),
            ("x % (y * y + 0.5)", "a1,1b")],
    "np.hypot": [("np.hypot(x, y)", "ab,a1")],
    "np.arctan2": [("np.arctan2(x, y)", "ab,b"), ("np.arctan2(x, y)", "ab,")],
    "np.arcsin": [("np.arcsin(x)", "ab")], "np.arccos": [("np.arccos(x)", "ab")],
    "np.arcsinh": [("np.arcsinh(x)", "ab")], "np.arctanh": [("np.arctanh(x)", "ab")],
    "np.log2": [("np.log2(x)", "ab")], "np.log10": [("np.log10(x)", "ab")],
    "np.exp2": [("np.exp2(x)", "ab")], "np.cbrt": [("np.cbrt(x)", "ab")],
    "np.reciprocal": [("np.reciprocal(x)", "ab")],
    "np.swapaxes": [("np.swapaxes(x, 0, 2)", "abc"), ("np.swapaxes(x, axis1=-1, axis2=0)", "ab"),
                    ("x.swapaxes(1, 2)", "abc")],
    "np.moveaxis": [("np.moveaxis(x, 0, -1)", "abc"), ("np.moveaxis(x, (0, 1), (2, 0))", "abc"),
                    ("np.moveaxis(x, source=1, destination=0)", "ab")],
    # axis= an int known only when the code runs: moved to the front and back
    "axis.front": [("np.sum(x, axis=x.ndim - 2)", "abc"), ("np.cumsum(x, len(x.shape) - 1)", "ab"),
                   ("special.logsumexp(x, axis=x.ndim - 1)", "ab"), ("x.var(axis=x.ndim - 1)", "abc")],
    "axis.back": [("np.max(x, axis=x.ndim - 1, keepdims=True) * x", "ab"),
                  ("np.stack([x, x * x], axis=x.ndim)", "ab"),
                  ("np.concatenate([x, np.sin(x)], x.ndim - 1)", "abc"),
                  ("np.roll(x, 1, axis=x.ndim - 2)", "ab")],
    "np.flip": [("np.flip(x)", "ab"), ("np.flip(x, axis=1)", "abc"), ("np.flip(x, (0, -1))", "abc")],
    "np.roll": [("np.roll(x, 2)", "ab"), ("np.roll(x, -1, axis=1)", "ab"),
                ("np.roll(x, (1, 3), axis=(0, -1))", "abc")],
    "np.repeat": [("np.repeat(x, 3)", "ab"), ("np.repeat(x, 2, axis=0)", "ab"),
                  ("np.repeat(x, 2, axis=-1)", "abc"), ("x.repeat(2, 1)", "ab")],
    "np.tile": [("np.tile(x, 2)", "a"), ("np.tile(x, (2, 3))", "ab"),
                ("np.tile(x, (2, 1, 2))", "ab"), ("np.tile(x, 2)", "ab")],
    "np.hstack": [("np.hstack([x, y])", "a,b"), ("np.hstack((x, y, x))", "ab,ac"),
                  ("np.hstack([x, y])", ",a")],
    "np.vstack": [("np.vstack([x, y])", "a,a"), ("np.vstack([x, y])", "ab,b"),
                  ("np.vstack((x, y))", "ab,cb")],
    "np.diag": [("np.diag(x)", "a"), ("np.diag(x, 1)", "a"), ("np.diag(x, k=-2)", "a"),
                ("np.diag(x)", "ab"), ("np.diag(x, 1)", "ab"), ("np.diag(x, k=-1)", "ab")],
    "np.trace": [("np.trace(x)", "ab"), ("np.trace(x, 1)", "ab"), ("np.trace(x, offset=-1)", "abc"),
                 ("x.trace()", "aa")],
    "np.tril": [("np.tril(x)", "ab"), ("np.tril(x, -1)", "abc"), ("np.tril(x, k=1)", "a")],
    "np.triu": [("np.triu(x)", "ab"), ("np.triu(x, 1)", "abc"), ("np.triu(x, k=-1)", "a")],
    "np.cross": [("np.cross(x, y)", "3,3"), ("np.cross(x, y)", "a3,3"), ("np.cross(x, y)", "a3,a3"),
                 ("np.cross(x, y)", "a13,b3")],
    "np.inner": [("np.inner(x, y)", "a,a"), ("np.inner(x, y)", "ab,cb"),
                 ("np.inner(x, y)", "b,cab"), ("np.inner(x, y)", ",ab")],
    "np.einsum": [("np.einsum('ij,jk->ik', x, y)", "ab,bc"), ("np.einsum('ij,j', x, y)", "ab,b"),
                  ("np.einsum('ij->', x)", "ab"), ("np.einsum('ij->j', x)", "ab"),
                  ("np.einsum('i,i->', x, y)", "a,a"), ("np.einsum('i,j->ij', x, y)", "a,b"),
                  ("np.einsum('bij,bj->bi', x, y)", "cab,cb"),
                  ("np.einsum('ijk,ik,j->ij', x, y, z)", "abc,ac,b"),
                  ("np.einsum('ij,kj->ik', x, y)", "ab,cb"), ("np.einsum('ij', x)", "ab"),
                  ("np.einsum('ji', x)", "ab"),
                  # a letter repeated in an operand (a diagonal), `...`, broadcast length-1 axes
                  ("np.einsum('ii->', x)", "aa"), ("np.einsum('ii->i', x)", "aa"),
                  ("np.einsum('bii->b', x)", "caa"), ("np.einsum('ij,jj->i', x, y)", "ab,bb"),
                  ("np.einsum('ii', x)", "aa"), ("np.einsum('iij,k->jk', x, y)", "aab,c"),
                  ("np.einsum('...i,...i->...', x, y)", "abc,bc"),
                  ("np.einsum('...ij,...jk->...ik', x, y)", "abc,cd"),
                  ("np.einsum('...ii->...i', x)", "baa"), ("np.einsum('i...,i', x, y)", "abc,a"),
                  ("np.einsum('...', x)", "ab"), ("np.einsum('ij,ij->ij', x, y)", "1b,ab"),
                  ("np.einsum('ij->j', x)", "ab"), ("np.einsum('i,i,i->', x, y, z)", "a,a,1")],
    "tuple.concat": [("np.reshape(x, (*x.shape, 1)) * x[..., None]", "ab"),
                     ("np.zeros((2, *x.shape)) + np.reshape(x, (1, *np.shape(x), 1))[..., 0]", "a")],
    "np.linalg.det": [("np.linalg.det(x)", "aa"), ("np.linalg.det(x)", "baa")],
    "np.linalg.inv": [("np.linalg.inv(x)", "aa"), ("np.linalg.inv(x)", "baa")],
    "np.linalg.solve": [("np.linalg.solve(x, y)", "aa,a"), ("np.linalg.solve(x, y)", "aa,ab"),
                        ("np.linalg.solve(x, y)", "caa,cab")],
    "np.eye": [("x * np.eye(x.shape[0])", "aa"), ("x @ np.eye(x.shape[1], 3, 1)", "ab"),
               ("x * np.eye(x.shape[0], M=x.shape[1], k=-1, dtype=np.float32)", "ab")],
    "np.identity": [("x @ np.identity(x.shape[1], dtype=float)", "ab")],
    "np.sort": [("np.sort(x)", "ab"), ("np.sort(x, axis=0)", "abc"), ("np.sort(x, -2)", "abc"),
                ("np.sort(np.ravel(x))", "ab")],
    "array.astype_int": [("x[np.floor(np.abs(x[:, 0])).astype(int) % x.shape[0]]", "ab"),
                         ("x * np.floor(x * 3.0).astype(np.int64)", "ab")],
    "np.argsort": [("x[np.argsort(x[:, 0])]", "ab"),
                   ("np.take_along_axis(x, np.argsort(x, axis=1), axis=1)", "ab"),
                   ("x[np.argsort(-x)]", "a"), ("np.take(x, x.argsort(axis=0), axis=0)", "a")],
    "np.take": [("np.take(x, np.array([0, 1, 1]), axis=1)", "ab"),
                ("np.take(x, np.array([0, 3, 3]))", "ab"),
                ("np.take(x, np.array([[1, 0], [1, 1]]), axis=-1)", "cab"),
                ("x.take(np.array([1, 0]), axis=0)", "ab"), ("np.take(x, 1, axis=1)", "abc"),
                ("np.take(x, [0, 2, 2])", "ab"), ("np.take(x, [[1, 0], [0, 0]], axis=-1)", "ab"),
                ("x.take([1, -1], axis=0)", "ab"), ("x[[1, 0, 1]]", "ab")],
    "np.take_along_axis": [("np.take_along_axis(x, np.array([[0], [1]]), 1)", "2b"),
                           ("np.take_along_axis(x, np.array([[0, 0, 1]]), axis=0)", "a3"),
                           ("np.take_along_axis(np.ravel(x), np.array([1, 1, 0]), axis=0)",
                            "ab")],
    "np.diagonal": [("np.diagonal(x)", "ab"), ("np.diagonal(x, 1)", "ab"),
                    ("np.diagonal(x, -1, 0, 2)", "abc"), ("x.diagonal(offset=-1)", "aa"),
                    ("np.diagonal(x, axis1=2, axis2=1)", "abc")],
    "np.pad": [("np.pad(x, 1)", "ab"), ("np.pad(x, ((1, 0), (2, 3)))", "ab"),
               ("np.pad(x, (1, 2))", "a"), ("np.pad(x, pad_width=((0, 0), (1, 1), (2, 0)))", "abc")],
    "np.tensordot": [("np.tensordot(x, y)", "ab,ab"), ("np.tensordot(x, y, 1)", "ab,bc"),
                     ("np.tensordot(x, y, axes=([0, 2], [2, 0]))", "abc,cda"),
                     ("np.tensordot(x, y, axes=(1, 0))", "ab,bc"), ("np.tensordot(x, y, 0)", "a,b")],
    "np.linalg.cholesky": [("np.linalg.cholesky(x)", "aa"), ("np.linalg.cholesky(x)", "baa"),
                           ("np.linalg.cholesky(x @ np.swapaxes(x, -1, -2))", "aa")],
    "np.linalg.slogdet_log": [("np.linalg.slogdet(x)[1]", "aa")],
    "np.linalg.slogdet_sign": [("np.linalg.slogdet(x)[0] * np.sum(x)", "aa")],
    "scipy.special.gammaln": [("special.gammaln(x)", "ab")],
    "scipy.special.expit": [("special.expit(x)", "ab"), ("expit(x * 8.0)", "a")],
    "scipy.special.erf": [("special.erf(x)", "ab"), ("erf(x)", "")],
    "np.floor": [("np.floor(x * 3.0) + x", "ab")], "np.ceil": [("np.ceil(x * 3.0) * x", "ab")],
    "np.trunc": [("np.trunc(x * 3.0) * x", "ab")], "np.rint": [("np.rint(x * 3.0) * x", "ab")],
    "np.round": [("np.round(x * 3.0) * x", "ab"), ("np.round(x, 1) * x", "ab"),
                 ("np.round(x, decimals=2) + x", "ab")],
    "np.isnan": [("np.where(np.isnan(np.where(x > 0.5, np.nan, x)), 2.0, x)", "ab")],
    "np.logical_and": [("np.where(np.logical_and(x > 0.5, y < 0.5), x * y, x)", "ab,ab"),
                       ("x * ((x > 0.3) & (y < 0.7))", "ab,b")],
    "np.logical_or": [("np.where((x > 0.5) | (y < 0.5), x * y, x)", "ab,ab"),
                      ("np.logical_or(x > 0.5, y < 0.2) * x", "ab,b")],
    "np.logical_xor": [("x * ((x > 0.5) ^ (y < 0.5))", "ab,ab"),
                       ("np.where(np.logical_xor(x > 0.3, y > 0.3), y, x)", "ab,ab")],
    "np.logical_not": [("np.where(~(x > 0.5), x * x, y)", "ab,ab"),
                       ("np.logical_not(x < y) * x", "ab,ab")],
    "np.isfinite": [("np.where(np.isfinite(x / np.where(x > 0.5, 0.0, 1.0)), x, 2.0 * x)", "ab")],
    "np.isinf": [("x * np.isinf(np.where(x > 0.5, np.inf, x))", "ab")],
    "np.fmax": [("np.fmax(x, y)", "ab,b"), ("np.fmax(x, np.where(y > 0.5, np.nan, y))", "ab,ab")],
    "np.fmin": [("np.fmin(x, y)", "ab,b"), ("np.fmin(np.where(x > 0.5, np.nan, x), y)", "ab,ab")],
    "np.heaviside": [("np.heaviside(x, y) * x", "ab,b"),
                     ("np.heaviside(np.floor(x), y) * x", "ab,ab")],
    "np.nan_to_num": [("np.nan_to_num(x) * x", "ab"),
                      ("np.nan_to_num(np.where(x > 0.5, np.nan, x)) * x", "ab")],
    "scipy.special.erfc": [("special.erfc(x)", "ab")],
    "scipy.special.digamma": [("special.digamma(x)", "ab"), ("special.psi(x)", "a")],
    "scipy.special.polygamma": [("special.polygamma(1, x)", "ab"),
                                ("special.polygamma(2, x)", "a")],
    "scipy.special.ndtr": [("special.ndtr(x)", "ab")],
    "scipy.special.log_ndtr": [("special.log_ndtr(x)", "ab"), ("special.log_ndtr(x - 9.0)", "a")],
    "scipy.special.logit": [("special.logit(x)", "ab")],
    "scipy.special.log_expit": [("special.log_expit(x)", "ab")],
    "scipy.special.xlogy": [("special.xlogy(x, y)", "ab,b"), ("special.xlogy(x, y)", "a,")],
    "scipy.special.multigammaln": [("multigammaln(x + 1.0, x.shape[0])", "a"),
                                   ("special.multigammaln(x, 3)", "")],
    # (last: cases added here keep the random sizes the cases above draw)
    "np.any": [("np.where(np.any(x > 0.0, axis=1, keepdims=True), x * x, x)", "ab"),
               ("x * np.any(x > 10.0) + x", "ab")],
    "np.all": [("np.where(np.all(x > -1.0, axis=-1, keepdims=True), np.sin(x), x)", "ab")],
    "np.argmax": [("np.take_along_axis(x, np.argmax(x, axis=1, keepdims=True), 1)", "ab"),
                  ("x[np.argmax(x[:, 0])] * np.sum(x)", "ab")],
    "np.argmin": [("np.take_along_axis(x, np.expand_dims(np.argmin(x, axis=-1), -1), -1)", "abc"),
                  ("x[np.argmin(x)]", "a")],
    # s2s_ad/rules/numpy_more.py (np.meshgrid is lowered to broadcasts and copies)
    "np.broadcast_to": [("np.broadcast_to(x, (3, *x.shape))", "ab"),
                        ("np.broadcast_to(x, (x.shape[0], 4))", "a1"),
                        ("np.broadcast_to(x, shape=(2, 3, 4))", "14"),
                        ("np.broadcast_to(x, (2, 3))", ""),
                        ("np.meshgrid(x, y)[0] * np.meshgrid(x, y)[1] ** 2", "a,b"),
                        ("np.stack(np.meshgrid(x, y, indexing='ij'))", "a,b"),
                        ("np.meshgrid(x, y, z)[2] * np.meshgrid(x, y, z)[0]", "a,b,c"),
                        ("np.meshgrid(x, y, indexing='ij')[0] * np.meshgrid(x, y, indexing='ij')[1]",
                         "ab,c")],
    "np.atleast_1d": [("np.atleast_1d(x)", "ab"), ("np.atleast_1d(x)", "")],
    "np.atleast_2d": [("np.atleast_2d(x)", "a"), ("np.atleast_2d(x).T", "ab")],
    "np.atleast_3d": [("np.atleast_3d(x)", "a"), ("np.atleast_3d(x)", "ab")],
    "np.kron": [("np.kron(x, y)", "ab,cd"), ("np.kron(x, y)", "a,b"), ("np.kron(x, y)", "ab,c"),
                ("np.kron(x, y)", "abc,bc")],
    "np.sinc": [("np.sinc(x)", "ab"), ("np.sinc(x * y)", "ab,b")],
    "np.nansum": [("np.nansum(x)", "ab"), ("np.nansum(x, axis=1)", "abc"),
                  ("np.nansum(x, -1, keepdims=True)", "ab"), ("np.nansum(x, axis=(0, 2))", "abc"),
                  (f"np.nansum(x + {NANS}, axis=0)", "ab")],
    "np.nanmean": [("np.nanmean(x)", "ab"), ("np.nanmean(x, axis=1, keepdims=True)", "abc"),
                   (f"np.nanmean(x + {NANS}, axis=-1)", "ab"), (f"np.nanmean(x + {NANS})", "abc")],
    "np.linalg.eigh_values": [("np.linalg.eigh(x)[0]", "aa"), ("np.linalg.eigh(x)[0]", "baa")],
    "np.linalg.eigh_vectors": [("np.linalg.eigh(x)[1] ** 2", "aa"),
                               ("np.linalg.eigh(x)[1] ** 2 * np.linalg.eigh(x)[0][..., None, :]",
                                "baa")],
    "np.linalg.eigvalsh": [("np.linalg.eigvalsh(x)", "aa"), ("np.linalg.eigvalsh(x)", "baa")],
    "np.linalg.pinv": [("np.linalg.pinv(x)", "aa"), ("np.linalg.pinv(x)", "ab"),
                       ("np.linalg.pinv(x)", "cab")],
    "scipy.linalg.solve_triangular": [("solve_triangular(x, y, lower=True)", "aa,a"),
                                      ("solve_triangular(x, y)", "aa,ab"),
                                      ("linalg.solve_triangular(x, y, lower=False)", "aa,a")],
    "scipy.linalg.cho_factor": [("cho_factor(x)[0]", "aa"), ("cho_factor(x, lower=True)[0]", "aa"),
                                ("linalg.cho_factor(x, True)[0]", "aa")],
    "scipy.linalg.cho_solve": [("cho_solve(cho_factor(x), y)", "aa,a"),
                               ("cho_solve(cho_factor(x, lower=True), y)", "aa,ab"),
                               ("linalg.cho_solve((cho_factor(x)[0], False), y)", "aa,a")],
    "array.item": [("x.item() * x", "1"), ("np.sin(x * 2.0).item() + np.sum(x)", "11"),
                   ("np.sum(x).item() * x", "ab")],
    "np.convolve": [("np.convolve(x, y)", "a,b"), ("np.convolve(x, y, mode='same')", "a,b"),
                    ("np.convolve(x, y, 'valid')", "a,b")],
    "np.quantile": [("np.quantile(x, 0.3, axis=0)", "ab"),
                    ("np.quantile(x, [0.2, 0.9], axis=-1, keepdims=True)", "ab"),
                    ("np.quantile(x, 0.6)", "ab")],
    "np.percentile": [("np.percentile(x, 40.0, axis=1)", "ab"),
                      ("np.percentile(x, [10, 50], axis=0, method='lower')", "ab")],
    "np.median": [("np.median(x, axis=0)", "ab"), ("np.median(x, axis=1, keepdims=True)", "abc"),
                  ("np.median(x)", "ab")],
    "np.delete": [("np.delete(x, 1, axis=0)", "ab"), ("np.delete(x, [0, 2], axis=1)", "a3"),
                  ("np.delete(x, -1)", "ab"), ("np.delete(x, [1, 1, 0], axis=-1)", "abc"),
                  ("np.delete(np.delete(x, 0, axis=0), 1, axis=1)", "ab"),
                  ("np.delete(x, np.array([0, 1]), axis=0)", "ab"),
                  ("np.delete(x, x[0] > 0.0, axis=1)", "ab"), ("np.delete(x, [0, 1])", "ab")],
    "np.delete.slice": [("np.delete(x, slice(0, 2), axis=1)", "ab"),
                        ("np.delete(x, np.s_[::2], 0)", "ab"), ("np.delete(x, slice(1, None))", "ab"),
                        ("np.delete(x, np.s_[-1:], axis=-1)", "abc"), ("np.delete(x, slice(2))", "a")],
    "np.maximum.accumulate": [("np.maximum.accumulate(x)", "a"),
                              ("np.maximum.accumulate(x, axis=1)", "ab"),
                              ("np.maximum.accumulate(x, -1)", "abc")],
    "np.minimum.accumulate": [("np.minimum.accumulate(x, axis=0)", "ab"),
                              ("np.minimum.accumulate(x, axis=-2)", "abc")],
    # a shape: s2s-ad's own adjoint of `unbroadcast` read back (third derivatives)
    "np.broadcast_shapes": [
        ("np.broadcast_to(x, np.broadcast_shapes(np.shape(x), np.shape(y))) * y", "a1,b"),
        ("np.sin(np.broadcast_to(x, np.broadcast_shapes(np.shape(y), x.shape, z.shape)))",
         "a1,b,1"),
    ],
}
# Rules whose operand shapes are not any: matrices to invert, the domain of arcsin.
INVERTIBLE = ("np.linalg.det", "np.linalg.inv", "np.linalg.solve", "np.linalg.cholesky",
              "np.linalg.slogdet_log", "np.linalg.slogdet_sign", "np.linalg.pinv",
              "scipy.linalg.solve_triangular")
POSITIVE_DEFINITE = ("scipy.linalg.cho_factor", "scipy.linalg.cho_solve")
EIGEN = ("np.linalg.eigh_values", "np.linalg.eigh_vectors", "np.linalg.eigvalsh")
SCIPY = ("scipy.special.gammaln", "scipy.special.expit", "scipy.special.erf",
         "scipy.special.erfc", "scipy.special.digamma", "scipy.special.polygamma",
         "scipy.special.ndtr",
         "scipy.special.log_ndtr", "scipy.special.logit", "scipy.special.log_expit",
         "scipy.special.xlogy",
         "scipy.special.multigammaln", "scipy.linalg.solve_triangular",
         "scipy.linalg.cho_factor", "scipy.linalg.cho_solve")
DOMAIN = {"np.arcsin": (-0.8, 0.8), "np.arccos": (-0.8, 0.8), "np.arctanh": (-0.8, 0.8),
          "np.log2": (0.3, 2.0), "np.log10": (0.3, 2.0), "np.cbrt": (0.3, 2.0),
          "np.reciprocal": (0.3, 2.0), "np.float_power": (0.3, 2.0), "np.hypot": (0.3, 2.0),
          "scipy.special.gammaln": (0.3, 3.0), "scipy.special.multigammaln": (2.0, 3.0),
          "scipy.special.digamma": (0.3, 3.0), "scipy.special.polygamma": (0.3, 3.0),
          "scipy.special.logit": (0.1, 0.9),
          "scipy.special.xlogy": (0.3, 2.0)}


def _shapes(spec: str) -> list[tuple]:
    sizes = {}
    shapes = []
    for part in spec.split(","):
        shapes.append(tuple(int(c) if c.isdigit() else
                            sizes.setdefault(c, int(RNG.integers(2, 5))) for c in part))
    return shapes


def _args(prim: str, shapes: list[tuple], dtype=np.float64) -> list:
    lo, hi = DOMAIN.get(prim, (-1.5, 1.5))
    args = []
    for s in shapes:
        a = RNG.uniform(lo, hi, s)
        if prim in INVERTIBLE and not args:
            a = a + 3.0 * np.eye(s[-2], s[-1])  # well away from singular (full rank)
        if prim in POSITIVE_DEFINITE and not args:
            a = a @ np.swapaxes(a, -1, -2) + 3.0 * np.eye(s[-1])
        if prim in EIGEN:  # eigenvalues well apart: 0, 2, 4, ... plus at most about ±1.5·n
            a = a + np.diag(4.0 * np.arange(s[-1]))
        if prim == "np.linalg.cholesky" and not args:
            # symmetric positive definite below the diagonal (its smallest eigenvalue at
            # least 1: the product alone may be near singular, where the rule is right and
            # the differences are not); NumPy reads the lower triangle only
            a = a @ np.swapaxes(a, -1, -2) + np.eye(s[-1]) + np.triu(RNG.uniform(-1, 1, s), 1)
        args.append(a.astype(dtype) if s else float(a))
    return args


def _function(expr: str, n: int):
    """sum(sin(r) * weights): every element of the result counts differently,
    so a permuted or misplaced adjoint shows."""
    params = ", ".join("xyz"[:n])
    env = {}
    if "special" in expr or "erf(" in expr or "expit(" in expr or "multigammaln(" in expr:
        special = pytest.importorskip("scipy.special")
        env = {"special": special, "erf": special.erf, "expit": special.expit,
               "multigammaln": special.multigammaln}
    if "linalg." in expr.replace("np.linalg.", "") or "triangular(" in expr or "cho_" in expr:
        linalg = pytest.importorskip("scipy.linalg")
        env = {"linalg": linalg, "solve_triangular": linalg.solve_triangular,
               "cho_factor": linalg.cho_factor, "cho_solve": linalg.cho_solve}
    return make_function(f"def f({params}):\n    r = {expr}\n"
                         "    w = 1.0 + np.arange(np.size(r)).reshape(np.shape(r)) / 7.0\n"
                         "    return np.sum(np.sin(r) * w)\n", env=env)


ALL = [(prim, expr, spec) for prim, cases in CASES.items() for expr, spec in cases]


@pytest.mark.parametrize("prim, expr, spec", ALL, ids=[f"{e}:{s}" for _, e, s in ALL])
def test_rule_against_finite_differences(prim, expr, spec):
    shapes = _shapes(spec)
    args = _args(prim, shapes)
    assert_gradients(_function(expr, len(shapes)), args, list(range(len(shapes))))


@pytest.mark.parametrize("prim", sorted(CASES))
def test_rule_in_float32(prim):
    """float32 arguments give float32 gradients, equal to the float64 ones to
    float32 precision."""
    expr, spec = CASES[prim][0]
    shapes = _shapes(spec)
    args = _args(prim, shapes)
    f = _function(expr, len(shapes))
    wrt = [i for i, s in enumerate(shapes) if s]
    single = [np.asarray(a, dtype=np.float32) if np.ndim(a) else a for a in args]
    got = s2s_ad.grad(f, wrt=wrt)(*single)
    for i, g in zip(wrt, got):
        assert g.dtype == np.float32, (prim, g.dtype)
        np.testing.assert_allclose(g, fd_gradient(f, args, i), rtol=2e-3, atol=2e-3)


def test_cumprod_is_exact_at_zeros():
    f = _function("np.cumprod(x, axis=1)", 1)
    x = RNG.uniform(0.3, 1.5, (3, 5))
    x[0, 1] = 0.0
    x[1, 0] = x[1, 3] = 0.0  # two zeros in one slice
    x[2, 4] = 0.0
    assert_gradients(f, [x], [0])
    assert_gradients(_function("np.cumprod(x)", 1), [x], [0])


def test_amax_amin_are_max_min():
    f = make_function("def f(x):\n    return np.sum(np.amax(x, axis=0) * np.amin(x, 1, keepdims=True))\n")
    x = RNG.permutation(np.linspace(0.5, 1.5, 12)).reshape(3, 4)  # no ties
    assert_gradients(f, [x], [0])


@pytest.mark.parametrize("expr", ["logsumexp(x)", "logsumexp(x, axis=1)", "logsumexp(x, -1, keepdims=True)",
                                  "logsumexp(x, axis=(0, 1))", "special.logsumexp(x, axis=0)"])
def test_scipy_logsumexp(expr):
    special = pytest.importorskip("scipy.special")
    f = make_function(f"def f(x):\n    r = {expr}\n    return np.sum(np.sin(r) + r * r)\n",
                      env={"logsumexp": special.logsumexp, "special": special})
    x = RNG.normal(size=(3, 4)) * 3.0
    assert_gradients(f, [x], [0])
    from s2s_ad.api import gradient_source
    assert "scipy" not in gradient_source(f)  # the generated module needs no scipy


def test_log_sum_exp_written_out_still_works():
    f = make_function("def f(x):\n    return np.sum(np.log(np.sum(np.exp(x), axis=1)))\n")
    assert_gradients(f, [RNG.normal(size=(3, 4))], [0])


def test_dtype_keyword_on_constructors():
    f = make_function("def f(x):\n    n = x.shape[0]\n"
                      "    z = np.zeros((n, 3), dtype=np.float32) + np.ones(3, dtype='float64')\n"
                      "    w = np.full(3, 2.0, dtype=float) + np.arange(3, dtype=np.float64)\n"
                      "    e = np.zeros_like(x, dtype=float) + np.ones_like(x, np.float32)\n"
                      "    return np.sum(x * z * w + x * e) + np.sum(x[:, 0] * np.arange(n, dtype=int))\n")
    assert_gradients(f, [RNG.normal(size=(4, 3))], [0])


def test_rules_in_a_loop():
    """The reverse loop reads each iteration's values from the tape."""
    f = make_function("def f(x, y):\n    s = 0.0\n    for k in range(3):\n"
                      "        r = np.roll(x, 1, axis=1) * y + k\n"
                      "        s = s + np.std(r, axis=1).sum() + np.sum(np.cumprod(r, axis=0))\n"
                      "        s = s + np.einsum('ij,ij->', r, np.flip(x, 0))\n"
                      "    return s\n")
    assert_gradients(f, [RNG.uniform(0.5, 1.5, (3, 4)), RNG.uniform(0.5, 1.5, (4,))], [0, 1])


@pytest.mark.parametrize("body, message", [
    ("np.zeros(3, dtype=int)", r"`dtype=int` is not supported here: an array of int64"),
    ("np.ones(3, dtype=np.complex128)", "cannot carry a gradient"),
    ("np.zeros(3, dtype=n)", "must name a NumPy dtype"),
    ("np.zeros(3, dtype=np.sum)", "must name a NumPy dtype"),
    ("np.roll(x, n)", "must be a constant"),
    ("np.repeat(x, (1, 2))", "constant number of repeats"),
    ("np.var(x, axis=n * 0.5)", "must be one integer"),
    ("np.take(x, 1, axis=n)", "must be a constant"),
    ("np.einsum('i.j', x)", "at most one `...`"),
    ("np.einsum('i->ii', x)", "the output repeats a subscript"),
    ("np.einsum('i->j', x)", "names a letter no operand has"),
    ("np.einsum('ij,j', x)", "the call passes 1"),
    ("np.einsum(s, x)", "string literal"),
    ("np.cumprod(x, axis=1, dtype=float)", "keyword argument 'dtype' is not supported"),
    ("np.partition(x, 1)", r"`np.partition` has no derivative rule.*docs/custom_rules.md"),
    ("np.linalg.eig(x)", "`np.linalg.eig` has no derivative rule"),
    ("np.linalg.eigh(x, UPLO='U')[0]", "`UPLO=\"U\"` is not supported"),
    ("np.meshgrid(x, x, sparse=True)[0]", "'sparse' is not supported"),
    ("np.meshgrid(x, x, indexing='yx')[0]", "`indexing` must be"),
    ("np.sort(x, axis=None)", "sort the flattened array"),
    ("np.take_along_axis(x, np.array([0]), axis=None)", "needs an int axis"),
    ("np.take_along_axis(x, np.array([0]))", "needs an int axis"),
    ("np.pad(x, 1, mode='edge')", "keyword argument 'mode' is not supported"),
    ("np.take(x, 1, mode='wrap')", "keyword argument 'mode' is not supported"),
    ("np.sum(x, axis=(0, s))", "a name bound to one"),
])
def test_refusals(body, message):
    f = make_function(f"def f(x, n: int, s: int):\n    return np.sum({body} * x)\n")
    with pytest.raises(SourceError, match=message) as info:
        s2s_ad.grad(f)
    assert ":2:" in str(info.value) and "^" in str(info.value)  # located, with a caret


def test_every_rule_has_a_case():
    """A NumPy rule with no case here, in test_numpy_rules.py or in
    test_index_arrays.py (or test_torch_numpy.py, test_int_lists47.py,
    test_everyday_gaps48.py) fails this."""
    import test_everyday_gaps48
    import test_index_arrays
    import test_int_lists47
    import test_integer_arrays
    import test_numpy_rules
    import test_torch_numpy
    from s2s_ad.rules.numpy import NUMPY_RULES
    from s2s_ad.rules.numpy_more import NUMPY_MORE_RULES
    untested = ({r.prim for r in NUMPY_RULES + NUMPY_MORE_RULES} - set(CASES)
                - test_numpy_rules.TESTED
                - test_index_arrays.TESTED - test_integer_arrays.TESTED - test_torch_numpy.TESTED
                - test_int_lists47.TESTED - test_everyday_gaps48.TESTED)
    assert not untested


@pytest.mark.parametrize("expr, shape", [
    ("np.linalg.norm(x, 1, axis=-1)", (3, 4)), ("np.linalg.norm(x, np.inf, axis=0)", (3, 4)),
    ("np.linalg.norm(x, -np.inf, axis=1, keepdims=True)", (3, 4)),
    ("np.linalg.norm(x, 3, axis=1)", (3, 4)), ("np.linalg.norm(x, 'fro')", (3, 4)),
    ("np.linalg.norm(x, ord=0.5, axis=-1)", (4,)), ("np.linalg.norm(x, 2, axis=0)", (3, 4))])
def test_norm_orders(expr, shape):
    f = make_function(f"def f(x):\n    r = {expr}\n    return np.sum(np.sin(r) + r * r)\n")
    x = RNG.uniform(0.2, 1.5, shape) * np.where(RNG.uniform(size=shape) > 0.5, 1.0, -1.0)
    assert_gradients(f, [x], [0])


@pytest.mark.parametrize("expr, message", [
    ("[np.linalg.norm(r, 1) for r in x]", "give `axis`"),
    ("np.linalg.norm(x, 0, axis=0)", "non-zero"),
    ("np.linalg.norm(x, 'nuc')", "`ord` must be")])
def test_norm_refusals(expr, message):
    f = make_function(f"def f(x):\n    return np.sum({expr})\n")
    with pytest.raises(SourceError, match=message):
        s2s_ad.grad(f)


def test_attributes_from_names_and_integer_arithmetic():
    """An axis or shift bound to a name, or computed from constants, is known
    when the gradient is generated; in a helper and in a loop too."""
    f = make_function("def g(x):\n    ax = 1\n    last = ax - 2\n    k = 2 * ax\n"
                      "    return np.cumsum(x, axis=ax) * np.roll(x, k, axis=last)\n"
                      "def f(x):\n    s = 0.0\n    for i in range(2):\n"
                      "        s = s + np.sum(g(x) * (i + 1.0))\n    return s\n")
    assert_gradients(f, [RNG.normal(size=(3, 4))], [0])


@pytest.mark.parametrize("expr", ["np.sum(x, 1, None, None, True)", "np.mean(x, 0, None, None, True)",
                                  "np.max(x, 1, None, True)", "x.sum(0, None, None, True)",
                                  "np.prod(x, -1, None, None, True)"])
def test_reductions_positional_dtype_and_out(expr):
    """NumPy's third positional parameter of sum/mean/prod is dtype (of
    max/min, out), not keepdims: None there is the default; keepdims comes
    fifth (fourth)."""
    f = make_function(f"def f(x):\n    return np.sum(np.sin({expr}) * x)\n")
    assert_gradients(f, [RNG.normal(size=(3, 3))], [0])


def test_reduction_dtype_given_positionally_is_refused_by_name():
    f = make_function("def f(x):\n    return np.sum(np.sum(x, 0, np.float32))\n")
    with pytest.raises(SourceError, match="'dtype' is not supported"):
        s2s_ad.grad(f)


@pytest.mark.parametrize("body, shape", [
    ("a, b = np.split(x, 2)\n    return np.sum(a * np.sin(b))", (4, 3)),
    ("a, b, c = np.split(x, 3, axis=1)\n    return np.sum(a * b + np.cos(c))", (2, 6)),
    ("a, b, c = np.split(x, [1, 3], axis=-1)\n    return np.sum(a * np.sum(b) + c * c)", (3, 5)),
    ("parts = np.split(x, 2, 0)\n    return np.sum(parts[0] * parts[1] ** 2)", (6,)),
    ("return np.sum(x[np.ix_(np.array([0, 2, 2]), np.array([1, 0]))] ** 2)", (3, 4)),
    ("return np.sum(np.sin(x[np.ix_([1, 0], [0], [2, 2, 1])]))", (2, 3, 4)),
])
def test_split_and_ix(body, shape):
    """np.split lowered to slices of x (unpacked or indexed); np.ix_ as
    integer index arrays along their own axes (repeats add up)."""
    f = make_function(f"def f(x):\n    {body}\n")
    assert_gradients(f, [RNG.normal(size=shape)], [0])


@pytest.mark.parametrize("expr", ["np.take(x, np.array([0, 2, 2]), axis=1)", "np.diagonal(x, 1)",
                                  "np.pad(x, ((1, 0), (0, 2)))", "np.tensordot(x, x, 1)",
                                  "np.take_along_axis(x, np.argsort(x, axis=1), axis=1)",
                                  "special.expit(x) * special.erf(x)",
                                  "np.delete(x, [0, 0], axis=1)", "np.delete(x, 1) * 2.0",
                                  "np.delete(x, np.s_[1:], axis=0)"])
def test_forward_mode_of_linear_and_elementwise_rules(expr):
    """jvp against a central difference along a random direction."""
    special = pytest.importorskip("scipy.special")
    f = make_function(f"def f(x):\n    return np.sum(np.sin({expr}))\n", env={"special": special})
    x, v = RNG.normal(size=(3, 3)), RNG.normal(size=(3, 3))
    value, tangent = s2s_ad.jvp(f)(x, dx=v)
    h = 1e-6
    assert np.isclose(value, f(x))
    assert np.isclose(tangent, (f(x + h * v) - f(x - h * v)) / (2 * h), rtol=1e-6, atol=1e-8)


def test_forward_mode_of_sort():
    """Refused before (no forward rule): the tangent in np.argsort's order."""
    f = make_function("def f(x):\n    return np.sum(np.sin(np.sort(x, axis=0)) * np.sort(x))\n")
    x, v = RNG.normal(size=(3, 4)), RNG.normal(size=(3, 4))
    _, tangent = s2s_ad.jvp(f)(x, dx=v)
    h = 1e-6
    assert np.isclose(tangent, (f(x + h * v) - f(x - h * v)) / (2 * h), rtol=1e-6, atol=1e-8)


def test_rolled_is_np_roll():
    """The generated module's roll (two slice copies on an ndarray) equals
    np.roll for every shape, shift and axis, and falls back to np.roll for
    tuples of shifts."""
    from s2s_ad.rules.numpy_helpers import HELPERS
    ns = {"np": np}
    exec(HELPERS["rolled"], ns)
    rolled = ns["rolled"]
    for shape in [(5,), (3, 4), (2, 3, 4), (1,), (0,), (4, 0)]:
        x = RNG.normal(size=shape)
        for shift in (-7, -1, 0, 1, 2, 5):
            for axis in [None, -1] + list(range(len(shape))):
                got = rolled(x, shift, axis)
                assert got is not x and np.array_equal(got, np.roll(x, shift, axis=axis))
    x = RNG.normal(size=(3, 4))
    assert np.array_equal(rolled(x, (1, -2), (0, 1)), np.roll(x, (1, -2), axis=(0, 1)))


FILLS = """
import numpy as np


def f(x):
    a = np.full(3, x[0]) * x[:3]
    b = np.full((2, 3), x[1:4]) ** 2
    c = np.full_like(x, x[2] * x[3]) * np.sin(x)
    return np.sum(a) + np.sum(b * x[:3]) + np.sum(c)
"""


def test_full_fill_value_gets_its_adjoint(tmp_path):
    """``np.full(shape, v)`` and ``np.full_like(x, v)`` with a ``v`` that
    depends on the argument: the adjoint of ``v`` is the sum of the result's
    over the elements it fills (it was taken for a constant)."""
    f = make_function(FILLS)
    x = RNG.normal(size=5)
    want = fd_gradient(f, [x], 0)
    np.testing.assert_allclose(s2s_ad.grad(f)(x), want, rtol=1e-6, atol=1e-8)
    d = RNG.normal(size=5)
    _, tangent = s2s_ad.jvp(f)(x, dx=d)
    np.testing.assert_allclose(tangent, want @ d, rtol=1e-6, atol=1e-8)


def test_moved_is_np_moveaxis():
    """The generated module's moveaxis (a vector itself, a matrix's transpose)
    equals np.moveaxis for every shape and pair of axes, and falls back to it
    for tuples of axes."""
    from s2s_ad.rules.numpy_helpers import HELPERS
    ns = {"np": np}
    exec(HELPERS["moved"], ns)
    moved = ns["moved"]
    for shape in [(5,), (3, 4), (2, 3, 4), (1,), (0,), (4, 0)]:
        x = RNG.normal(size=shape)
        axes = list(range(-len(shape), len(shape)))
        for source in axes:
            for destination in axes:
                got = moved(x, source, destination)
                want = np.moveaxis(x, source, destination)
                assert got.shape == want.shape and np.array_equal(got, want)
    x = RNG.normal(size=(2, 3, 4))
    assert np.array_equal(moved(x, (0, 1), (-1, -2)), np.moveaxis(x, (0, 1), (-1, -2)))
    with pytest.raises(np.exceptions.AxisError):
        moved(np.float64(1.0), 0, -1)


def test_eye_matrix_is_np_eye():
    """The gradient's forward pass makes np.eye(n) as a copy of a kept identity:
    equal to np.eye, writable, and never the kept matrix itself."""
    from s2s_ad.rules.numpy_helpers import HELPERS
    ns = {"np": np}
    exec(HELPERS["eye_matrix"], ns)
    eye_matrix = ns["eye_matrix"]
    for args, kw in [((3,), {}), ((4,), {}), ((3, 4), {}), ((3,), {"k": 1}),
                     ((3,), {"dtype": "float32"}), ((20,), {}), ((np.int64(3),), {}), ((0,), {})]:
        got, want = eye_matrix(*args, **kw), np.eye(*args, **kw)
        assert np.array_equal(got, want) and got.dtype == want.dtype and got.flags.writeable
    a = eye_matrix(3)
    a[0, 0] = 5.0
    assert eye_matrix(3)[0, 0] == 1.0


def test_cross_product_is_np_cross():
    from s2s_ad.rules.numpy_helpers import HELPERS
    ns = {"np": np}
    exec(HELPERS["cross_product"], ns)
    for _ in range(2000):
        a, b = RNG.normal(size=3) * 10.0 ** RNG.uniform(-5, 5), RNG.normal(size=3)
        assert np.array_equal(ns["cross_product"](a, b), np.cross(a, b))
    a32, b32 = a.astype(np.float32), b.astype(np.float32)
    got = ns["cross_product"](a32, b32)
    assert got.dtype == np.float32 and np.array_equal(got, np.cross(a32, b32))


def test_contract_is_np_einsum_below_and_above_its_threshold():
    """contract hands contractions of more than 20,000 index combinations to
    BLAS (optimize=True): the same values to rounding, and the gradient of a
    large einsum still matches finite differences."""
    from s2s_ad.rules.numpy_helpers import HELPERS
    ns = {"np": np}
    exec(HELPERS["contract"], ns)
    for subscripts, shapes in [("bij,vj->vbi", [(22, 4, 4), (500, 4)]),
                               ("kij,nkj->nki", [(3, 2, 2), (4, 3, 2)]),
                               ("ij,jk->ik", [(40, 30), (30, 20)]), ("ij->", [(3, 4)]),
                               ("...ij,...jk->...ik", [(30, 40, 20), (20, 30)]),
                               ("i...j,j->...", [(3, 2, 5, 4), (4,)]), ("ii->", [(3, 3)])]:
        ops = [RNG.normal(size=s) for s in shapes]
        np.testing.assert_allclose(ns["contract"](subscripts, *ops), np.einsum(subscripts, *ops),
                                   rtol=1e-12, atol=1e-12)
    f = make_function("def f(a, b):\n    return np.sum(np.sin(np.einsum('bij,vj->vbi', a, b)))\n")
    assert_gradients(f, [RNG.normal(size=(6, 4, 4)), RNG.normal(size=(300, 4))], [0, 1])
