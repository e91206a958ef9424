"""Loops that sum independent iterations (computed at once by s2s-ad) and
near misses that must stay loops; tests/test_loop_batching.py."""

import math
import operator
from dataclasses import dataclass

import numpy as np


def point(i, n):
    return -1.0 + (i * 2.0) / (n - 1.0)


def fit(x, n):
    m = x.shape[0]

    def residual(i):
        t = point(i, n)
        p = np.full(m, t)
        p[0] = 1.0
        return (np.sign(t) + np.sum(-x * np.cumprod(p))) ** 2

    total = 0.0
    for i in range(n):
        total += residual(i)
    return total / 2.0


def two_sums(x, w, n):
    a = 0.0
    b = np.zeros(3)
    for k in range(1, n):
        s = np.sin(x * k)
        a = a + np.sum(s * w)
        b -= s[:3] * k / n
        a = a - np.mean(s) * 0.5
    return a * np.sum(b * b)


def stepped(x, n):
    total = 0.0
    for j in range(n, 0, -2):
        total += np.sum(np.exp(-x * j / n))
    for j in range(2, n, 3):
        total += np.tanh(np.dot(x, x) * j / n)
    return total


def in_place(x, n):
    acc = np.zeros_like(x)
    for i in range(n):
        acc += np.cos(x * i) / (i + 1.0)
    return np.sum(acc * x)


def as_helper(x, n):
    return fit(x, n) * 2.0 + fit(x * 0.5, n)


def in_outer_loop(x, n):
    total = 0.0
    for r in range(3):
        for i in range(n):
            total += np.sum(np.sin(x * (i + r) / n))
        total = total * 0.9
    return total


def rows_of(x, n):
    """An array summed, an einsum and a roll in the body, and float(i)."""
    total = np.zeros(x.shape[0])
    for i in range(n):
        u = float(i) / n
        v = x * u + np.roll(x, 1) * (1.0 - u)
        total = total + v * np.einsum("i,i->", v, x)
    return np.sum(total * x)


# -- near misses: the loop stays --------------------------------------------------

def carried(x, n):
    t = np.zeros_like(x)
    total = 0.0
    for i in range(n):
        total += np.sum(t * x)
        t = np.sin(x * i)
    return total


def reads_sum(x, n):
    total = 0.0
    for i in range(n):
        total += np.sum(np.sin(x * i)) + total * 0.1
    return total


def read_before_update(x, n):
    """The accumulator read before its update: each iteration sees the sum so far."""
    y = np.zeros_like(x)
    s = 0.0
    for i in range(n):
        z = y * 0.5
        y += x * i
        s = s + np.sum(np.sin(z) * x)
    return s


def axis_of_a_number(x, s, n):
    """np.sum(t, axis=0) of a number t is t (NumPy takes axis 0 of a
    number); with the iterations on an axis it would sum over them."""
    acc = 0.0
    for i in range(n):
        t = s * (i + 1.0)
        acc += np.sum(np.sin(x * t)) - np.sum(t, axis=0, keepdims=True) * 0.5
    return acc * s


def temp_after(x, n):
    total = 0.0
    t = x
    for i in range(n):
        t = np.sin(x * i)
        total += np.sum(t)
    return total * np.sum(t)


def integer_array(x, n):
    total = 0.0
    for i in range(n):
        p = np.full(3, i)
        total += np.sum(p * x)
    return total


def scalar_math(x, n):
    total = 0.0
    for i in range(n):
        total += math.sin(x * i)
    return total


def marked(x, n):
    total = 0.0
    for i in range(n):  # s2s-ad: checkpoint
        total += np.sum(np.sin(x * i))
    return total


def closure_reads(x, n):
    total = 0.0

    def scaled(v):
        return v * total

    for i in range(n):
        total += np.sum(np.sin(x * i))
    return scaled(total)


def _helper(v, k):
    r = np.sin(v * k)
    q = np.cos(r) * v
    return np.sum(r * q) + np.sum(np.exp(q))


def used_in_one_arm(v, n):
    """A helper's result read in one arm only: where the other arm runs, its
    backward pass does not, and the adjoints it would start are zeros."""
    s = _helper(v, 2.0)
    t = 0.0
    if n > 0:
        t = t + s
    return t


def count_of_range(x, n):
    k = len(range(0, n, 1))
    return np.sum(x) * k


def indexed_count(x, n):
    k = operator.index(n)
    return np.sum(x * x) * k


