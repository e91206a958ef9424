"""Structures passed whole to helpers and returned by them (tests/test_passing.py,
tests/test_metamorphic_corpora.py): lists, tuples, dicts, NamedTuples and
dataclasses of numbers built in the function, `*args` and `**kwargs`
helpers; and structures of arrays forwarded to helpers."""

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np


class Pt(NamedTuple):
    w: float
    b: float


@dataclass
class Affine:
    w: float
    b: float
    scale: float = 1.5


def _sumsq(xs):
    return sum(x * x for x in xs)


def _head_pair(xs):
    a, b = xs  # unpacking: needs the length while lowering
    return a * b


def list_to_helper(a, b):
    xs = [a, b, a * b]
    return _sumsq(xs)


def _looped(xs):
    s = 0.0
    for x in xs:
        s = s + math.sin(x) * x
    return s


def list_to_looping_helper(a, b):
    return _looped([a, b, a * b]) + _looped((b, 1.5))


def _indexed(c, x):
    s = 0.0
    for i in range(len(c)):
        s = s * x + c[i]
    return s


def list_indexed_in_helper(a, b):
    return _indexed([a, b, a - b, 0.5], b)


def _dict_branch(d, x):
    if x > 0.0:
        return d["w"] * math.tanh(x) + d["b"]
    return d["w"] * x * x - d["b"]


def dict_to_helper(w, b, x):
    return _dict_branch({"w": w, "b": b}, x) * _dict_branch({"b": w, "w": b * b}, -x)


def _pt_energy(p, x):
    return (p.w * x + p.b) ** 2 + p[0] * p[1]


def namedtuple_built(w, b, x):
    return _pt_energy(Pt(w, b), x) + _pt_energy(Pt(b=x, w=w * b), 0.5)


def _affine(p, x):
    return p.scale * (p.w * x + p.b)


def dataclass_built(w, b, x):
    return _affine(Affine(w, b), x) * _affine(Affine(b, w, x), w)


def _nested_reader(t):
    s = t["t"][0] * t["t"][1]
    for v in t["xs"]:
        s = s + v * t["t"][0]
    return s


def nested_structure(a, b):
    return _nested_reader({"xs": [a, b, a * b], "t": (a * b, 2.0)})


def _inner_d(d, x):
    return d["w"] * math.sin(x) + d["b"]


def _outer_d(d, x):
    s = 0.0
    for i in range(3):
        s = s + _inner_d(d, x + i) * d["w"]
    return s


def structure_through_helpers(w, b, x):
    return _outer_d({"w": w, "b": b}, x)


def _step(state, u):
    return state[0] * math.cos(u) + state[1] * u


def structure_in_loop(x, y, n):
    s = 0.0
    for i in range(n):
        s = s + _step([s + x, y * i], x)
    return s


def structure_in_branch(x, y):
    if x > y:
        r = _sumsq((x, y, 1.0))
    else:
        r = _sumsq([y, x * y])
    return r


def _mode(opts, x):
    if opts["mode"] == "l2":
        return x * x * opts["w"]
    return abs(x) * opts["w"]


def static_in_structure(x, w):
    return _mode({"mode": "l2", "w": w}, x) + _mode({"mode": "l1", "w": x}, w)


def _star(*args):
    s = 0.0
    for a in args:
        s = s + a * len(args)
    return s + args[0] * args[-1]


def star_args(x, y):
    return _star(x, y, 3.0) + _star(x * y)


def _kw(x, **opts):
    return x * opts["scale"] + opts["shift"]


def kwargs_helper(x, y):
    return _kw(x, scale=y, shift=x * y)


def _pair(a, b):
    return a * math.exp(b)


def star_forward(x, y):
    args = (x, y)
    kw = {"b": x - y}
    return _pair(*args) + _pair(y, **kw)


def _stats(x, y):
    return {"s": x + y, "p": x * y}


def returns_dict(x, y):
    d = _stats(x, y)
    return d["s"] * d["p"] + _stats(y, 2.0)["p"]


def _pt_of(x, y):
    return Pt(x * y, x - y)


def returns_namedtuple(x, y):
    p = _pt_of(x, y)
    w, b = _pt_of(y, x)
    return p.w * p.b + p[0] + w * b


def _nested_out(x, y):
    return (x + y, x * y), [x - y, math.sin(x)]


def returns_nested(x, y):
    (s, p), d = _nested_out(x, y)
    return s * p * d[0] + d[1]


