"""A stand-in for the few JAX names tests/jax_src.py uses, where JAX is not
installed (the test extra does not install it).

It is never put on ``sys.path`` or in ``sys.modules`` as ``jax`` (other tests
ask whether JAX is installed): tests/jax_src.py imports the real ``jax`` when
it can and these objects otherwise. They carry JAX's names, which is how
s2s-ad recognises JAX (docs/numpy.md, "JAX-flavoured code"): ``numpy`` is a
module named ``jax.numpy``, ``scipy.special`` one named ``jax.scipy.special``,
``vmap`` a function whose ``__module__`` is ``jax``. Running the corpus's
functions themselves (the finite-difference references) needs JAX's meaning,
written here in plain NumPy:

* arrays made by ``numpy``'s functions are :class:`Array`, an ndarray with
  ``.at[idx].set(v)`` (``add``, ``subtract``, ``multiply``, ``divide``,
  ``power``, ``get``) returning a new array, and with ``+=`` (every augmented
  operator) making a new array instead of writing into the old one;
* ``jax.nn``'s activations and ``lax.stop_gradient`` compute JAX's values;
* ``vmap`` maps over the leading axis (``in_axes`` 0 or a tuple of 0 and
  None) and stacks the results; ``lax.scan`` and ``lax.fori_loop`` are loops;
  ``jit`` returns an object of a ``jaxlib`` class holding the function as
  ``__wrapped__``, as JAX's does.
"""

from __future__ import annotations

import types

import numpy as np
import scipy.special


class Array(np.ndarray):
    """An ndarray that, like a JAX array, is never changed in place by ``.at``
    or augmented assignment."""

    @property
    def at(self):
        return _At(self)

    def _new(op):
        def method(self, other):
            return op(np.asarray(self), np.asarray(other)).view(Array)
        return method

    __iadd__ = _new(np.add)
    __isub__ = _new(np.subtract)
    __imul__ = _new(np.multiply)
    __itruediv__ = _new(np.true_divide)
    __ipow__ = _new(np.power)


class _At:
    def __init__(self, x):
        self.x = x

    def __getitem__(self, index):
        return _Ref(self.x, index)


class _Ref:
    def __init__(self, x, index):
        self.x, self.index = x, index

    def _update(self, op, v):
        out = np.array(self.x)
        if op is None:
            out[self.index] = v
        else:
            out[self.index] = op(out[self.index], v)
        return out.view(Array)

    def set(self, v):
        return self._update(None, v)

    def add(self, v):
        out = np.array(self.x)
        np.add.at(out, self.index, v)  # JAX adds repeated indices up
        return out.view(Array)

    def subtract(self, v):
        return self.add(np.negative(v))

    def multiply(self, v):
        return self._update(np.multiply, v)

    def divide(self, v):
        return self._update(np.true_divide, v)

    def power(self, v):
        return self._update(np.power, v)

    def get(self):
        return self.x[self.index]


def _wrap(fn, name: str, module: str):
    def wrapped(*args, **kwargs):
        out = fn(*args, **kwargs)
        return out.view(Array) if isinstance(out, np.ndarray) else out
    wrapped.__name__ = wrapped.__qualname__ = name
    wrapped.__module__ = module
    return wrapped


def _module(name: str, source, names) -> types.ModuleType:
    module = types.ModuleType(name)
    for attr in names:
        value = getattr(source, attr)
        setattr(module, attr, _wrap(value, attr, name) if callable(value) else value)
    return module


numpy = _module("jax.numpy", np, [n for n in dir(np) if not n.startswith("_")
                                  and not isinstance(getattr(np, n), (type, types.ModuleType))])
numpy.linalg = _module("jax.numpy.linalg", np.linalg, ["det", "inv", "solve", "norm", "slogdet"])


def _repeat(a, repeats, axis=None, *, total_repeat_length=None):
    """JAX's repeat: with ``total_repeat_length``, the result cut to that
    many items or padded with its last item (axis None)."""
    out = np.repeat(np.asarray(a), repeats, axis=axis)
    total = total_repeat_length
    if total is not None and axis is None:
        out = out[:total] if out.shape[0] >= total else np.concatenate(
            [out, np.repeat(out[-1:], total - out.shape[0])])
    return out.view(Array)