# -- the same kind of loop in other positions ---------------------------------------

W = np.array([0.3, -0.2, 0.5])


class Model:
    def __init__(self, scale):
        self.scale = scale

    def loss(self, x, n):
        acc = 0.0
        for i in range(n):
            acc += np.sum(np.tanh(x * i * self.scale) * W)
        return acc


def make_loss(data):
    def loss(x, n):
        acc = 0.0
        for i in range(n):
            acc = acc + np.sum((x - data * i) ** 2)
        return acc
    return loss


@dataclass
class Params:
    w: np.ndarray
    b: float


def with_params(p, n):
    acc = 0.0
    for k in range(1, n):
        acc += np.sum(np.sin(p.w * k + p.b))
    return acc


def dict_params(params, n):
    acc = np.zeros(3)
    for k in range(n):
        acc += np.cos(params["w"] * k) * params["b"]
    return np.sum(acc * acc)


def in_branch(x, n):
    if np.sum(x) > 0:
        acc = 0.0
        for i in range(n):
            acc += np.sum(np.exp(-x * i))
        return acc
    return np.sum(x)


def writes_and_cumsum(x, s, n):
    """A write into the iteration's array and a cumulative sum: the gradient
    file calls zeroed, gather and cumsum_adjoint."""
    acc = 0.0
    for i in range(n):
        u = i * 0.25 + s
        p = np.full(x.shape[0], u * 0.5)
        p[0] = s * u
        acc += np.sum(np.cumsum(x * p) * x)
    return acc


# -- rows written at the loop's index, arrays read at it --------------------------

def mapped(x, w, n):
    out = np.zeros(n)
    for i in range(n):
        out[i] = np.tanh(x[i] * w) + np.sum(w * x[i])
    return np.sum(out * out)


def differences(x, n):
    d = np.zeros(n)
    total = 0.0
    for i in range(1, n):
        d[i] = x[i] - x[i - 1] * 0.5
        total += np.sin(x[i])
    return np.sum(d * d) + total


def rows_of_matrix(A, w):
    n = A.shape[0]
    H = np.zeros_like(A)
    for i in range(n):
        H[i] = np.sin(A[i] * w) * A[i, 0]
    return np.sum(H * A)


def _point_error(cam, pt, weight):
    p = cam[:2] * pt[0] + cam[2] * pt[1:]
    return weight * (p - np.tanh(pt[1:]))


def per_observation(cams, pts, weights):
    m = weights.shape[0]
    err = np.zeros((m, 2))
    for i in range(m):
        err[i] = _point_error(cams[i], pts[i], weights[i])
    return np.sum(err * err)


def recurrence_kept(x, a):
    y = np.zeros_like(x)
    for i in range(1, x.shape[0]):
        y[i] = y[i - 1] * a + np.sin(x[i])
    return np.sum(y * y)


def shifted_write_kept(x, n):
    y = np.zeros(n + 1)
    for i in range(n):
        y[i + 1] = np.sin(x[i])
    return np.sum(y * x[0])


def past_the_end(x, n):
    out = np.zeros(n)
    for i in range(n):
        out[i] = np.sin(x[i + 1])
    return np.sum(out)


def write_past_the_end(x, n):
    out = np.zeros(x.shape[0] - 3)
    for i in range(n):
        out[i] = np.sin(x[i])
    return np.sum(out) + np.sum(x)


def same_row_each_time(a, b):
    y = a.copy()
    acc = np.sum(y * a) * 0.5
    for i in range(1, len(a)):
        y[i] = np.tanh(acc)
    return np.sum(y * b)


def kept_by_comment(x, n):
    total = 0.0
    for i in range(n):  # s2s-ad: loop
        total += np.sum(np.sin(x * i))
    return total


def list_at_the_index(states, w):
    s = 0.0
    for i in range(len(states)):
        s = s + np.sum(np.tanh(states[i] * w))
    return s


def passes_a_list(x, w):
    states = [x * 0.5, x * 1.5, np.sin(x)]
    return list_at_the_index(states, w)


def written_after_the_loop(x, n):
    """Rows of y read at the index would be views of y, which is written
    after the loop: the rewrite is refused there and the loop stays."""
    y = np.copy(x)
    acc = 0.0
    for i in range(n):
        acc += np.sin(y[i]) * y[i] * 2.0
    y[0] = 5.0
    y[1] = y[1] * 3.0
    return acc + np.sum(y * y)


