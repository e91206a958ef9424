"""A stand-in for the TensorFlow names tests/tf_src.py uses, where TensorFlow
is not installed (no extra of the test dependencies installs it).

It is never put on ``sys.path`` or in ``sys.modules`` as ``tensorflow``:
tests/tf_src.py imports the real ``tensorflow`` when it can (and
S2S_TF_STANDIN is not set) and this module's ``tf`` otherwise. Its objects
carry TensorFlow's names, which is how s2s-ad recognises TensorFlow
(docs/numpy.md, "TensorFlow-flavoured code"): ``tf`` is a module named
``tensorflow``, ``tf.math``, ``tf.linalg`` and ``tf.dtypes`` modules of those
names. Running the corpus's functions themselves (the finite-difference
references) needs TensorFlow's meaning, written here in plain NumPy,
independently of s2s-ad's rewrite: :class:`Tensor` is an ndarray with
``get_shape().as_list()``; ``tf.cond`` calls the arm its predicate picks,
``tf.while_loop`` calls ``body`` while ``cond`` holds; ``tf.zeros``/``ones``
make float32 unless given ``dtype``; ``tf.linalg.matvec`` broadcasts its
batch dimensions; the reductions take ``axis`` positionally.
"""

from __future__ import annotations

import types

import numpy as np


def _t(x):
    return np.asarray(x).view(Tensor)


class _Shape(tuple):
    def as_list(self):
        return list(self)


class Tensor(np.ndarray):
    """An ndarray with the tensor methods the corpus calls."""

    def get_shape(self):
        return _Shape(np.shape(self))


tf = types.ModuleType("tensorflow")
math = types.ModuleType("tensorflow.math")
linalg = types.ModuleType("tensorflow.linalg")
dtypes = types.ModuleType("tensorflow.dtypes")
tf.math, tf.linalg, tf.dtypes = math, linalg, dtypes
tf.float64, tf.float32, tf.int32 = np.float64, np.float32, np.int32
dtypes.float64 = np.float64


def _register(*modules):
    def put(f):
        for module in modules:
            f.__module__ = modules[0].__name__
            setattr(module, f.__name__, f)
        return f
    return put


def _elementwise(name, f, *modules):
    def g(x):
        return _t(f(np.asarray(x)))
    g.__name__ = g.__qualname__ = name
    _register(*modules)(g)


for _name, _f in (("exp", np.exp), ("sqrt", np.sqrt), ("sin", np.sin), ("cos", np.cos),
                  ("tanh", np.tanh)):
    _elementwise(_name, _f, tf, math)
_elementwise("log", np.log, math)
_elementwise("sigmoid", lambda a: 1.0 / (1.0 + np.exp(-a)), math)


@_register(tf, math)
def reduce_sum(x, axis=None, keepdims=False):
    return _t(np.sum(np.asarray(x), axis=axis, keepdims=keepdims))


@_register(tf, math)
def reduce_max(x, axis=None, keepdims=False):
    return _t(np.max(np.asarray(x), axis=axis, keepdims=keepdims))


@_register(tf, math)
def reduce_logsumexp(x, axis=None, keepdims=False):
    a = np.asarray(x)
    top = np.max(a, axis=axis, keepdims=True)
    out = np.log(np.sum(np.exp(a - top), axis=axis, keepdims=True)) + top
    return _t(out if keepdims else np.squeeze(out, axis=axis))


@_register(tf)
def transpose(a, perm=None):
    return _t(np.transpose(np.asarray(a), perm))


@_register(tf)
def reshape(x, shape):
    return _t(np.reshape(np.asarray(x), shape))


@_register(tf)
def concat(values, axis):
    return _t(np.concatenate([np.asarray(v) for v in values], axis=axis))


@_register(tf)
def stack(values, axis=0):
    return _t(np.stack([np.asarray(v) for v in values], axis=axis))


@_register(tf)
def zeros(shape, dtype=np.float32):
    return _t(np.zeros(shape, dtype=dtype))


@_register(tf)
def ones(shape, dtype=np.float32):
    return _t(np.ones(shape, dtype=dtype))


@_register(tf)
def eye(num_rows, dtype=np.float32):
    return _t(np.eye(num_rows, dtype=dtype))


@_register(tf)
def constant(value, dtype=None, shape=None):
    a = np.array(value, dtype=dtype)
    if shape is not None:
        a = np.full(shape, a) if a.ndim == 0 else np.reshape(a, shape)
    return _t(a)


@_register(tf)
def convert_to_tensor(value, dtype=None):
    if isinstance(value, (list, tuple)):
        value = [np.asarray(convert_to_tensor(v)) for v in value]
    return _t(np.array(value, dtype=dtype))


@_register(tf, dtypes)
def cast(x, dtype):
    return _t(np.asarray(x).astype(dtype))


@_register(tf)
def gather(params, indices, axis=0):
    return _t(np.take(np.asarray(params), np.asarray(indices), axis=axis))


@_register(tf)
def tensordot(a, b, axes):
    return _t(np.tensordot(np.asarray(a), np.asarray(b), axes))


@_register(tf, math)
def not_equal(x, y):
    return _t(np.not_equal(x, y))


@_register(tf, math)
def less(x, y):
    return _t(np.less(x, y))


@_register(linalg)
def matvec(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return _t(np.einsum("...ij,...j->...i", a, b))


@_register(linalg)
def cross(a, b):
    return _t(np.cross(np.asarray(a), np.asarray(b)))


@_register(tf)
def cond(pred, true_fn, false_fn):
    return true_fn() if bool(pred) else false_fn()


@_register(tf)
def while_loop(cond, body, loop_vars):
    values = list(loop_vars)
    while bool(cond(*values)):
        values = list(body(*values))
    return values


@_register(tf)
def stop_gradient(x):
    return x


Tensor.__module__ = "tensorflow"
tf.Tensor = Tensor
