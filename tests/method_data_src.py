"""Methods reading module-level arrays (beside their object's attributes).
Used by tests/test_method_data.py."""

import numpy as np

W = np.array([1.0, 2.0, 3.0])
LAYERS = [(np.array([[0.5, -0.2, 0.1], [0.3, 0.8, -0.4]]), np.array([0.1, -0.1]))]


def scaled(x):
    return np.tanh(W * x)


class Model:
    def __init__(self, s, V):
        self.s = s
        self.V = V

    def loss(self, x):
        return np.sum(np.tanh(W * x) * self.s)

    def with_attribute(self, x):
        return np.sum(np.sin(self.V * x) * W) + self.s * np.sum(x * x)

    def through_helpers(self, x):
        return np.sum(self.hidden(x) ** 2) + np.sum(scaled(x))

    def hidden(self, x):
        for A, b in LAYERS:
            x = np.tanh(A @ x + b)
        return x * self.s

    def in_a_loop(self, x):
        total = 0.0
        for k in range(3):
            total = total + np.sum(np.cos(W * x * (k + 1.0)))
        return total

    @staticmethod
    def static_loss(x):
        return np.sum(np.tanh(W * x) ** 2)

    def via_self(self, x):
        return self.static_loss(x) * self.s

    def via_class(self, x):
        return Model.static_loss(x) * self.s + np.sum(self.V * x)

    scale = 1.5

    @classmethod
    def class_loss(cls, x):
        return np.sum(np.exp(-W * x)) * cls.scale


def calls_a_static_method(x):
    return Model.static_loss(x) + np.sum(x * x)


MODEL = Model(2.0, np.array([0.3, -0.2, 0.5]))
