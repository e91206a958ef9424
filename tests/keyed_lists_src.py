"""Lists of dicts of arrays walked by index and by slices, in NumPy code
(tests/test_keyed_lists.py)."""

import numpy as np

EXAMPLE = [{"W": np.zeros((3, 2)), "b": np.zeros(3)}, {"W": np.zeros((2, 3)), "b": np.zeros(2)}]


def mlp(params, x):
    if not params:
        return x
    layer = params[0]
    return mlp(params[1:], np.tanh(layer["W"] @ x + layer["b"]))


def by_slices(params, x):
    return np.sum(mlp(params, x) ** 2)


def mlp_len(params, x):
    if len(params) == 0:
        return x
    layer = params[0]
    return mlp_len(params[1:], np.tanh(layer["W"] @ x + layer["b"]))


def by_slices_len(params, x):
    return np.sum(mlp_len(params, x) ** 2)


def mlp_chained(params, x):
    if len(params) == 0:
        return x
    return mlp_chained(params[1:], np.tanh(params[0]["W"] @ x + params[0]["b"]))


def by_chained_keys(params, x):
    return np.sum(mlp_chained(params, x) ** 2)


def first_layer(params, x):
    return np.sum(np.tanh(params[0]["W"] @ x + params[0]["b"]) ** 2)


def by_index_loop(params, x):
    h = x
    for i in range(len(params)):
        h = np.tanh(params[i]["W"] @ h + params[i]["b"])
    return np.sum(h ** 2)


def by_bound_layer(params, x):
    h = x
    for i in range(len(params)):
        layer = params[i]
        h = np.sin(layer["W"] @ h) + layer["b"]
    return np.sum(h * h)


def nested_layers(params, x):
    h = x
    for i in range(len(params["layers"])):
        h = np.tanh(params["layers"][i]["W"] @ h + params["layers"][i]["b"])
    return np.sum(h ** 2) * params["scale"]
