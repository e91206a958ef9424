"""Frontend: TensorFlow's names, recognised by the object, and the NumPy each
one is read as.

Contract: :func:`reads_tf` tells whether a function is written against
``tensorflow`` (it names a TensorFlow module or function, or its module
imports TensorFlow and it names no NumPy but calls a tensor method such as
``t.get_shape()``); :func:`tf_name` gives a TensorFlow object's public name
(``tensorflow.reduce_sum``, ``tensorflow.math.log``,
``tensorflow.linalg.matvec``), found by identity among the attributes of
TensorFlow's public modules (TensorFlow's own ``tensorflow._api.v2.math`` is
``tensorflow.math``), else from its ``__module__`` and ``__name__``
(recognition shared with JAX's and torch's, in
:mod:`s2s_ad.frontend.library_names`). :data:`DTYPES` and :data:`CONSTANTS`
are TensorFlow's dtypes and numbers by their NumPy names. The calls
themselves are rewritten by :mod:`s2s_ad.frontend.tf_forms`.

>>> strip("tensorflow._api.v2.math")
'tensorflow.math'
"""

from __future__ import annotations

from s2s_ad.frontend import library_names

TF_TOPS = ("tensorflow",)
SUBMODULES = ("math", "linalg", "dtypes", "nn")
PUBLIC = ("tensorflow",) + tuple(f"tensorflow.{m}" for m in SUBMODULES) \
    + tuple(f"tensorflow._api.v2.{m}" for m in SUBMODULES)
"""TensorFlow's modules whose functions have public names the rewrite knows
(under both their public and their implementation names)."""

DTYPES = {**{name: name for name in ("float64", "float32", "float16", "int64", "int32",
                                     "int16", "int8", "uint8")},
          "double": "float64", "half": "float16", "bool": "bool_"}
"""``tf.float64`` → ``np.float64``, ...: TensorFlow's dtypes by NumPy's names."""
DTYPES.update({f"dtypes.{k}": v for k, v in DTYPES.items()})
CONSTANTS = {"experimental.numpy.pi": "pi", "experimental.numpy.e": "e"}


def strip(module_name: str) -> str:
    """A TensorFlow module's public path: ``tensorflow._api.v2.math`` →
    ``tensorflow.math``."""
    return module_name.replace("tensorflow._api.v2.", "tensorflow.", 1)


def is_tf(obj) -> bool:
    """Whether ``obj`` is one of TensorFlow's modules, functions or objects."""
    return library_names.belongs(obj, TF_TOPS)


FRESH = frozenset({"tensorflow.zeros", "tensorflow.ones", "tensorflow.eye", "tensorflow.fill",
                   "tensorflow.zeros_like", "tensorflow.ones_like", "tensorflow.constant",
                   "tensorflow.convert_to_tensor", "tensorflow.stack", "tensorflow.concat",
                   "tensorflow.range", "tensorflow.linspace"})
"""TensorFlow functions that return a new tensor, never (a view of) an
argument (:func:`s2s_ad.frontend.aliasing.returns_fresh` reads a helper's
source)."""


def tf_name(obj) -> str | None:
    """``"tensorflow.reduce_sum"``, ``"tensorflow.math.log"``: the public name
    of a TensorFlow object; None for anything that is not TensorFlow's."""
    return library_names.public_name(obj, TF_TOPS, PUBLIC, strip)


def reads_tf(tree, names: dict, methods=()) -> bool:
    """Whether the function ``tree`` (with globals ``names``) is written
    against TensorFlow (see :func:`s2s_ad.frontend.library_names.reads`)."""
    return library_names.reads(tree, names, TF_TOPS, methods)
