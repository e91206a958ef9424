"""Everyday Python users write first (tests/test_everyday6.py): comprehensions
over `range(n)` of a parameter `n`, classmethods and staticmethods called
through `self`, `type(self)` and `cls`, a module's list of numbers read
through the module, lists known while lowering read at a `while` loop's
index (an alias or a slice of a module list, a module list of lists, a list
of dicts of arrays), `zip` of a module list with a list display, a helper's
local tuple read at its index parameter. Each construct at the top level, in
a helper and in a loop."""

import math

import numpy as np

from tests import everyday6_consts as consts
from tests import everyday6_consts

COEFFS = [0.5, -1.2, 2.0]
MAT = [[1.0, 2.0], [3.0, -4.0]]


# 1. comprehensions over range(n), n a parameter -------------------------------

def comp_sum(x, w, n):
    return sum([x[i] * w for i in range(n)])


def comp_sin(x, n):
    ys = [math.sin(x * k) for k in range(n)]
    return sum(ys) + ys[1] * ys[-1]


def comp_gen(x, n):
    return sum(math.cos(x * k) / (k + 1) for k in range(1, n))


def _comp_helper(x, n):
    return sum([math.sin(x * k) * k for k in range(n)])


def comp_in_helper(x, n):
    return _comp_helper(x, n) * x + _comp_helper(x * x, n + 1)


def comp_in_loop(x, n):
    s = 0.0
    for j in range(3):
        ys = [math.sin(x * k + j) for k in range(n)]
        s = s + sum(ys) * ys[-1]
    return s


def comp_in_while(x, n):
    s = 0.0
    j = 0
    while j < 2:
        s = s + sum(x ** k * (j + 1) for k in range(n))
        j += 1
    return s


def comp_np(A, x, n):
    return np.sum(np.stack([A[i] * x for i in range(n)]) ** 2)


def comp_np_sin(x, n):
    ys = [np.sin(x * k) for k in range(n)]
    return np.sum(ys[1] * ys[-1]) + np.sum(np.array([np.sum(y) for y in ys]))


def _comp_np_helper(A, x, n):
    return np.stack([np.tanh(A[i] * x) for i in range(n)])


def comp_np_in_helper(A, x, n):
    return np.sum(_comp_np_helper(A, x, n) * x)


def comp_np_in_loop(A, x, n):
    s = 0.0
    for j in range(2):
        s = s + np.sum(np.stack([A[i] * x * (j + 1) for i in range(n)]) ** 2)
    return s


# 2. classmethods and staticmethods through self --------------------------------

class Model:
    scale = 2.0

    def __init__(self, w):
        self.w = w

    @classmethod
    def cm(cls, x):
        return x * x * cls.scale

    @staticmethod
    def sm(x):
        return math.sin(x)

    @classmethod
    def cm2(cls, x):
        return cls.cm(x) * 2.0 + cls.sm(x) + math.exp(x * cls.scale * 0.1)

    def loss(self, x):
        return self.cm(x) * self.w + self.sm(x)

    def loss_type(self, x):
        return type(self).cm(x) * self.w + type(self).sm(x) * type(self).scale

    def loss_chain(self, x):
        return self.cm2(x) * self.w

    def _inner(self, x):
        return self.cm(x) + self.sm(x * self.w)

    def loss_helper(self, x):
        return self._inner(x) * x

    def loss_loop(self, x):
        s = 0.0
        for i in range(3):
            s = s + self.cm(x * i) + type(self).sm(x + i)
        return s

    def loss_np(self, x):
        return np.sum(self.cm(x) * self.w) + np.sum(np.sin(x) * self.scale)


class Shadowed(Model):
    def __init__(self, w):
        super().__init__(w)
        self.scale = 5.0


MODEL = Model(1.3)
LAYERS_LIKE = [{"W": np.zeros((3, 3)), "b": np.zeros(3)} for _ in range(3)]


# 3. a module's list of numbers through the module; while-loop indices ---------

def attr_index(x):
    return consts.COEFFS[1] * x + consts.TAPER[-1] * x * x + everyday6_consts.COEFFS[0]


def attr_iter(x):
    s = 0.0
    for c in consts.COEFFS:
        s = s * x + c
    return s


def attr_len(x):
    s = 0.0
    for i in range(len(consts.COEFFS)):
        s = s + consts.COEFFS[i] * x ** i
    return s


def attr_while(x):
    s = 0.0
    i = 0
    while i < len(consts.COEFFS):
        s = s + consts.COEFFS[i] * math.sin(x * (i + 1))
        i += 1
    return s


def _attr_term(x, i):
    return consts.COEFFS[i] * x ** i + consts.TAPER[i] * x


def attr_in_helper(x):
    s = 0.0
    for i in range(3):
        s = s + _attr_term(x, i)
    return s


def attr_in_loop(x, n):
    s = 0.0
    for k in range(n):
        s = s + sum(c * x ** k for c in consts.COEFFS) + len(consts.TAPER) * x
    return s


def attr_np(x):
    s = np.sum(consts.COEFFS[0] * x)
    for c in consts.TAPER:
        s = s + c * np.sum(np.sin(x) * x)
    return s


def alias_while(x):
    C = COEFFS
    s = 0.0
    i = 0
    while i < 3:
        s = s + C[i] * x ** (i + 1)
        i += 1
    return s


def slice_while(x):
    sub = COEFFS[1:3]
    s = 0.0
    i = 0
    while i < 2:
        s = s + sub[i] * math.exp(x * sub[-1 - i])
        i += 1
    return s


def matrix_while(x):
    s = 0.0
    i = 0
    while i < 2:
        s = s + MAT[i][1 - i] * math.sin(x * MAT[i][i])
        i += 1
    return s