def observations_twice(cams, pts, weights):
    """The per-observation loop in a helper of a helper, inside a loop and a branch."""
    total = 0.0
    for r in range(2):
        if r == 0:
            total = total + per_observation(cams, pts, weights)
        else:
            total = total + 0.5 * per_observation(cams * 0.9, pts, weights)
    return total


def through_two_helpers(cams, pts, weights):
    return observations_twice(cams, pts, weights) * 2.0


def _rotate(rot, v):
    s = np.sum(rot ** 2)
    if s != 0.0:
        theta = np.sqrt(s)
        axis = rot / theta
        return (v * np.cos(theta) + np.cross(axis, v) * np.sin(theta)
                + axis * np.dot(axis, v) * (1.0 - np.cos(theta)))
    else:
        return v + np.cross(rot, v)


def rotated_observations(cams, pts, obs):
    """Cameras and points picked at each observation through an index array,
    and a branch on each observation's value inside the helper."""
    m = obs.shape[0]
    err = np.zeros((m, 3))
    for i in range(m):
        err[i] = _rotate(cams[obs[i, 0]], pts[obs[i, 1]]) - pts[obs[i, 1], 0]
    return np.sum(err * err)


def _clipped(v, lo):
    s = np.sum(v)
    if s < lo:
        return v * 0.0 + lo
    t = np.tanh(v)
    if s > 1.0:
        t = t * s
    else:
        t = t - s
    return t


def early_return(x, w, n):
    total = 0.0
    for i in range(n):
        total += np.sum(_clipped(x * (i - 2.0), -0.5) * w)
    return total


def _nested(v):
    a = v[0]
    if a > 0.0:
        if v[1] > 0.0:
            return np.log(a) * v
        return np.sqrt(a) * v
    return v * v


def nested_branches(A):
    out = np.zeros_like(A)
    for i in range(A.shape[0]):
        out[i] = _nested(A[i])
    return np.sum(out * A)


def _flagged(v, flag):
    if flag:
        return np.sin(v)
    return np.cos(v)


def same_test_for_all(x, n, flag):
    total = 0.0
    for i in range(n):
        total += np.sum(_flagged(x * i, flag))
    return total


def _shape_differs(v):
    if v[0] > 0.0:
        return v * 2.0
    return 1.0


def arms_of_two_shapes(x, n, c):
    total = 0.0
    for i in range(n):
        total += np.sum(_shape_differs(x * (i + c)))
    return total


def dots(A, W, v):
    out = np.zeros((A.shape[0], W.shape[1]))
    s = 0.0
    for i in range(A.shape[0]):
        out[i] = np.dot(A[i], W) * np.dot(A[i], v)
        s += np.dot(v, np.tanh(A[i]))
    return np.sum(out ** 2) + s


def dot_of_a_number(A, v):
    s = 0.0
    for i in range(A.shape[0]):
        s += np.sum(np.dot(A[i, 0], v))
    return s


def index_from_the_counter(x, table, n):
    total = 0.0
    for i in range(n):
        total += np.sum(table[2 * i] * x)
    return total


def _euler(t):
    Rx = np.eye(3)
    Rx[1, 1] = np.cos(t[0])
    Rx[2, 1] = np.sin(t[0])
    Rx[1, 2] = -Rx[2, 1]
    Rx[2, 2] = Rx[1, 1]
    Rz = np.eye(3)
    Rz[0, 0] = np.cos(t[1])
    Rz[1, 0] = np.sin(t[1])
    Rz[0, 1] = -Rz[1, 0]
    Rz[1, 1] = Rz[0, 0]
    return Rz @ Rx


def posed_bones(params, base):
    """A rotation built in a helper from np.eye, set into a 4x4 transform and
    multiplied by each bone's matrix (the hand-tracking objective's loop)."""
    n = base.shape[0]
    out = np.zeros((n, 4, 4))
    for i in range(n):
        tr = np.eye(4)
        tr[:3, :3] = _euler(params[i + 1])
        out[i] = base[i] @ tr
    return np.sum(out * out * base)


def matrix_products(A, M, v):
    s = 0.0
    for i in range(A.shape[0]):
        s += np.sum(np.tanh(A[i] @ M)) + np.sum(np.matmul(M, A[i]) * v) + v @ (A[i] * v)
    return s


def stacked_matrix_product(A, S):
    s = 0.0
    for i in range(A.shape[0]):
        s += np.sum(A[i] @ S)
    return s