def _passes_on(d, x):
    return _dict_branch(d, x) + _sumsq(d["xs"])


def forward_structure_parameter(w, b, x):
    return _passes_on({"w": w, "b": b, "xs": [w, x]}, x)


# structures of arrays

class Layer(NamedTuple):
    W: np.ndarray
    b: np.ndarray


@dataclass
class Model:
    W1: np.ndarray
    b1: np.ndarray
    w2: np.ndarray


def _forward(params, x):
    h = np.tanh(params["W1"] @ x + params["b1"])
    return params["W2"] @ h


def dict_loss(params, x):
    y = _forward(params, x)
    return np.sum(y * y)


def _mlp(layers, x):
    h = x
    for layer in layers:
        h = np.tanh(layer.W @ h + layer.b)
    return h


def layers_loss(layers, x):
    return np.sum(_mlp(layers, x) ** 2)


def _predict(model, x):
    return np.sum(model.w2 * np.tanh(model.W1 @ x + model.b1))


def _model_sq(model, xs):
    s = 0.0
    for x in xs:
        s = s + _predict(model, x) ** 2
    return s


def model_loss(model, x):
    return _model_sq(model, [x, 2.0 * x])


def _two_layers(x, W, V):
    h = np.tanh(W @ x)
    return {"h": h, "y": V @ h}


def returns_dict_of_arrays(W, V, x):
    out = _two_layers(x, W, V)
    return np.sum(out["y"] ** 2) + np.sum(out["h"])


def _layer(W, b):
    return Layer(W * 0.5, b + 1.0)


def builds_layers(W, b, x):
    layers = [_layer(W, b), Layer(W, b)]
    return layers_loss(layers, x)


def reshape_starred(x):
    y = np.reshape(x, (*x.shape, 1))
    return np.sum(y * y * x[..., None])


# sorted(key=), min/max(key=)

def sorted_weights(a, b, c):
    xs = sorted([a * b, b - c, math.sin(c), a], key=lambda t: (t - 0.2) ** 2)
    return xs[0] * 3.0 + xs[1] * 2.0 + xs[2] - xs[3] * xs[0]


def sorted_plain(a, b, c):
    s = 0.0
    ys = sorted((a, b, c, a * c), reverse=True)
    for i, v in enumerate(ys):
        s = s + v * (i + 1.0)
    return s + sorted([c, a])[0]


def _closest(points, target):
    return min(points, key=lambda p: abs(p - target))


def closest_point(a, b, t):
    return _closest([a, b, a * b, 0.5], t) * t + max([a, b, t], key=lambda v: v * v)


EXAMPLE_PARAMS = {"W1": np.zeros((4, 3)), "b1": np.zeros(4), "W2": np.zeros((2, 4))}
EXAMPLE_MODEL = Model(np.zeros((3, 3)), np.zeros(3), np.zeros(3))


# lists of any length passed to helpers

def _tail_energy(xs, w):
    s = 0.0
    for i in range(len(xs)):
        s = s + xs[i] * xs[-1 - i] * w
    return s + xs[-1]


def grown_to_helper(x, w, n):
    xs = [x]
    for i in range(n):
        xs.append(math.sin(xs[-1]) * w + 0.1 * xs[i])
    a = _tail_energy(xs, w)
    xs.append(a * 0.5)  # after the call: the helper saw the list as it was then
    return a + _tail_energy(xs, x)


def grown_in_loop(x, n):
    hs = []
    t = 0.0
    for i in range(n):
        hs.append(x * (i + 1.0) + t * 0.1)
        t = t + _tail_energy(hs, x)
    return t


def list_param_to_helper(c, x):
    return _indexed(c, x) * x + _tail_energy(c, x)


def _inner_kw(a, b, c=1.0, **kw):
    return a * b * c + kw["s"]


def _outer_star(*args, **kw):
    return _inner_kw(*args, **kw) + len(args)


def star_kwargs_forwarding(x, y):
    return _outer_star(x, y, s=x * y) + _outer_star(y, x, 2.0, s=1.0)


def _best(xs, t):
    return max(xs, key=lambda v: -(v - t) ** 2)


def sorted_in_loop(a, b, t):
    s = 0.0
    for i in range(3):
        s = s + _best([a * i, b, a + b], t) * sorted([a, b * i], key=lambda v: v * v)[0]
    return s


def starred_shape_name(x):
    shape = (*x.shape, 1)
    y = np.reshape(x, shape) * np.ones((1, *np.shape(x)[1:], 2))
    return np.sum(y * y)
