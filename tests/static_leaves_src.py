"""Structures holding strings, None and bools beside numbers and arrays: a
layer's activation by name, a configuration's switches. Used by
tests/test_static_leaves.py."""

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np


class Layer(NamedTuple):
    W: np.ndarray
    b: np.ndarray
    act: str


def net(layers, x):
    for L in layers:
        x = x @ L.W + L.b
        if L.act == "tanh":
            x = np.tanh(x)
        elif L.act == "softplus":
            x = np.log1p(np.exp(x))
    return np.sum(x ** 2)


def _apply(L, x):
    y = x @ L.W + L.b
    if L.act == "tanh":
        return np.tanh(y)
    return y


def net_helper(layers, x):
    for L in layers:
        x = _apply(L, x)
    return np.sum(x ** 2)


@dataclass
class Config:
    scale: float
    mode: str = "l2"
    use_bias: bool = False
    bias: float | None = None


def penalty(cfg, x):
    if cfg.mode == "l2":
        y = cfg.scale * x * x
    else:
        y = cfg.scale * abs(x)
    if cfg.use_bias and cfg.bias is not None:
        y = y + cfg.bias * x
    return y


def dict_params(params, x):
    h = x @ params["W"]
    if params["act"] == "tanh":
        h = np.tanh(h)
    return np.sum(h ** 2) + params["s"] ** 2


def make_loss(cfg):
    def loss(w):
        if cfg.mode == "l2":
            return cfg.scale * w * w
        return cfg.scale * abs(w)
    return loss


EXAMPLE_LAYERS = [Layer(np.ones((3, 3)), np.zeros(3), "tanh"),
                  Layer(np.ones((3, 2)), np.zeros(2), "linear")]

EXAMPLE_CONFIG = Config(2.0, "l1", True, 0.5)
