"""The command line against the API on every example (issue 16's differential
soak; the fuzzer's ``cli`` check does the same for random programs).

For each function of ``examples/``: ``s2s-ad grad FILE:FN [--wrt ...] -o
OUT`` (the command's ``main``), then every ``OUT`` imported and called in one
fresh interpreter (no repository on ``sys.path``, the point passed by pickle);
its gradient must be the one ``s2s_ad.grad`` gives in this process, to 1e-12
relative and with the same structure (a number, a tuple, a list), and both
must agree with central finite differences. A test fails when an example
defines a function the table below leaves out."""

import ast
import importlib.util
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest

import s2s_ad
from s2s_ad import cli
from array_oracle import fd_gradient

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")
RNG = np.random.default_rng(16)


def _mlp_point():
    from examples_numpy import mlp_args
    return dict(zip(["W1", "b1", "W2", "b2", "X", "Y"], mlp_args(RNG, 6, 4, 5, 3)))


def _softmax_point():
    return {"W": RNG.normal(size=(4, 3)), "X": RNG.normal(size=(5, 4)),
            "T": np.eye(3)[RNG.integers(0, 3, 5)]}


def _net_point(tied=False):
    W, V = RNG.normal(size=(4, 3)), RNG.normal(size=(2, 4))
    x, t = RNG.normal(size=3), RNG.normal(size=3 if tied else 2)
    return {"W": W, "x": x, "t": t} if tied else {"W": W, "V": V, "x": x, "t": t}


# file -> [(function, point, wrt (None: all), extra CLI options)]
CASES = {
    "black_scholes.py": [("call_price", dict(s=100.0, k=95.0, t=0.5, r=0.03, sigma=0.2),
                          ("s", "sigma"), []),
                         ("call_price", dict(s=100.0, k=95.0, t=0.5, r=0.03, sigma=0.2),
                          None, [])],
    "gaussian_nll.py": [("nll", dict(x=1.0, mu=0.2, log_sigma=0.1), ("mu", "log_sigma"), []),
                        ("nll", dict(x=1.0, mu=0.2, log_sigma=0.1), "mu", [])],
    "horner.py": [("horner", dict(c=[1.0, -2.0, 0.5, 3.0], x=0.7), ("c", "x"),
                   ["--length", "c=4"])],
    "logistic_map.py": [("logistic", dict(x=0.3, r=3.2, n=6), ("x", "r"), [])],
    "mlp.py": [("mlp_loss", _mlp_point(), ("W1", "b1", "W2", "b2"), [])],
    "newton.py": [("cube_root", dict(c=5.0), None, [])],
    "pendulum.py": [("energy_after_step",
                     dict(theta=0.4, omega=-0.3, length=1.2, damping=0.1, dt=0.01),
                     ("theta", "omega", "damping"), []),
                    ("energy_after_step",
                     dict(theta=0.4, omega=-0.3, length=1.2, damping=0.1, dt=0.01),
                     None, [])],
    "piecewise.py": [("piecewise", dict(x=x, a=2.0), None, []) for x in (1.5, 0.5, -0.5)],
    "rosenbrock.py": [("rosenbrock4", dict(x0=0.3, x1=-0.2, x2=0.9, x3=1.1), None, [])],
    "seed_ggml.py": [("f", dict(a=1.5, x=-0.7), None, []),
                     ("f", dict(a=1.5, x=-0.7), "x", [])],
    "softmax_xent.py": [("softmax_xent", _softmax_point(), ("W", "X"), [])],
    "tied_weights.py": [("sigmoid", dict(u=RNG.normal(size=3)), None, ["--array", "u"]),
                        ("net", _net_point(), ("W", "V", "x"), []),
                        ("tied", _net_point(tied=True), ("W", "x"), [])],
    "kmeans.py": [("kmeans_cost", dict(C=RNG.normal(size=(3, 2)), P=RNG.normal(size=(8, 2))),
                   "C", [])],
    "saddle.py": [("f", dict(x1=0.3, x2=-0.2, y1=0.5, y2=0.1), None, [])],
    "spring_chain.py": [("energy", dict(y=RNG.normal(scale=0.3, size=8)), None, [])],
}

