"""Closures made by factories that capture structures of numbers and arrays:
lists, tuples, dicts, dataclasses and NamedTuples (the data of a loss)."""

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np


def make_list_loss(data):
    def loss(w):
        return sum((w * d - 1.0) ** 2 for d in data)
    return loss


def make_indexed_loss(xs, weights):
    def loss(w, b):
        total = 0.0
        for i in range(len(xs)):
            total += weights[i] * (w * xs[i] + b - 1.0) ** 2
        return total
    return loss


@dataclass
class Config:
    scale: float
    shift: float


class Prior(NamedTuple):
    mean: float
    width: float


def make_config_loss(cfg, prior):
    def loss(w):
        z = (w - prior.mean) / prior.width
        return (cfg.scale * w + cfg.shift) ** 2 + 0.5 * z * z
    return loss


def make_dict_loss(d):
    def loss(w):
        return math.sin(d["a"] * w) + d["b"][1] * w * w
    return loss


def make_regression_loss(data):
    def loss(w):
        X, y = data
        r = X @ w - y
        return np.sum(r * r)
    return loss


def make_network_loss(layers, target):
    def loss(x):
        h = x
        for W, b in layers:
            h = np.tanh(W @ h + b)
        return np.sum((h - target) ** 2)
    return loss


list_loss = make_list_loss([1.0, 2.0, 3.0])
config_loss = make_config_loss(Config(2.0, 0.5), Prior(0.25, 2.0))


def make_labels_loss(labels):
    def loss(w):
        return w * len(labels)
    return loss


labels_loss = make_labels_loss(["a", "b"])
indexed_loss = make_indexed_loss([1.0, 2.0, -1.0], (0.5, 2.0, 1.5))
