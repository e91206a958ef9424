"""Recursion over a structure: each call passes a branch of the tree, down to
the leaves, where the structure decides the base case. Used by
tests/test_tree_recursion.py."""

import math


def tree_product(node, x):
    if isinstance(node, float):
        return node * x
    return tree_product(node[0], x) * tree_product(node[1], x) + 1.0


def through_helper(tree, x):
    return tree_product(tree, x) + x


def evaluate(expr, x):
    """An expression tree: "x", a number, or (op, left, right)."""
    if isinstance(expr, str):
        return x
    if isinstance(expr, float):
        return expr
    op, a, b = expr
    if op == "+":
        return evaluate(a, x) + evaluate(b, x)
    if op == "*":
        return evaluate(a, x) * evaluate(b, x)
    return math.sin(evaluate(a, x)) * evaluate(b, x)


def weighted_depth(tree, w):
    """Sums w ** depth over the leaves of a dict tree."""
    if "children" not in tree:
        return tree["value"] * w
    return w * sum(weighted_depth(c, w) for c in tree["children"])


def growing(t, x):
    if isinstance(t, float):
        return t * x
    return growing((t, t), x)


EXPR = ("*", ("+", "x", 1.5), ("sin", ("*", "x", "x"), 0.5))
TREE = ((0.5, 1.5), (2.0, (0.3, 0.1)))


def doubled(x):
    return x * 2.0


def run_layers(layers, x):
    """A list of (w, b) layers consumed one at a time: the base case is its
    emptiness, decided per length."""
    if not layers:
        return x
    w, b = layers[0]
    return run_layers(layers[1:], math.tanh(w * x + b))


def run_layers_len(layers, x):
    if len(layers) == 0:
        return x
    w, b = layers[0]
    return run_layers_len(layers[1:], math.tanh(w * x + b))
