"""Negations folded into the statement that made the negated value
(s2s_ad.emit.signs): gradients in every position against finite
differences, and the folds the generated code shows."""

import subprocess
import sys

import numpy as np
import pytest

import s2s_ad
from array_oracle import assert_gradients, fd_gradient, rand
from modules import import_source, run_generated

RNG = np.random.default_rng(1818)

SOURCE = '''import math

import numpy as np


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def gate(w, x):
    return sigmoid(w * x) * np.tanh(x)


def gate_of_gate(w, x):
    return gate(w, x) + gate(x, w) * 0.5


def top(w, x):
    s = 1.0 / (1.0 + np.exp(-(w * x)))
    return np.sum(s * x)


def helper(w, x):
    return np.sum(gate(w, x) ** 2)


def helper_of_helper(w, x):
    return np.sum(gate_of_gate(w, x) ** 2)


def loop(w, x):
    for _ in range(3):
        x = gate(w, x) + x
    return np.sum(x)


def branch(w, x):
    if np.sum(w) > 0:
        t = -(np.exp(-x) / w)
    else:
        t = -(w * -np.sin(x))
    return np.sum(t * t + t)


def read_twice(w, x):
    t = -w * x
    u = -t
    return np.sum(u * t)


def distances(w, x):
    d = w[:, None] + x[None, :] - 2 * np.outer(w, x)
    return np.sum(np.min(d, axis=0))


def scaled_twice(w, x):
    t = -(w * x)
    return np.sum(t * 3.0 + t * x)


def scalars(a, b):
    return 1.0 / (1.0 + math.exp(-a * b)) - (-a / b) * -math.sin(b)
'''

ARRAY_NAMES = ["top", "helper", "helper_of_helper", "loop", "branch", "read_twice", "distances",
               "scaled_twice"]


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    return import_source(tmp_path_factory.mktemp("signs"), SOURCE, "signs_src")


def _args():
    return [rand(RNG, (5,), 0.5, 2.0), rand(RNG, (5,))]


@pytest.mark.parametrize("name", ARRAY_NAMES)
def test_gradient(module, name):
    assert_gradients(getattr(module, name), _args(), [0, 1])


def test_other_branch(module):
    w, x = _args()
    assert_gradients(module.branch, [-w, x], [0, 1])


def test_scalars(module):
    from oracle import close, fd_gradient as fd
    for a, b in [(0.3, 1.7), (-1.2, 0.8), (2.0, -0.6)]:
        got = s2s_ad.grad(module.scalars, wrt=[0, 1])(a, b)
        for g, e in zip(got, fd(module.scalars, [a, b], [0, 1])):
            assert close(g, e), (g, e)


def test_the_sigmoid_backward_has_no_negation(module):
    text = s2s_ad.gradient_source(module.helper, wrt=[0, 1])
    bwd = text[text.index("def gate_bwd"):]
    assert "the sign folded in where it was made" in bwd
    code = "\n".join(line.split("#")[0] for line in bwd.splitlines())
    assert "(-" not in code and "= -" not in code  # the sigmoid's two minus signs cancel


def test_a_value_read_twice_keeps_its_sign(module):
    text = s2s_ad.gradient_source(module.read_twice, wrt=[0, 1])
    assert "folded" not in text


def test_a_negated_adjoint_gives_its_sign_to_a_number(module):
    """a - 2 * b: the adjoint of 2 * b is -g, times 2; the sign goes onto the
    number (dt * -2), no negation of its own."""
    text = s2s_ad.gradient_source(module.distances, wrt=[0, 1])
    assert "* -2 " in text and "a later number takes the sign" in text
    code = "\n".join(line.split("#")[0] for line in text[text.index("# reverse sweep"):].splitlines())
    assert "-(" not in code and "= -" not in code


def test_a_negated_adjoint_read_twice_keeps_its_sign(module):
    text = s2s_ad.gradient_source(module.scaled_twice, wrt=[0, 1])
    assert "a later number takes the sign" not in text


def test_the_sign_on_the_number_gives_the_same_bits(module, monkeypatch):
    """-(g) * 2 and g * -2 are one number: the folded gradient equals the one
    computed with the negation, element for element."""
    from s2s_ad.emit import signs
    w, x = _args()
    folded = s2s_ad.gradient_source(module.distances, wrt=[0, 1])
    monkeypatch.setattr(signs, "run", lambda stmts, counts: None)
    plain = s2s_ad.gradient_source(module.distances, wrt=[0, 1])
    assert plain != folded and "* -2 " not in plain
    results = []
    for text in (folded, plain):
        namespace = {}
        exec(compile(text, "<generated>", "exec"), namespace)
        results.append(namespace["grad_distances"](w, x))
    for a, b in zip(*results):
        assert np.array_equal(a, b)


def test_vjp(module):
    w, x = _args()
    ct = rand(RNG, (5,))
    _, pullback = s2s_ad.vjp(module.gate_of_gate, w, x)
    got = pullback(ct)

    def dotted(*a):
        return float(np.sum(module.gate_of_gate(*a) * ct))
    for i, g in enumerate(got):
        np.testing.assert_allclose(g, fd_gradient(dotted, [w, x], i), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("name", ["loop", "branch"])
def test_cli_module_in_a_fresh_interpreter(module, name, tmp_path):
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "grad",
                           f"{module.__file__}:{name}", "-o", str(tmp_path / "g.py")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    args = _args()
    got = run_generated(tmp_path, "g", f"grad_{name}", args)
    f = getattr(module, name)
    for i, g in enumerate(got):
        np.testing.assert_allclose(g, fd_gradient(f, args, i), rtol=1e-5, atol=1e-7)