def squares_of_matrices(A):
    """np.matmul is a ufunc with core axes: its rows are not elementwise."""
    s = 0.0
    for i in range(A.shape[0]):
        s += np.sum(np.matmul(A[i], A[i]) * A[i])
    return s


def branch_in_the_body(x, w, n):
    """An `if` in the loop's own body, its arms assigning names of the
    iteration that the rest of the body reads."""
    total = 0.0
    out = np.zeros((n, x.shape[0]))
    for i in range(n):
        v = x * (i - 1.5)
        s = np.sum(v)
        if s > 0.0:
            r = np.log(s) * v
            if s > 2.0:
                r = r * 0.5
        else:
            r = np.tanh(v)
        total += np.sum(r * w)
        out[i] = r
    return total + np.sum(out ** 2)


def branch_reads_the_last_iteration(x, n):
    """`r` read by the test before the arms assign it: carried from the last
    iteration, so the loop stays."""
    total = 0.0
    r = x
    for i in range(n):
        if np.sum(r) > 0.0:
            r = np.sin(x * i)
        else:
            r = np.cos(x * i)
        total += np.sum(r)
    return total


def branch_updates_an_accumulator(x, n):
    total = 0.0
    for i in range(n):
        v = x * (i - 1.5)
        if np.sum(v) > 0.0:
            total += np.sum(np.sin(v))
        else:
            total -= np.sum(v)
    return total




def _written_in_each_arm(v):
    p = np.zeros(3)
    q = np.zeros(3)
    q[2] = np.sum(v)
    if v[0] > 0.0:
        p[0] = 1.0
        q[0] = np.sin(v[0])
    else:
        p[1] = 2.0
        q[1] = np.cos(v[1])
    return p * v + q


def writes_in_each_arm(A):
    """Each arm writes other elements of two arrays made before the branch
    (one the same in every iteration, one of each): where iterations take
    both arms, each must see only its own writes."""
    out = np.zeros_like(A)
    for i in range(A.shape[0]):
        out[i] = _written_in_each_arm(A[i])
    return np.sum(out * A)


# rows picked by arrays of indices, a test of the loop's index, clipping by norm

def fancy_rows(table, w, idx):
    s = 0.0
    for i in range(idx.shape[0]):
        s += np.sum(table[idx[i]] * w)
    return s


def shifted_index(cams, obs, w):
    out = np.zeros((obs.shape[0], cams.shape[1]))
    for i in range(obs.shape[0]):
        out[i] = np.tanh(cams[obs[i, 0] + 1] * w[i])
    return np.sum(out * out)


def parity(x, n):
    s = 0.0
    for i in range(n):
        if i % 2 == 0:
            r = np.sin(x * i)
        else:
            r = np.cos(x) * i
        s += np.sum(r)
    return s


def _clip_norm(v, m):
    n = np.sqrt(np.sum(v * v))
    if n > m:
        v = v * (m / n)
    return v


def clipped(A, m):
    out = np.zeros_like(A)
    for i in range(A.shape[0]):
        out[i] = _clip_norm(A[i] * 1.0, m)
    return np.sum(out ** 3)


def negative_index(cams, obs):
    s = 0.0
    for i in range(obs.shape[0]):
        s += np.sum(np.exp(cams[obs[i]]))
    return s


def _value_and_size(v):
    if np.sum(v) > 0.0:
        return v * 2.0, np.sum(v)
    return np.sin(v), np.sum(v * v)


def unpacks_a_helper(A):
    """`a, b = h(x)` in the loop's body, h returning a tuple from each arm;
    and `c, d = e1, e2`."""
    s = 0.0
    for i in range(A.shape[0]):
        a, b = _value_and_size(A[i])
        c, d = a * b, np.tanh(b)
        s += np.sum(c) * d
    return s


def unpacks_a_row(A):
    """`a, b = A[i, :2]`: unpacking an array (its first axis) keeps the loop."""
    s = 0.0
    for i in range(A.shape[0]):
        a, b = A[i, :2]
        s += np.sin(a) * np.cos(b) + np.sum(A[i] * a)
    return s


def _rotations_of(cams, pts, obs):
    return rotated_observations(cams, pts, obs)


def rotations_everywhere(cams, pts, obs):
    """The branching per-observation loop in a helper of a helper, inside a
    loop and both arms of a branch."""
    total = 0.0
    for r in range(2):
        if r == 0:
            total = total + _rotations_of(cams, pts, obs)
        else:
            total = total + 0.5 * _rotations_of(cams * 0.9, pts, obs)
    return total
