"""TensorFlow-flavoured objectives, written for this repository from the
objectives' mathematical definitions in the idiom of GradBench's TensorFlow
tools: ``tf.reduce_*`` with a positional axis, ``tf.math.*``, ``tf.concat``/
``tf.stack`` of tuples, ``tf.linalg.matvec`` over a batch, ``tf.cond`` with a
nested ``def`` and a ``lambda``, ``tf.while_loop`` with nested ``def``s, a
nested helper counting with ``nonlocal`` called from a generator, a generator
function consumed by ``tuple``, ``t.get_shape().as_list()`` through a helper
``shape(t)``. tests/test_tf_numpy.py differentiates them with s2s-ad (the
generated code calls NumPy, never TensorFlow) and compares with central
differences of these functions themselves, run by TensorFlow where it is
installed and on the stand-in of tests/tf_standin.py otherwise (set
S2S_TF_STANDIN=1 to use the stand-in even where TensorFlow is installed), and
with tf.GradientTape where TensorFlow is installed."""

import math
import os

from scipy import special

try:
    if os.environ.get("S2S_TF_STANDIN"):
        raise ImportError("the stand-in was asked for")
    import tensorflow as tf
    REAL_TF = True
except ImportError:
    from tf_standin import tf
    REAL_TF = False


def shape(t):
    """A tensor's sizes as a list of ints."""
    return t.get_shape().as_list()


def log_sum_exp(v):
    top = tf.reduce_max(v)
    return top + tf.math.log(tf.reduce_sum(tf.exp(v - top)))


def lower_factor(entries, d):
    """The d×d strictly lower triangular matrix whose columns, left to right,
    hold ``entries`` in turn: column i takes the next d - i - 1 of them."""
    used = 0

    def column(i):
        nonlocal used
        count = d - i - 1
        col = tf.concat([tf.zeros(i + 1, dtype=tf.float64), entries[used:(used + count)]], 0)
        used += count
        return col

    return tf.stack(tuple(column(i) for i in range(d)), -1)


def mixture_loss(alphas, means, logdiag, lower, x, gamma):
    """Gaussian mixture negative log-likelihood with a Wishart prior: each
    component's inverse Cholesky factor is exp(logdiag) on the diagonal and
    ``lower`` below it, column by column."""
    k, d = means.shape
    n = shape(x)[0]
    diag = tf.exp(logdiag)
    factors = tf.stack(tuple(lower_factor(lower[c], d) for c in range(k)))
    centred = tf.stack(tuple(x[i] - means for i in range(n)))
    z = diag * centred + tf.linalg.matvec(factors, centred)
    inner = alphas + tf.reduce_sum(logdiag, 1) - 0.5 * tf.reduce_sum(z ** 2, 2)
    top = tf.reduce_max(inner, 1)
    fit = tf.reduce_sum(tf.transpose(tf.reduce_logsumexp(tf.transpose(inner) - top, 0) + top))
    const = tf.constant(-n * d * 0.5 * math.log(2 * math.pi), dtype=tf.float64)
    m = 1
    frob = tf.reduce_sum(diag ** 2, 1) + tf.reduce_sum(lower ** 2, 1)
    prior = tf.reduce_sum(0.5 * gamma * gamma * frob - m * tf.reduce_sum(logdiag, 1))
    wishart = (d + m + 1) * d * math.log(gamma / math.sqrt(2)) \
        - special.multigammaln(0.5 * (d + m + 1), d)
    return -(const + fit - n * tf.reduce_logsumexp(alphas)) + prior - k * wishart


def rotate(rot, X):
    """Rodrigues' rotation of X by the angle-axis vector rot (the first-order
    form at rot = 0)."""
    def turned():
        theta = tf.math.sqrt(sq)
        c, s = tf.math.cos(theta), tf.math.sin(theta)
        w = rot / theta
        return X * c + tf.linalg.cross(w, X) * s + w * (tf.tensordot(w, X, 1) * (1.0 - c))

    sq = tf.reduce_sum(rot ** 2)
    return tf.cond(tf.not_equal(sq, 0.0), turned, lambda: X + tf.linalg.cross(rot, X))


def reprojection(cam, X, w, feat):
    """Bundle adjustment's weighted reprojection error of one observation."""
    moved = rotate(cam[0:3], X - cam[3:6])
    proj = moved[0:2] / moved[2]
    rsq = tf.reduce_sum(proj ** 2)
    distorted = proj * (1.0 + cam[9] * rsq + cam[10] * rsq * rsq)
    return w * (distorted * cam[6] + cam[7:9] - feat)


def reprojection_cost(cam, X, w, feat):
    return tf.reduce_sum(reprojection(cam, X, w, feat) ** 2)