# Functions of the examples that are not differentiated themselves: drivers that call
# s2s-ad (run as scripts, tested in tests/test_examples_second.py) and an array-valued
# right-hand side (its Jacobian is tested there).
NOT_DIFFERENTIATED = {
    "kmeans.py": {"newton_direction", "kmeans"},
    "saddle.py": {"outer_value_and_grad", "saddle"},
    "spring_chain.py": {"rhs", "implicit_step", "simulate"},
}

RUNNER = """\
import importlib.util, pickle, sys
jobs = pickle.load(sys.stdin.buffer)
out = []
for path, name, point in jobs:
    spec = importlib.util.spec_from_file_location("cli_" + str(len(out)), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out.append(getattr(module, name)(**point))
pickle.dump(out, sys.stdout.buffer)
"""


def _functions(path):
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read())
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}


def _load(path):
    spec = importlib.util.spec_from_file_location("example_" + os.path.basename(path)[:-3], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _same(a, b):
    """Same structure (number, tuple, list, array) and values to 1e-12 relative."""
    if isinstance(a, (tuple, list)) or isinstance(b, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(map(_same, a, b))
    if isinstance(a, np.ndarray) != isinstance(b, np.ndarray):
        return False
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and bool(np.all(np.abs(a - b) <= 1e-12 * np.abs(b)))


def _wrt_names(fn, wrt):
    if wrt is None:
        return [p for p in fn.__code__.co_varnames[:fn.__code__.co_argcount]]
    return [wrt] if isinstance(wrt, str) else list(wrt)


def _finite_differences(fn, point, names):
    order = list(point)
    args = [point[k] for k in order]
    return [fd_gradient(lambda *a: fn(**dict(zip(order, a))), args, order.index(n))
            for n in names]


def test_every_example_function_is_in_the_table():
    files = sorted(f for f in os.listdir(EXAMPLES) if f.endswith(".py"))
    assert sorted(CASES) == files
    for name in files:
        covered = {case[0] for case in CASES[name]} | NOT_DIFFERENTIATED.get(name, set())
        assert _functions(os.path.join(EXAMPLES, name)) == covered, name


def test_cli_module_in_a_fresh_interpreter_gives_the_api_gradient(tmp_path):
    jobs, expected = [], []
    for file, cases in CASES.items():
        path = os.path.join(EXAMPLES, file)
        module = _load(path)
        for k, (name, point, wrt, options) in enumerate(cases):
            fn = getattr(module, name)
            out = str(tmp_path / f"{file[:-3]}_{name}_{k}.py")
            argv = ["grad", f"{path}:{name}", "-o", out, *options]
            if wrt is not None:
                argv += ["--wrt", wrt if isinstance(wrt, str) else ",".join(wrt)]
            assert cli.main(argv) == 0, argv
            got = s2s_ad.grad(fn, wrt)(**point)
            names = _wrt_names(fn, wrt)
            if name == "logistic":  # n is an integer (a range bound): no derivative
                names = [n for n in names if n != "n"]
            fd = _finite_differences(fn, point, names)
            items = list(got) if isinstance(got, tuple) else [got]
            assert len(items) == len(fd), (file, name)
            for g, want in zip(items, fd):
                np.testing.assert_allclose(np.asarray(g, dtype=float), want, rtol=1e-5,
                                           atol=1e-7, err_msg=f"{file}:{name} wrt={wrt}")
            jobs.append((out, f"grad_{name}", point))
            expected.append((f"{file}:{name} wrt={wrt}", got))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    run = subprocess.run([sys.executable, "-c", RUNNER], input=pickle.dumps(jobs),
                         capture_output=True, cwd=tmp_path, env=env, timeout=300)
    assert run.returncode == 0, run.stderr.decode(errors="replace")
    results = pickle.loads(run.stdout)
    assert len(results) == len(expected)
    different = [(label, cli_got, api_got) for (label, api_got), cli_got
                 in zip(expected, results) if not _same(cli_got, api_got)]
    assert not different


@pytest.mark.parametrize("a,b,same", [(1.0, 1.0 + 1e-13, True), (1.0, 1.0 + 1e-9, False),
                                      ((1.0,), 1.0, False), ([1.0], (1.0,), False),
                                      (np.ones(2), [1.0, 1.0], False),
                                      (np.ones(2), np.ones(3), False)])
def test_the_comparison_tells_structure_and_values_apart(a, b, same):
    assert _same(a, b) is same
