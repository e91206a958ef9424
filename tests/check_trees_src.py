"""Functions of structures whose gradient `check` must prove, leaf by leaf
(tests/test_check_trees.py); each has a module-level example for --like."""

import math
from dataclasses import dataclass
from typing import NamedTuple

from wrong_rule_src import softplus


@dataclass
class Params:
    w: float
    b: float


class Layer(NamedTuple):
    w: float
    b: float


@dataclass
class Model:
    layers: list
    scale: float


def dataclass_loss(p, x):
    return math.sin(p.w * x) + p.b * x * x


PARAMS = Params(w=1.0, b=0.5)


def dict_loss(params, x):
    # A number and a list of numbers in one dict.
    return params["w"] * math.exp(x) + params["c"][0] * math.sin(params["c"][1])


DICT = {"w": 1.0, "c": [0.3, 0.4]}


def layer(l, x):
    return math.tanh(l.w * x + l.b)


def through(m, x):
    # A helper of a helper, in a loop over the structure's layers.
    for l in m.layers:
        x = layer(l, x)
    return x


def model_loss(m, x):
    y = through(m, x)
    return m.scale * y * y


MODEL = Model(layers=[Layer(1.0, 0.1), Layer(2.0, -0.2)], scale=1.5)


def namedtuple_branch(l, x):
    # Each branch reads a different leaf.
    if l.w > 1.0:
        return l.w * l.b * x
    return math.sin(l.b) + x


LAYER = Layer(w=0.5, b=0.7)


def through_wrong_rule(params, x):
    # A user rule whose backward is wrong (tests/wrong_rule_src.py).
    return softplus(params["a"] * x) + params["b"] * x


RULED = {"a": 1.0, "b": 2.0}