def cell(weight, bias, hidden, memory, inp):
    gates = tf.concat((inp, hidden, inp, hidden), 0) * weight + bias
    h = shape(hidden)[0]
    forget = tf.math.sigmoid(gates[0:h])
    ingate = tf.math.sigmoid(gates[h:2 * h])
    outgate = tf.math.sigmoid(gates[2 * h:3 * h])
    change = tf.math.tanh(gates[3 * h:])
    memory = memory * forget + ingate * change
    return outgate * tf.math.tanh(memory), memory


def lstm_loss(main, extra, state, sequence):
    """Average log-likelihood of a two-layer LSTM over a sequence, the time
    steps run by ``tf.while_loop``."""
    last = sequence.shape[0] - 1

    def more(t, state, inp, total, count):
        return tf.less(t, last)

    def step(t, state, inp, total, count):
        x = inp * extra[0]
        rows = []
        for i in range(0, shape(state)[0], 2):
            x, memory = cell(main[i], main[i + 1], state[i], state[i + 1], x)
            rows.append(x)
            rows.append(memory)
        state = tf.stack(rows, 0)
        pred = x * extra[1] + extra[2]
        norm = pred - tf.math.log(tf.reduce_sum(tf.exp(pred)) + 2)
        gold = sequence[t + 1]
        total += tf.reduce_sum(gold * norm)
        count += shape(gold)[0]
        return (t + 1, state, gold, total, count)

    _, _, _, total, count = tf.while_loop(
        more, step, [tf.constant(0), state, sequence[0], tf.constant(0.0, dtype=tf.float64), 0])
    return -total / tf.dtypes.cast(count, tf.float64)


def axis_rotation(aa):
    """The rotation matrix of an angle-axis vector (the identity near 0)."""
    n = tf.math.sqrt(tf.reduce_sum(aa ** 2, 0))

    def matrix():
        x, y, z = aa[0] / n, aa[1] / n, aa[2] / n
        s, c = tf.sin(n), tf.cos(n)
        return tf.convert_to_tensor(
            [[x * x + (1 - x * x) * c, x * y * (1 - c) - z * s, x * z * (1 - c) + y * s],
             [x * y * (1 - c) + z * s, y * y + (1 - y * y) * c, y * z * (1 - c) - x * s],
             [x * z * (1 - c) - y * s, z * y * (1 - c) + x * s, z * z + (1 - z * z) * c]],
            dtype=tf.float64)

    return tf.cond(n < 0.0001, lambda: tf.eye(3, dtype=tf.float64), matrix)


def pose_rows(theta):
    """Hand tracking's pose table: three given rows, then per finger a row
    of two angles, two rows of one, a row of zeros (a generator)."""
    def fingers(theta):
        at = 3
        zeros = tf.zeros((3,), dtype=tf.float64)
        for _ in range(2):
            yield tf.concat((theta[at:at + 2], tf.reshape(zeros[0], (1,))), 0)
            at += 2
            for _ in range(2):
                yield tf.concat((tf.reshape(theta[at], (1,)), zeros[:2]), 0)
                at += 1
            yield zeros

    head = tf.stack((theta[0:3], tf.ones((3,), dtype=tf.float64)))
    return tf.concat((head, tf.stack(tuple(fingers(theta)))), 0)


def posed_points(theta, points, weights, idx):
    """Points rotated by the first pose row, scaled, weighted and gathered."""
    rows = pose_rows(theta)
    R = axis_rotation(rows[0])
    R *= rows[1][0]
    moved = tf.transpose(R @ tf.transpose(points))
    mixed = tf.reduce_sum(moved * tf.reshape(weights, [*shape(weights), 1]), 0)
    return tf.reduce_sum(tf.gather(mixed, idx) ** 2) + tf.reduce_sum(rows ** 2)


def flattened(x):
    return tf.reshape(tf.transpose(x), [-1])


def helper_of_helper(x):
    return log_sum_exp(flattened(x) * 2.0)


def in_a_loop(x, n):
    total = tf.constant(0.0, dtype=tf.float64)
    for i in range(n):
        total += log_sum_exp(x * (i + 1.0))
    return total


def in_a_branch(x, flag):
    if flag > 0:
        return tf.reduce_sum(rotate(x, x + 1.0))
    return log_sum_exp(x)


def stop_gradient_used(x):
    return tf.reduce_sum(tf.stop_gradient(x) * x)


def cast_to_int(x):
    return tf.reduce_sum(tf.cast(x, tf.int32) * x)


def unmapped_function(x):
    return tf.reduce_sum(tf.math.zeta(x, 2.0))


def loop_in_a_lambda(x):
    f = lambda: tf.while_loop(lambda t: t < 3, lambda t: (t + 1,), [0])  # noqa: E731
    return tf.reduce_sum(x) * f()[0]


def counter_read_in_the_statement(x):
    j = 0

    def step(i):
        nonlocal j
        j += 1
        return x[i] * j

    return tf.reduce_sum(step(0) + j * x[1])