numpy.repeat = _wrap(_repeat, "repeat", "jax.numpy")
scipy_special = _module("jax.scipy.special", scipy.special,
                        ["logsumexp", "gammaln", "multigammaln", "expit", "erf"])
scipy_ = types.ModuleType("jax.scipy")
scipy_.special = scipy_special


def vmap(fn, in_axes=0):
    def mapped(*args):
        axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
        n = next(np.shape(a)[0] for a, ax in zip(args, axes) if ax == 0)
        rows = [fn(*[a[k] if ax == 0 else a for a, ax in zip(args, axes)]) for k in range(n)]
        return _stack(rows)
    return mapped


def _stack(rows):
    """The rows stacked leaf by leaf (a function returning a tuple gives a
    tuple of stacked arrays, as JAX's do)."""
    if isinstance(rows[0], tuple):
        return tuple(_stack([r[i] for r in rows]) for i in range(len(rows[0])))
    return np.stack(rows).view(Array)


def scan(f, init, xs, length=None):
    carry, ys = init, []
    n = length if xs is None else np.shape(xs)[0]
    for k in range(n):
        carry, y = f(carry, None if xs is None else xs[k])
        ys.append(y)
    return carry, (None if ys and ys[0] is None else _stack(ys))


def fori_loop(lower, upper, body, init):
    carry = init
    for i in range(lower, upper):
        carry = body(i, carry)
    return carry


class PjitFunction:
    """What ``jax.jit`` returns: a callable with the Python function as
    ``__wrapped__`` (its class is jaxlib's, as JAX's is)."""

    def __init__(self, fn):
        self.__wrapped__ = fn

    def __call__(self, *args, **kwargs):
        return self.__wrapped__(*args, **kwargs)


PjitFunction.__module__ = "jaxlib._jax"


def jit(fn, static_argnums=None):
    return PjitFunction(fn)


def _random_normal(key, shape=()):
    raise NotImplementedError("the stand-in has no jax.random")


def _sigmoid(x):
    return scipy.special.expit(x)


_NN = {
    "relu": lambda x: np.where(x > 0, x, 0.0),
    "leaky_relu": lambda x, negative_slope=0.01: np.where(x >= 0, x, negative_slope * x),
    "elu": lambda x, alpha=1.0: np.where(x > 0, x, alpha * np.expm1(x)),
    "softplus": lambda x: np.logaddexp(x, 0.0),
    "log_sigmoid": lambda x: -np.logaddexp(-x, 0.0),
    "sigmoid": _sigmoid, "silu": lambda x: x * _sigmoid(x), "swish": lambda x: x * _sigmoid(x),
    "gelu": lambda x, approximate=True: 0.5 * x * (1.0 + (
        np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x ** 3)) if approximate
        else scipy.special.erf(x / np.sqrt(2.0)))),
    "softmax": lambda x, axis=-1: scipy.special.softmax(x, axis=axis),
    "log_softmax": lambda x, axis=-1: scipy.special.log_softmax(x, axis=axis),
    "logsumexp": lambda a, axis=None, b=None, keepdims=False: scipy.special.logsumexp(
        a, axis=axis, keepdims=keepdims),
    "one_hot": lambda x, num_classes: (np.expand_dims(x, -1) == np.arange(num_classes)) * 1.0,
}
nn = types.ModuleType("jax.nn")
for _name, _f in _NN.items():
    setattr(nn, _name, _wrap(_f, _name, "jax.nn"))
lax = types.ModuleType("jax.lax")
lax.scan, lax.fori_loop = scan, fori_loop
lax.stop_gradient = _wrap(lambda x: x, "stop_gradient", "jax.lax")
random = types.ModuleType("jax.random")
random.normal = _random_normal
jax = types.ModuleType("jax")
jax.numpy, jax.scipy, jax.lax, jax.random, jax.vmap = numpy, scipy_, lax, random, vmap
jax.nn = nn
jax.jit = jit
for _fn in (vmap, scan, fori_loop, jit):
    _fn.__module__ = {"vmap": "jax", "jit": "jax"}.get(_fn.__name__, "jax.lax")
_random_normal.__module__, _random_normal.__name__ = "jax.random", "normal"
