"""TensorFlow-flavoured code (tests/tf_src.py) read as NumPy: TensorFlow
functions rewritten as NumPy with TensorFlow's meaning, ``tf.cond`` as a
conditional expression, ``tf.while_loop`` as a loop, a ``nonlocal`` counter
passed in and out, a generator consumed by ``tuple`` inlined. Each gradient
is compared with central differences (float64) of the function itself, run
by TensorFlow where it is installed and on tests/tf_standin.py otherwise, and
with tf.GradientTape where TensorFlow is installed; at the top level, in
helpers, a helper of a helper, a loop, a branch, through ``s2s_ad.vjp``, and
through the CLI's ``grad -o`` file imported in a fresh interpreter. The
generated code calls NumPy only."""

import inspect
import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import s2s_ad
import tf_src as m
from array_oracle import fd_gradient, make_function
from s2s_ad.errors import SourceError

HERE = os.path.dirname(__file__)
ROOT = os.path.dirname(HERE)
rng = np.random.default_rng(18)
k, d, n = 3, 4, 5
CAMERA = np.concatenate([0.1 * rng.normal(size=3), rng.normal(size=3), [1.5],
                         rng.normal(size=4)])

CASES = {
    "log_sum_exp": ([rng.normal(size=6)], [0]),
    "mixture_loss": ([rng.normal(size=k), rng.normal(size=(k, d)), 0.3 * rng.normal(size=(k, d)),
                      rng.normal(size=(k, d * (d - 1) // 2)), rng.normal(size=(n, d)), 1.3],
                     [0, 1, 2, 3]),
    "reprojection_cost": ([CAMERA, rng.normal(size=3) + [0.0, 0.0, 5.0], 0.8,
                           rng.normal(size=2)], [0, 1, 2]),
    "lstm_loss": ([rng.normal(size=(4, 12)), rng.normal(size=(3, 3)), rng.normal(size=(4, 3)),
                   rng.normal(size=(4, 3))], [0, 1, 2]),
    "posed_points": ([0.3 * rng.normal(size=13), rng.normal(size=(4, 3)),
                      rng.random(size=(2, 4)), np.array([0, 2, 2])], [0, 1, 2]),
    "helper_of_helper": ([rng.normal(size=(2, 3))], [0]),
    "in_a_loop": ([rng.normal(size=3), 3], [0]),
    "in_a_branch": ([rng.normal(size=3), 1], [0]),
}


def tensor(a):
    """A float64 tensor (or the stand-in's) of a float array; others as they are."""
    if not isinstance(a, np.ndarray):
        return a
    if m.REAL_TF:
        return m.tf.constant(a, dtype=m.tf.float64 if a.dtype.kind == "f" else None)
    from tf_standin import Tensor
    return np.array(a).view(Tensor)


def original(f):
    """``f`` run on float64 tensors: the reference."""
    def run(*args):
        return np.asarray(f(*[tensor(a) for a in args]), dtype=np.float64)
    return run


def assert_matches_fd(f, args, wrt, got, *, rtol=1e-5, atol=1e-7):
    for i, g in zip(wrt, got):
        want = fd_gradient(original(f), args, i)
        assert np.shape(g) == np.shape(args[i])
        np.testing.assert_allclose(np.asarray(g, dtype=np.float64), want, rtol=rtol, atol=atol,
                                   err_msg=f"gradient with respect to argument {i}")


def gradient_tape(f, args, wrt):
    """tf.GradientTape's gradient of ``f`` at ``args`` (float64)."""
    tf = m.tf
    ts = [tf.Variable(np.asarray(a, dtype=np.float64)) if i in wrt else tensor(a)
          for i, a in enumerate(args)]
    with tf.GradientTape() as tape:
        out = tf.reduce_sum(f(*ts))
    return [np.zeros(np.shape(args[i])) if g is None else tf.convert_to_tensor(g).numpy()
            for i, g in zip(wrt, tape.gradient(out, [ts[i] for i in wrt]))]


@pytest.mark.parametrize("name", sorted(CASES))
def test_gradient_matches_references(name):
    args, wrt = CASES[name]
    f = getattr(m, name)
    value, got = s2s_ad.value_and_grad(f, wrt=tuple(wrt))(*args)
    assert_matches_fd(f, args, wrt, got)
    np.testing.assert_allclose(value, original(f)(*args), rtol=1e-12)
    if m.REAL_TF:
        for g, want in zip(got, gradient_tape(f, args, wrt)):
            np.testing.assert_allclose(g, want, rtol=1e-9, atol=1e-12)


def test_other_sizes_and_the_other_arms():
    """One generated module serves every shape, and each ``tf.cond``'s other
    arm: the rotation by a zero vector (the lambda), the identity for a tiny
    angle-axis (the lambda calling ``tf.eye``)."""
    args = [rng.normal(size=2), rng.normal(size=(2, 3)), 0.3 * rng.normal(size=(2, 3)),
            rng.normal(size=(2, 3)), rng.normal(size=(6, 3)), 0.7]
    assert_matches_fd(m.mixture_loss, args, [0, 1, 2, 3],
                      s2s_ad.grad(m.mixture_loss, wrt=(0, 1, 2, 3))(*args))
    cam = CAMERA.copy()
    cam[0:3] = 0.0
    args = [cam] + CASES["reprojection_cost"][0][1:]
    assert_matches_fd(m.reprojection_cost, args, [1, 2],
                      s2s_ad.grad(m.reprojection_cost, wrt=(1, 2))(*args))
    theta = CASES["posed_points"][0][0].copy()
    theta[0:3] = [1e-6, -2e-6, 5e-7]  # below tf.cond's 1e-4 (at 0, √ has no derivative)
    args = [theta] + CASES["posed_points"][0][1:]
    assert_matches_fd(m.posed_points, args, [0, 1],
                      s2s_ad.grad(m.posed_points, wrt=(0, 1))(*args))
    args = [rng.normal(size=(3, 12)), rng.normal(size=(3, 3)), rng.normal(size=(2, 3)),
            rng.normal(size=(6, 3))]  # one layer, five steps of the while_loop
    assert_matches_fd(m.lstm_loss, args, [0, 2], s2s_ad.grad(m.lstm_loss, wrt=(0, 2))(*args))


def test_vjp_of_the_reprojection_error():
    """Bundle adjustment's residual is a vector: ``vjp`` gives the Jacobian's
    rows, against central differences of ``v · f``."""
    args = CASES["reprojection_cost"][0]
    value, vjp_fn = s2s_ad.vjp(m.reprojection, *args)
    np.testing.assert_allclose(value, original(m.reprojection)(*args), rtol=1e-12)
    v = np.array([0.3, -1.2])
    cotangents = vjp_fn(v)

    def along(*a):
        return np.dot(v, original(m.reprojection)(*a))
    for i in (0, 1, 2):
        np.testing.assert_allclose(cotangents[i], fd_gradient(along, args, i), rtol=1e-5,
                                   atol=1e-7)


@pytest.mark.parametrize("name", ["log_sum_exp", "mixture_loss", "lstm_loss"])
def test_jvp_matches_finite_differences(name):
    """Forward mode reads the same rewritten code (the while loop, the
    threaded counter)."""
    args, wrt = CASES[name]
    f = getattr(m, name)
    direction = rng.normal(size=np.shape(args[0]))
    first = list(inspect.signature(f).parameters)[0]
    value, tangent = s2s_ad.jvp(f, wrt=0)(*args, **{f"d{first}": direction})
    want = np.sum(fd_gradient(original(f), args, 0) * direction)
    np.testing.assert_allclose(tangent, want, rtol=1e-5, atol=1e-7)


def test_generated_code_calls_numpy_only():
    for name in ("mixture_loss", "lstm_loss", "posed_points", "reprojection_cost"):
        f = getattr(m, name)
        args, wrt = CASES[name]
        arrays = [p for p, a in zip(inspect.signature(f).parameters, args)
                  if isinstance(a, np.ndarray)]
        text = s2s_ad.gradient_source(f, wrt=wrt, arrays=arrays)
        code = "\n".join(line.split("#")[0] for line in text.splitlines())
        code = re.sub(r"'[^'\n]*'|\"[^\"\n]*\"", "''", code)
        assert not re.search(r"\btf\b|tensorflow", code), name
        assert "import numpy" in text


def test_grad_o_file_in_a_fresh_interpreter(tmp_path):
    out = tmp_path / "grad_tf_lstm_loss.py"
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "grad", "tests/tf_src.py:lstm_loss",
                           "--wrt", "main,extra", "--array", "main,extra,state,sequence",
                           "-o", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    args = CASES["lstm_loss"][0]
    script = textwrap.dedent(f"""
        import sys
        import numpy as np
        sys.path[:0] = [{HERE!r}, {str(tmp_path)!r}]
        import grad_tf_lstm_loss as g
        args = [np.array(a) for a in {[a.tolist() for a in args]!r}]
        got = g.grad_lstm_loss(*args)
        assert "tensorflow" not in sys.modules, "the generated module imported tensorflow"
        from array_oracle import fd_gradient
        from test_tf_numpy import original
        import tf_src as m
        for i in (0, 1):
            want = fd_gradient(original(m.lstm_loss), args, i)
            np.testing.assert_allclose(got[i], want, rtol=1e-5, atol=1e-7)
        print("ok")
    """)
    run = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True,
                         text=True, timeout=300, env={**os.environ, "S2S_TF_STANDIN": "1"})
    assert run.returncode == 0 and "ok" in run.stdout, run.stderr


REFUSED = {
    "stop_gradient_used": ("tf.stop_gradient", "pass it as an argument"),
    "cast_to_int": ("tf.cast is read to tf.float64 only", "integer"),
    "unmapped_function": ("tf.math.zeta", "TensorFlow-flavoured code"),
    "loop_in_a_lambda": ("tf.while_loop inside a lambda", "assign it to a name first"),
    "counter_read_in_the_statement": ("`nonlocal` is not supported", "return the new value"),
}


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_with_location(name):
    what, more = REFUSED[name]
    f = getattr(m, name)
    with pytest.raises(SourceError) as info:
        s2s_ad.grad(f)(rng.normal(size=3))
    text = str(info.value)
    assert "tf_src.py:" in text and "^" in text and what in text and more in text, text


def _tf_function(body: str, params: str = "x, y"):
    return make_function(f"def f({params}):\n    {body}\n", env={"tf": m.tf})


@pytest.mark.parametrize("body, what", [
    ("return tf.reduce_sum(tf.linalg.matvec(x, y, transpose_a=True))", "`transpose_a=`"),
    ("return tf.reduce_sum(tf.constant(x, dtype=tf.float32))", "read for tf.float64 only"),
    ("return tf.reduce_sum(tf.while_loop(lambda t: t < 3, lambda t: (t + 1,), [0], "
     "maximum_iterations=2)[0] * x)", "`maximum_iterations=`"),
    ("return tf.reduce_sum(tf.while_loop(lambda t: t < 3, lambda t: (t + 1,), x)[0])",
     "a list or tuple of the loop variables"),
])
def test_mapping_refused_with_location(body, what):
    f = _tf_function(body)
    with pytest.raises(SourceError) as info:
        s2s_ad.grad(f, wrt=0)(rng.normal(size=(3, 3)), rng.normal(size=3))
    text = str(info.value)
    assert ":2:" in text and "^" in text and what in text, text


def test_while_loop_with_lambdas_and_a_counter_in_a_plain_statement():
    """``tf.while_loop`` with lambdas for ``cond`` and ``body``; a nonlocal
    counter threaded through ``r = step(i)`` statements in a loop."""
    f = make_function(textwrap.dedent("""
        def f(x, n):
            t, acc = tf.while_loop(lambda i, a: tf.less(i, n), lambda i, a: (i + 1, a * x + 1.0),
                                   (0, tf.ones(3, dtype=tf.float64)))
            j = 0

            def step(i):
                nonlocal j
                j += 1
                return x[i] * j

            total = tf.reduce_sum(acc)
            for i in range(3):
                r = step(i)
                total += r
            return total + tf.cast(t, tf.float64)
    """), env={"tf": m.tf})
    x = rng.normal(size=3)
    got = s2s_ad.grad(f, wrt=0)(x, 4)
    np.testing.assert_allclose(got, fd_gradient(original(f), [x, 4], 0), rtol=1e-6, atol=1e-9)


def test_docs_name_every_mapping():
    """docs/numpy.md's "TensorFlow-flavoured code" table names each
    TensorFlow function and tensor method the rewrite reads."""
    from s2s_ad.frontend.tf_table import FUNCTIONS, METHODS
    with open(os.path.join(ROOT, "docs", "numpy.md"), encoding="utf-8") as f:
        page = f.read()
    section = page.split("## TensorFlow-flavoured code", 1)[1].split("\n## ", 1)[0]
    words = set(re.findall(r"[A-Za-z_][A-Za-z_0-9]*", section))
    missing = sorted(k for k in set(FUNCTIONS) | set(METHODS) | {"cond", "while_loop"}
                     if k.rpartition(".")[2] not in words)
    assert not missing, missing


# Each mapping of the table in docs/numpy.md ("TensorFlow-flavoured code"), as
# one expression of x (3x4, entries in (0.5, 1.5)) and y (3x4, normal), against
# tf.GradientTape and central differences of the TensorFlow expression
# (TensorFlow needed: the stand-in has only the corpus's functions).
MAPPINGS = [
    "tf.exp(x) + tf.math.log(x) + tf.sqrt(x) + tf.math.rsqrt(x) + tf.square(y) + tf.math.square(y)",
    "tf.sin(y) * tf.cos(y) + tf.math.tan(0.3 * y) + tf.sinh(y) - tf.math.cosh(y) + tf.tanh(y)",
    "tf.math.asin(0.5 * x - 0.4) + tf.math.acos(0.3 * x - 0.2) + tf.math.atan(y) + tf.math.negative(y)",
    "tf.math.log1p(x) + tf.math.expm1(y) + tf.abs(y) * tf.sign(y) + tf.math.reciprocal(x)",
    "tf.sigmoid(y) + tf.math.sigmoid(2 * y) + tf.nn.sigmoid(y) + tf.nn.relu(y) + tf.math.softplus(y) + tf.nn.softplus(-y)",
    "tf.math.lgamma(x) + tf.math.erf(y) + tf.math.asinh(y) + tf.math.atanh(0.3 * x - 0.2)",
    "tf.add(x, y) * tf.subtract(x, y) + tf.multiply(x, y) - tf.divide(y, x) + tf.math.truediv(y, x) + tf.pow(x, 3.0)",
    "tf.maximum(x, y) - tf.minimum(x, y) + tf.math.atan2(y, x) + tf.where(tf.greater(y, 0.0), x, y)",
    "tf.where(tf.less_equal(y, 0.1), x, y) + tf.where(tf.greater_equal(x, 1.0), y, x) + tf.where(tf.equal(x, x), y, x)",
    "tf.reduce_sum(x, 1, keepdims=True) + tf.reduce_mean(y, 0) + tf.reduce_prod(x, axis=-1, keepdims=True)",
    "tf.reduce_max(y, 1, True) + tf.reduce_min(y, 0) + tf.math.reduce_sum(x) + tf.math.reduce_max(y)",
    "tf.math.reduce_std(y, 1, True) + tf.math.reduce_variance(y, 0) + tf.math.reduce_std(y)",
    "tf.reduce_logsumexp(y, 1, True) + tf.math.reduce_logsumexp(y, axis=0) + tf.reduce_logsumexp(y)",
    "tf.cumsum(y, 1) + tf.math.cumsum(y, axis=0) + tf.math.cumprod(x, 1)",
    "tf.matmul(x, tf.transpose(y)) @ x + tf.linalg.matmul(y, tf.transpose(x, perm=[1, 0])) @ y",
    "tf.reduce_sum(tf.linalg.matvec(tf.reshape(tf.tile(x, [2, 1]), (2, 3, 4)), y[:2])) + tf.linalg.matvec(x, y[0]) + tf.linalg.cross(x[:, :3], y[:, 1:])[:, :1]",
    "tf.tensordot(x, y, 1 + 1) + tf.tensordot(x[0], y[1], 1) + tf.linalg.trace(x[:, :3]) + tf.linalg.det(x[:, 1:]) + tf.reduce_sum(tf.linalg.inv(x[:, :3] + 3 * tf.eye(3, dtype=tf.float64)))",
    "tf.concat([x, y], 1)[:, 2:6] + tf.concat((x, y), axis=0)[2:5] + tf.stack((x, y), -1)[..., 1] + tf.stack([x, y])[0]",
    "tf.reshape(tf.transpose(x), [-1])[:4] + tf.squeeze(tf.expand_dims(y, 0), 0) + tf.squeeze(x[:, :1], axis=1)[:, None]",
    "tf.gather(x, [2, 0, 0]) + tf.gather(y, [1, 1, 3, 0], axis=1) + tf.cast(tf.shape(x)[0], tf.float64) * y + tf.cast(tf.size(x), tf.float64) + tf.cast(tf.rank(x), tf.float64)",
    "tf.zeros((3, 4), dtype=tf.float64) + tf.ones([3, 4], dtype=tf.float64) * x + tf.zeros_like(x) + tf.ones_like(y) * y + tf.fill([3, 4], tf.constant(2.0, dtype=tf.float64)) * x",
    "tf.range(4, dtype=tf.float64) * x + tf.cast(tf.range(1, 5), tf.float64) * y + tf.eye(3, 4, dtype=tf.float64) * y + tf.cast(tf.linspace(0.0, 3.0, 4), tf.float64) * x",
    "tf.constant([[1.0, 2.0, 3.0, 4.0]], dtype=tf.float64) * x + tf.constant(2.5, dtype=tf.float64) * y + tf.constant(1.5, shape=(3, 4), dtype=tf.float64) * x + tf.convert_to_tensor([1.0, 2.0, 3.0, 4.0], dtype=tf.float64) * y + tf.constant([1, 2, 3, 4], shape=(1, 4), dtype=tf.float64) * x",
    "tf.dtypes.cast(x, tf.float64) * tf.cast(y, tf.float64) + tf.cond(tf.reduce_sum(x) > 0.0, lambda: x * y, lambda: x - y)",
]


@pytest.mark.parametrize("expr", MAPPINGS)
def test_mapping(expr):
    if not m.REAL_TF:
        pytest.skip("TensorFlow is not installed: the mapping table is checked against it")
    f = _tf_function(f"return tf.reduce_sum({expr})")
    x = rng.uniform(0.5, 1.5, size=(3, 4))
    y = rng.normal(size=(3, 4))
    got = s2s_ad.grad(f, wrt=(0, 1))(x, y)
    for i, (g, w) in enumerate(zip(got, gradient_tape(f, [x, y], [0, 1]))):
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-10)
        np.testing.assert_allclose(g, fd_gradient(original(f), [x, y], i), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(s2s_ad.value_and_grad(f, wrt=0)(x, y)[0], original(f)(x, y),
                               rtol=1e-12)
