"""Structure parameters (tests/test_pytrees.py): dicts, lists and tuples of
arrays, NamedTuples and dataclasses (nested), read as `params["W1"]`, `p.w`,
`layers[i].W`, `for W, b in layers`; and loops over module constants."""

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np


@dataclass
class Scalars:
    w: float
    b: float


@dataclass(frozen=True)
class Model:
    W1: np.ndarray
    b1: np.ndarray
    head: "Head"


@dataclass
class Head:
    w: np.ndarray
    scale: float


class Layer(NamedTuple):
    W: np.ndarray
    b: np.ndarray


COEFFS = [1.0, -2.0, 0.5, 3.0]
WEIGHTS = (0.5, 0.25)


def scalar_dataclass(p, x):
    return math.tanh(p.w * x + p.b) ** 2 + p.w * p.b


def dict_mlp(params, x):
    h = np.tanh(params["W1"] @ x + params["b1"])
    return np.sum((params["W2"] @ h) ** 2)


def pairs_mlp(layers, x):
    h = x
    for W, b in layers:
        h = np.tanh(W @ h + b)
    return np.sum(h * h)


def namedtuple_mlp(layers, x):
    h = x
    for layer in layers:
        h = np.tanh(layer.W @ h + layer.b)
    return np.sum(h * h)


def indexed_layers(layers, x):
    h = x
    for i in range(len(layers)):
        h = np.tanh(layers[i].W @ h + layers[i].b)
    return np.sum(h * h) + np.sum(layers[-1].W)


def nested_model(model, x):
    h = np.tanh(model.W1 @ x + model.b1)
    return np.sum(model.head.w * h) * model.head.scale


def enumerate_zip_layers(layers, scales, x):
    h = x
    for i, (layer, s) in enumerate(zip(layers, scales)):
        h = np.tanh(layer.W @ h + layer.b) * (s + i)
    for layer in reversed(layers):
        h = h + layer.b * 0.1
    return np.sum(h * h)


def horner_constant(x):
    s = 0.0
    for c in COEFFS:
        s = s * x + c
    for k, w in enumerate(WEIGHTS):
        s = s + w * x ** (k + 1)
    return s


def _read(w, b, x):
    return math.sin(w * x) + b


def helper_gets_fields(p, x):
    return _read(p.w, p.b, x) * p.w


def _whole(p, x):
    return p.w * x


def helper_gets_structure(p, x):
    return _whole(p, x)


def lists_of_arrays(Ws, xs, v):
    t = 0.0
    for W, x in zip(Ws, xs):
        t = t + np.sum(np.tanh(W @ v) * x)
    for i, W in enumerate(reversed(Ws)):
        t = t + np.sum(W) * (i + 1)
    return t


@dataclass
class Config:
    w: float
    n: int


def int_field_as_bound(c, x):
    s = x
    for i in range(c.n):
        s = math.sin(s * c.w)
    return s


def nested_dicts(p, x):
    t = 0.0
    for layer in p["layers"]:
        t = t + np.sum(np.tanh(layer["W"] @ x) * layer["s"])
    return t + p["bias"] * 2.0


def unused_leaf(p, x):
    return np.sum(p["a"] * x)
