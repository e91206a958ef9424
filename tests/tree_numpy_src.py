"""Recursion over a structure in NumPy code: the tree's number leaves stay
numbers (so ``isinstance(node, float)`` holds for them), its array leaves
are arrays, its strings select code. Used by tests/test_tree_numpy.py."""

import numpy as np


def evaluate(node, x):
    """An expression tree: a number, or (op, left, right)."""
    if isinstance(node, float):
        return node * np.ones_like(x)
    op, left, right = node
    a = evaluate(left, x)
    b = evaluate(right, x)
    if op == "+":
        return a + b
    return a * np.sin(b)


def loss(tree, x):
    return np.sum(evaluate(tree, x) * x)


def array_leaves(node, x):
    """A tree whose leaves are arrays (weights) or numbers (scales)."""
    if isinstance(node, np.ndarray):
        return np.tanh(node * x)
    if isinstance(node, float):
        return node * x
    return array_leaves(node[0], x) * array_leaves(node[1], x) + x


def array_loss(tree, x):
    return np.sum(array_leaves(tree, x))


def dict_tree(tree, x):
    """Sums the leaves of a dict tree, each scaling np.cos(x)."""
    if "children" not in tree:
        return tree["value"] * np.cos(x)
    out = np.zeros_like(x)
    for child in tree["children"]:
        out = out + tree["weight"] * dict_tree(child, x)
    return out


def dict_loss(tree, x):
    return np.sum(dict_tree(tree, x) ** 2)


def forward(layers, x):
    if not layers:
        return x
    W, b = layers[0]
    return forward(layers[1:], np.tanh(W @ x + b))


def mlp_loss(layers, x):
    return np.sum(forward(layers, x) ** 2)


def summed_in_a_loop(tree, xs):
    total = 0.0
    for k in range(3):
        total = total + np.sum(evaluate(tree, xs) * np.sin(xs * (k + 1.0)))
    return total


def by_class_of(node, x):
    """isinstance against a class computed from the arguments: refused."""
    if isinstance(node, type(x)):
        return node * x
    return by_class_of(node[0], x) + by_class_of(node[1], x)


def class_loss(tree, x):
    return np.sum(by_class_of(tree, x))


EXPR = ("+", 1.5, ("*", 2.0, 0.5))
DEEP = ("*", ("+", 0.3, ("*", 1.2, 0.7)), ("+", 0.4, 0.9))
MIXED = ((np.array([0.5, 0.6, 0.7]), 1.5), np.array([0.2, 0.1, 0.4]))
DICT = {"weight": 0.7, "children": [{"value": 1.5},
                                    {"weight": 1.3, "children": [{"value": 0.5}, {"value": 2.0}]}]}
LAYERS = [(np.array([[0.5, -0.2, 0.1], [0.3, 0.8, -0.4]]), np.array([0.1, -0.1])),
          (np.array([[0.7, -0.6]]), np.array([0.05]))]
