"""Structure parameters under second derivatives and Jacobians
(tests/test_pytrees_higher.py): `hvp`, `hessian`, `jacfwd`, `jacrev`,
`jacobian` and `s2s-ad hessian --like` of functions taking dicts, lists,
NamedTuples and dataclasses, read at the top level, in a helper, a helper of
a helper, a loop and a branch."""

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np


@dataclass
class Scalars:
    w: float
    b: float


class Layer(NamedTuple):
    W: np.ndarray
    b: np.ndarray


@dataclass
class Head:
    w: np.ndarray
    scale: float


@dataclass
class Model:
    W1: np.ndarray
    b1: np.ndarray
    head: Head


# module-level examples: `s2s-ad hessian ... --like p=SCALARS`
SCALARS = Scalars(0.5, -0.3)
PARAMS = {"W": np.zeros((2, 2)), "b": np.zeros(2), "s": 1.0}
MODEL = Model(np.zeros((2, 2)), np.zeros(2), Head(np.zeros(2), 1.0))


def scalar_dataclass(p, x):
    return math.tanh(p.w * x + p.b) ** 2 + p.w * p.b


def dict_layer(params, x):
    h = np.tanh(params["W"] @ x + params["b"])
    return np.sum(h * h) * params["s"]


def nested_model(model, x):
    h = np.tanh(model.W1 @ x + model.b1)
    return np.sum(model.head.w * h * h) * model.head.scale


def layers_loop(layers, x):
    h = x
    for layer in layers:
        h = np.tanh(layer.W @ h + layer.b)
    return np.sum(h * h)


def nested_dicts(p, x):
    t = 0.0
    for layer in p["layers"]:
        t = t + np.sum(np.tanh(layer["W"] @ x) ** 2) * layer["s"]
    return t + p["bias"] * p["bias"] * 2.0


def _affine(params, h):
    return params["W"] @ h + params["b"]


def _step(params, h):
    return np.tanh(_affine(params, h)) * params["s"]


def helpers_in_a_loop(params, x, n):
    # the dict passed whole to a helper of a helper, inside a loop and a branch
    h = x
    for i in range(n):
        if np.sum(h) > 0.0:
            h = _step(params, h)
        else:
            h = _step(params, h) * 0.5 + h
    return np.sum(h * h)


def _energy(p, x):
    return math.sin(p.w * x) * p.b + p.w * p.w * x


def scalar_helper(p, x):
    # a dataclass of numbers passed whole to a helper, a branch on its value
    if p.w > 0.0:
        return _energy(p, x) * p.b
    return _energy(p, x) + p.b * p.b


def dict_outputs(params, x):
    # an array-valued function: its Jacobian has shape(value) + shape(leaf)
    return np.tanh(params["W"] @ x + params["b"]) * params["s"]


def two_numbers(p, x):
    return p.w * math.sin(x + p.b), p.b * p.b * x
