"""Methods: bound methods, self attributes, staticmethod, classmethod (tests/test_methods.py)."""

import math

import numpy as np


class Spring:
    scale = 3.0

    def __init__(self, k, mode="quad"):
        self.k = k
        self.mode = mode
        self.rest = 1.5

    def stretch(self, x):
        return x - self.rest

    def energy(self, x):
        d = self.stretch(x)
        if self.mode == "quad":
            return 0.5 * self.k * d * d
        return self.k * abs(d)

    def in_loop(self, x, n):
        s = 0.0
        for i in range(n):
            s = s + self.energy(x + 0.1 * i) * self.k
        return s

    @staticmethod
    def sq(t):
        return t * t

    def via_static(self, x):
        return self.sq(x) * self.k + Spring.sq(self.rest)

    @classmethod
    def unit(cls, x):
        return cls.scale * math.sin(x) * x

    def passes_self(self, x):
        return helper_taking_object(self, x)

    def writes(self, x):
        self.k = x
        return x


def helper_taking_object(obj, x):
    return x


class Linear:
    def __init__(self, W, b):
        self.W = W
        self.b = b

    def predict(self, x):
        return np.tanh(self.W @ x + self.b)

    def loss(self, x, y):
        r = self.predict(x) - y
        return np.sum(r * r)


spring = Spring(2.0)
soft = Spring(1.5, "abs")


def uses_a_model(x):
    """A helper position: a function calling a module-level object's method."""
    return spring.energy(x) * 2.0
