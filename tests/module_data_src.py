"""Functions reading module-level data (arrays, lists of arrays, dicts of
arrays): constants of the gradient, read from the module on every call
(tests/test_module_data.py)."""

import math
from typing import NamedTuple

import numpy as np

_RNG = np.random.default_rng(2024)
DATA = _RNG.normal(size=(7, 3))
TARGET = _RNG.normal(size=7)
LAYERS = [(_RNG.normal(size=(3, 4)) * 0.5, _RNG.normal(size=4) * 0.1),
          (_RNG.normal(size=(4, 2)) * 0.5, _RNG.normal(size=2) * 0.1)]
PARAMS = {"scale": _RNG.normal(size=3), "shift": 0.25}
WEIGHTS = np.linspace(0.5, 1.5, 7)
SCALE = 0.5
COEFFS = [1.0, -0.5, 0.25]


def loss(w):
    r = DATA @ w - TARGET
    return SCALE * np.sum(r * r)


def residual(w):
    return DATA @ w - TARGET


def weighted(r):
    return np.sum(WEIGHTS * r * r)


def loss_helper(w):
    r = residual(w)
    return np.sum(r ** 2)


def loss_helper_of_helper(w):
    return weighted(residual(w)) + 0.1 * np.sum(w * w)


def loss_local_shadow(w):
    # a local named like the module's array: the helper still reads the module's
    WEIGHTS = w * 2.0
    return weighted(residual(w)) + np.sum(WEIGHTS)


def mlp(x):
    h = x
    for W, b in LAYERS:
        h = np.tanh(h @ W + b)
    return np.sum(h * h)


def layer(h, W, b):
    return np.tanh(h @ W + b)


def mlp_helper(x):
    h = x
    for W, b in LAYERS:
        h = layer(h, W, b)
    return np.sum(h * h)


def affine(x):
    return np.sum(np.sin(x * PARAMS["scale"] + PARAMS["shift"]))


def in_loop(w, n: int):
    total = 0.0
    for i in range(n):
        r = residual(w * (1.0 + 0.1 * i))
        total = total + np.sum(WEIGHTS * r * r)
    return total


def in_branch(w):
    s = np.sum(w)
    if s > 0:
        out = np.sum(np.tanh(DATA @ w))
    else:
        out = np.sum((DATA @ w) ** 2)
    return out


def nested(w):
    def fit(v):
        return DATA @ v - TARGET
    r = fit(w)
    return np.sum(r * r)


def nested_helper(w):
    def fit(v):
        return residual(v) * 2.0
    r = fit(w)
    return np.sum(r * r)


def with_lambda(w):
    sq = lambda v: np.sum((DATA @ v) ** 2)  # noqa: E731
    return sq(w) + sq(w * 0.5)


def with_constants(x):
    # module numbers and lists of numbers stay constants read when the gradient is made
    total = 0.0
    for c in COEFFS:
        total = total * x + c
    return total * math.cos(x)


module_lambda = lambda w: np.sum((DATA @ w - TARGET) ** 2)  # noqa: E731


class Layer(NamedTuple):
    W: np.ndarray
    b: np.ndarray
    act: str


def forward_layers(layers, x):
    for L in layers:
        x = x @ L.W + L.b
        if L.act == "tanh":
            x = np.tanh(x)
    return x


def structure_and_data(layers):
    """A structure parameter (layers named by their activation) and module data."""
    p = forward_layers(layers, DATA)[:, 0]
    return np.mean((p - TARGET) ** 2)