def _alias_term(x, k):
    C = COEFFS
    return C[k] * x * x


def alias_in_helper(x):
    s = 0.0
    j = 0
    while j < 3:
        s = s + _alias_term(x, j)
        j += 1
    return s


def while_in_loop(x, n):
    s = 0.0
    for k in range(n):
        sub = COEFFS[1:]
        i = 0
        while i < len(sub):
            s = s + sub[i] * MAT[i][k % 2] * math.cos(x + k)
            i += 1
    return s


# 4. a list of dicts of arrays read at a while loop's index ---------------------

def dicts_while(params, x):
    i = 0
    while i < len(params):
        x = np.tanh(params[i]["W"] @ x + params[i]["b"])
        i += 1
    return np.sum(x * x)


def _layer(p, x):
    return np.tanh(p["W"] @ x + p["b"])


def dicts_while_helper(params, x):
    i = 0
    while i < len(params):
        x = _layer(params[i], x)
        i += 1
    return np.sum(x * x)


def dicts_while_in_loop(params, x):
    s = 0.0
    for k in range(2):
        h = x * (k + 1)
        i = len(params) - 1
        while i >= 0:
            h = np.sin(params[i]["W"] @ h) * params[i]["b"]
            i -= 1
        s = s + np.sum(h)
    return s


# 5. zip with a list display, zip of a module list in NumPy code, local tuples --

def zip_display(x):
    s = 0.0
    for c, t in zip(COEFFS, [x, x * x, math.sin(x)]):
        s = s + c * t
    return s


def zip_tuple_display(x):
    s = 0.0
    for c, t, k in zip(consts.TAPER, (x, x * x, math.sin(x)), range(3)):
        s = s + c * t * (k + 1)
    return s


def _zip_helper(x):
    s = 0.0
    for c, t in zip(COEFFS, [x, math.exp(x)]):
        s = s + c * t
    return s


def zip_in_helper(x):
    return _zip_helper(x) * _zip_helper(x * 0.5)


def zip_in_loop(x, n):
    s = 0.0
    for k in range(n):
        for c, t in zip(COEFFS, [x * k, x * x, math.cos(x)]):
            s = s + c * t
    return s


def zip_np(x):
    s = 0.0
    for c, t in zip(COEFFS, [x, x * x, np.sin(x)]):
        s = s + c * np.sum(t)
    return s


def zip_np_rows(X):
    s = 0.0
    for c, row in zip(consts.COEFFS, X):
        s = s + c * np.sum(row * row)
    return s


def _tuple_at(x, i):
    t = (1.5, -0.5, 2.0)
    return t[i] * x + t[-1 - i]


def tuple_in_helper(x):
    s = 0.0
    for i in range(3):
        s = s + _tuple_at(x, i) * x
    return s


def tuple_in_while(x):
    t = (1.5, -0.5, x)
    s = 0.0
    i = 0
    while i < 3:
        s = s + t[i] * x
        i += 1
    return s


# 6. grad(grad(f)) with a static parameter --------------------------------------

def with_mode(x, mode: str = "sq"):
    if mode == "sq":
        return x * x * x
    return math.sin(x) * x


def with_flag(x, y, squash=False, n: int = 3):
    s = 0.0
    for k in range(n):
        s = s + math.sin(x * k) * y
    if squash:
        return math.tanh(s) * x
    return s * x * y


def attr_matrix(x):
    return consts.MAT[0][1] * x


def tagged_while(x):
    cfg = [("a", 1.0), ("b", 2.0)]
    s = 0.0
    i = 0
    while i < 2:
        s = s + cfg[i][1] * x
        i += 1
    return s


def zip_run_time_range(xs, n):
    s = sum(a * k for k, a in zip(range(n), xs))
    for j, (k, a) in enumerate(zip(range(n, 0, -2), xs)):
        s = s + math.sin(a * k) * (j + 1)
    return s


def enumerate_of_a_comprehension(x, n):
    return sum(k * t for k, t in enumerate([x * j for j in range(n)]))


def zip_range_rows(X, n: int):
    s = 0.0
    for k, row in zip(range(n), X):
        s = s + np.sum(row * row) * k
    return s + np.sum(np.stack([row * k for k, row in zip(range(1, n), X)]))


def zip_range_rows_untyped(X, n):
    s = 0.0
    for k, row in zip(range(n), X):
        s = s + np.sum(row * row) * k
    return s


class Table:
    SCALE = 2.0
    SHIFTS = [0.5, -1.5]

    @staticmethod
    def sm(x):
        return math.sin(x) * Table.SCALE


def class_constant(x):
    return Table.SCALE * x * x + Table.sm(x)


def through_the_class(x):
    return Model.cm2(x) + Model.cm(x * 0.5) * Model.scale


def _class_helper(x):
    return Model.cm(x) * Table.SCALE


def through_the_class_in_a_loop(x, n):
    s = 0.0
    for k in range(n):
        s = s + _class_helper(x + k) + Model.sm(x * k)
    return s


def dicts_for_run_time_bound(params, x, n: int):
    for i in range(n):
        x = np.tanh(params[i]["W"] @ x + params[i]["b"])
    return np.sum(x)


def alias_for_run_time_bound(x, n):
    C = COEFFS[::-1]
    s = 0.0
    for i in range(n):
        if s > 1.0:
            break
        s = s + C[i] * x * x
    return s


def zip_any_length_with_a_display(xs, x):
    s = sum(a * t for a, t in zip(xs, [x, x * x, math.sin(x)]))
    ys = (math.cos(x), x)
    for a, t in zip(xs, ys):
        s = s + a * t * t
    return s


def zip_rows_with_a_display(X, x):
    s = 0.0
    for row, t in zip(X, [x, x * x, np.sin(x)]):
        s = s + np.sum(row * t)
    return s
