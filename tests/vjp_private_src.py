"""Functions whose backward pass reads an argument or the value itself
(tests/test_vjp_private.py)."""

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np


def exp_value(x):
    return np.exp(x)


def tanh_matvec(x, w):
    return np.tanh(x @ w)


def sines(c, x):
    s = 0.0
    for i in range(len(c)):
        s = s + math.sin(c[i] * x)
    return s


def cubes(p):
    return np.sum(p["w"] ** 3) + p["b"] * np.sum(p["w"])


@dataclass
class Params:
    w: np.ndarray
    b: float


class Pair(NamedTuple):
    w: np.ndarray
    b: float


def dataclass_loss(p, x):
    return np.sum(np.sin(p.w * x)) * p.b


def identity_rows(x):
    return x * 1.0, np.sum(x ** 2)


def scalar_square(x, y):
    return x * x * y
