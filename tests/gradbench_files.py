"""GradBench's own Python objectives, read from a GradBench checkout as they are
written (its PyTorch, JAX and TensorFlow tools), differentiated by s2s-ad on
NumPy float64 arrays and compared with two references computed by the
library the file was written for:

(a) the library's own derivative of the same function on float64 tensors
    (``torch.autograd``, ``jax.grad`` with ``jax_enable_x64``, which
    GradBench's JAX files switch on for the whole process when imported,
    ``tf.GradientTape``);
(b) central finite differences of the same function evaluated by the
    library, in float64, one input element at a time.

A vector-valued function is contracted with a random cotangent (or the unit
vector of its last component, for ode): s2s-ad's ``vjp`` and ``grad(...,
dout=cotangent)`` against the library's derivative of the contraction.

Nothing of GradBench is copied here: the directory holding GradBench's
``gradbench`` package (``python/gradbench`` in its repository) is named by
the environment variable S2S_AD_GRADBENCH. ``tests/test_gradbench_files.py``
runs the cases under pytest; ``python tests/gradbench_files.py`` prints the
table of differences and times (``--library torch`` for one library)."""

from __future__ import annotations

import importlib
import inspect
import os
import sys
import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from examples_gradbench import ba_args, ht_args, lstm_args

ENV = "S2S_AD_GRADBENCH"
LIBRARIES = ("torch", "jax", "tensorflow")
TOOL = {"torch": "pytorch", "jax": "jax", "tensorflow": "tensorflow"}
LIBRARY_TOL = 1e-10  # s2s-ad against the library's own derivative
FD_TOL = 1e-6        # s2s-ad against central differences (h = 1e-6)
VALUE_TOL = 1e-10    # the value s2s-ad's forward pass returns against the library's
ROWS: list[dict] = []  # one per case run, for the report (conftest prints them)


def root() -> str | None:
    """The directory named by S2S_AD_GRADBENCH (holding ``gradbench/``), or None."""
    path = os.environ.get(ENV)
    return os.path.abspath(path) if path else None


def check_root(path: str) -> str | None:
    """Why ``path`` is not GradBench's ``python/gradbench`` directory, or None."""
    tools = os.path.join(path, "gradbench", "tools")
    if not os.path.isfile(os.path.join(path, "gradbench", "__init__.py")):
        return f"{ENV}={path}: no gradbench/__init__.py there (name GradBench's python/gradbench)"
    if not os.path.isdir(tools):
        return f"{ENV}={path}: no gradbench/tools there"
    return None


def library(name: str):
    """The library module, or None when it is not installed."""
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


_GRADBENCH = {}  # GradBench's own top-level package, once imported


def load(lib: str, stem: str):
    """GradBench's gradbench/tools/<tool>/<stem>.py, imported unmodified.

    The repository's own examples/gradbench is a package of the same name, so
    ``sys.modules["gradbench"]`` is GradBench's only while its modules are
    imported; their submodules (``gradbench.tools...``, ``gradbench.wrap``,
    ``gradbench.adbench...``) stay in ``sys.modules``, under names the
    examples do not use."""
    name = f"gradbench.tools.{TOOL[lib]}.{stem}"
    if name in sys.modules:
        return sys.modules[name]
    path = root()
    before = sys.modules.pop("gradbench", None)
    sys.path.insert(0, path)
    try:
        if "package" in _GRADBENCH:
            sys.modules["gradbench"] = _GRADBENCH["package"]
        return importlib.import_module(name)
    finally:
        sys.path.remove(path)
        ours = sys.modules.pop("gradbench", None)
        if ours is not None:
            _GRADBENCH["package"] = ours
        if before is not None:
            sys.modules["gradbench"] = before


# ---------------------------------------------------------------- the inputs

def lse_data(rng):
    return {"x": rng.normal(size=10)}


def kmeans_data(rng, n=20, k=4, d=3):
    return {"points": rng.normal(size=(n, d)), "centers": rng.normal(size=(k, d))}


def gmm_data(m):
    """Keyword arguments of gmm_objective (d=4, k=3, n=6); ``m`` as the tool
    passes it (torch: a 0-d float64 tensor, here a 0-d array; JAX and
    TensorFlow: an int)."""
    def make(rng, d=4, k=3, n=6):
        return {"d": d, "k": k, "n": n, "x": rng.normal(size=(n, d)), "m": m, "gamma": 1.5,
                "alpha": rng.normal(size=k), "mu": rng.normal(size=(k, d)),
                "q": rng.normal(0, 0.5, (k, d)), "l": rng.normal(0, 0.5, (k, d * (d - 1) // 2))}
    return make


def llsq_data(rng):
    return {"x": rng.normal(size=16), "n": 64}


def ode_data(rng):
    return {"x": rng.uniform(0.5, 1.5, 6), "s": 10}


def ba_data(zero_rotation=False):
    """One observation: cam (rotation, center, focal, principal point,
    distortion), X, w (a 0-d array, as GradBench's per-observation tensor),
    feat."""
    def make(rng):
        cams, X, w, _, feats = ba_args(rng, 1, 1, 1)
        cam = cams[0].copy()
        if zero_rotation:
            cam[0:3] = 0.0
        return {"cam": cam, "X": X[0], "w": np.array(w[0]), "feat": feats[0]}
    return make


def w_err_data(rng):
    return {"w": np.array(rng.uniform(0.5, 1.5))}


def lstm_data(rng):
    main, extra, state, sequence = lstm_args(rng, 2, 3, 4)  # l=2, b=3, c=4
    return {"main_params": main, "extra_params": extra, "state": state, "sequence": sequence}


def ht_data(weights_by_bone, complicated=False, zero_angle_axis=False):
    """A synthetic hand (tests/examples_gradbench.ht_args: 22 bones with random
    parents and transforms, 10 vertices, 5 points). GradBench's torch tool
    takes the weights as (vertices, bones), its TensorFlow tool transposed."""
    def make(rng):
        theta, parents, rel, inv, pos, weights, points, corr = ht_args(rng, 10, 5)
        if zero_angle_axis:
            theta[0:3] = 0.0
        first = {"params": theta}
        rest = {"nbones": 22, "parents": parents, "base_relatives": rel,
                "inverse_base_absolutes": inv, "base_positions": pos,
                "weights": weights.T.copy() if weights_by_bone else weights,
                "mirror_factor": False, "points": points}
        if not complicated:
            return {**first, **rest, "correspondences": corr}
        triangles = rng.integers(0, 10, (8, 3))
        us = rng.uniform(0.1, 0.45, 2 * len(points))
        return {"all_params": np.concatenate([us, theta]), **rest,
                "correspondences": rng.integers(0, 8, len(points)), "triangles": triangles}
    return make


# ---------------------------------------------------------------- the cases

@dataclass
class Case:
    lib: str
    stem: str                 # gradbench/tools/<tool>/<stem>.py
    function: str
    data: Callable            # rng -> NumPy arguments by name, in call order
    wrt: tuple
    vector: bool = False      # returns an array: contracted with a cotangent
    last: bool = False        # the cotangent picks the last component (ode)
    wrapped: bool = False     # decorated with jax.jit: s2s-ad reads __wrapped__
    keywords: bool = False    # keyword-only parameters
    numpy: tuple = ()         # arrays the tool passes as NumPy arrays, not tensors
    size: str = ""
    label: str = ""
    xfail: str = ""           # a known regression (strict xfail), with its reason

    @property
    def id(self) -> str:
        extra = f"-{self.label}" if self.label else ""
        return f"{self.lib}-{self.stem}-{self.function}{extra}".replace(" ", "_").replace("=", "")


GMM = ("alpha", "mu", "q", "l")
CASES = [
    Case("torch", "lse", "logsumexp", lse_data, ("x",), size="n=10"),
    Case("torch", "kmeans", "costfun", kmeans_data, ("points", "centers"),
         size="20 points, 4 centers, d=3"),
    Case("torch", "gmm_objective", "gmm_objective", gmm_data(np.array(2.0)), GMM, keywords=True,
         size="d=4, k=3, n=6"),
    Case("torch", "ba_objective", "compute_reproj_err", ba_data(), ("cam", "X", "w"), vector=True,
         size="one observation"),
    Case("torch", "ba_objective", "compute_reproj_err", ba_data(True), ("cam", "X", "w"),
         vector=True, size="one observation", label="rot = 0"),
    Case("torch", "ba_objective", "compute_w_err", w_err_data, ("w",), size="one weight"),
    Case("torch", "lstm_objective", "lstm_objective", lstm_data, ("main_params", "extra_params"),
         size="l=2, b=3, c=4"),
    Case("torch", "ht_objective", "hand_objective", ht_data(False), ("params",), vector=True,
         size="22 bones, 10 vertices, 5 points"),
    Case("torch", "ht_objective", "hand_objective", ht_data(False, zero_angle_axis=True),
         ("params",), vector=True, size="22 bones, 10 vertices, 5 points",
         label="angle-axis = 0"),
    Case("torch", "ht_objective", "hand_objective_complicated", ht_data(False, True),
         ("all_params",), vector=True, numpy=("triangles",),
         size="22 bones, 10 vertices, 5 points, 8 triangles"),
    Case("jax", "lse", "logsumexp", lse_data, ("x",), size="n=10"),
    Case("jax", "kmeans", "costfun", kmeans_data, ("points", "centers"),
         size="20 points, 4 centers, d=3"),
    Case("jax", "llsq", "llsq", llsq_data, ("x",), wrapped=True, size="m=16, n=64"),
    Case("jax", "ode", "ode", ode_data, ("x",), vector=True, last=True, wrapped=True,
         size="n=6, s=10"),
    Case("jax", "gmm_objective", "gmm_objective", gmm_data(2), GMM, keywords=True,
         size="d=4, k=3, n=6"),
    Case("tensorflow", "lse", "logsumexp", lse_data, ("x",), size="n=10"),
    Case("tensorflow", "gmm_objective", "gmm_objective", gmm_data(2), GMM, keywords=True,
         size="d=4, k=3, n=6"),
    Case("tensorflow", "ba_objective", "compute_reproj_err", ba_data(), ("cam", "X", "w"),
         vector=True, size="one observation"),
    Case("tensorflow", "ba_objective", "compute_reproj_err", ba_data(True), ("cam", "X", "w"),
         vector=True, size="one observation", label="rot = 0"),
    Case("tensorflow", "ba_objective", "compute_w_err", w_err_data, ("w",), size="one weight"),
    Case("tensorflow", "lstm_objective", "lstm_objective", lstm_data,
         ("main_params", "extra_params"), size="l=2, b=3, c=4"),
    Case("tensorflow", "ht_objective", "ht_objective", ht_data(True), ("params",), vector=True,
         size="22 bones, 10 vertices, 5 points"),
    Case("tensorflow", "ht_objective", "ht_objective", ht_data(True, zero_angle_axis=True),
         ("params",), vector=True, size="22 bones, 10 vertices, 5 points",
         label="angle-axis = 0"),
    Case("tensorflow", "ht_objective", "ht_objective_complicated", ht_data(True, True),
         ("all_params",), vector=True, size="22 bones, 10 vertices, 5 points, 8 triangles"),
]

# The JAX functions decorated with jax.jit, which s2s-ad refuses at the decorator.
DECORATED = [("llsq", "llsq", llsq_data), ("ode", "ode", ode_data)]


# ------------------------------------------------- the library, on each side

def _tensors(lib: str, args: dict, wrt=(), numpy=()) -> dict:
    """The arguments as the tools pass them: float arrays as float64 tensors
    (torch: every array but those named in ``numpy``, since its tools convert
    the integer data too; TensorFlow and JAX: integer arrays stay NumPy
    arrays, as GradBench's TensorFlow ht tool passes them); numbers as they
    are."""
    out = {}
    for name, v in args.items():
        if not isinstance(v, np.ndarray) or name in numpy:
            out[name] = v
        elif lib == "torch":
            import torch
            out[name] = torch.tensor(v, requires_grad=name in wrt)
        elif v.dtype.kind != "f":
            out[name] = v
        elif lib == "jax":
            import jax.numpy as jnp
            out[name] = jnp.asarray(v)
        else:
            import tensorflow as tf
            out[name] = tf.constant(v, dtype=tf.float64)
    return out


def _call(f, args: dict, keywords: bool):
    return f(**args) if keywords else f(*args.values())


class _Float64:
    """torch's default dtype is float64 while its tools run (GradBench's torch
    files make some tensors without ``dtype=``: ``torch.eye(3)``)."""

    def __init__(self, lib):
        self.lib = lib

    def __enter__(self):
        if self.lib == "torch":
            import torch
            self.before = torch.get_default_dtype()
            torch.set_default_dtype(torch.float64)

    def __exit__(self, *exc):
        if self.lib == "torch":
            import torch
            torch.set_default_dtype(self.before)


class Reference:
    """The function ``f`` at ``args``, evaluated and differentiated by its own
    library, in float64; ``value(arrays)`` with the differentiated arrays
    replaced. JAX and TensorFlow evaluate the function compiled (``jax.jit``,
    ``tf.function``) with every other argument held fixed: eager JAX compiles
    each operation at its first use (seconds for gmm), eager TensorFlow costs
    tens of milliseconds a call for ht, and the differences call the function
    twice per element. Their derivatives are ``jax.grad`` of the same
    function, and ``tf.GradientTape`` run eagerly."""

    def __init__(self, case: Case, f, args: dict):
        self.case, self.f, self.args = case, f, args
        self.compiled = None
        if case.lib in ("jax", "tensorflow"):
            if case.lib == "jax":
                import jax
                jax.config.update("jax_enable_x64", True)
                compile = jax.jit
            else:
                import tensorflow as tf
                compile = tf.function
            fixed = _tensors(case.lib, args)

            def of(*ws):
                return _call(f, {**fixed, **dict(zip(case.wrt, ws))}, case.keywords)
            self.of = of
            self.compiled = compile(of)

    def value(self, arrays: dict | None = None) -> np.ndarray:
        args = {**self.args, **(arrays or {})}
        if self.compiled is not None:
            ws = _tensors(self.case.lib, {w: args[w] for w in self.case.wrt})
            return np.asarray(self.compiled(*ws.values()), dtype=np.float64)
        with _Float64(self.case.lib):
            out = _call(self.f, _tensors(self.case.lib, args, numpy=self.case.numpy),
                        self.case.keywords)
            if self.case.lib == "torch":
                return out.detach().numpy().astype(np.float64)
            return np.asarray(out, dtype=np.float64)

    def gradient(self, cotangent) -> list:
        """The library's derivative of the function (contracted with the
        cotangent when one is given) with respect to ``case.wrt``."""
        case, args = self.case, self.args
        if case.lib == "jax":
            import jax

            def contracted(*ws):
                out = self.of(*ws)
                return out if cotangent is None else (out * cotangent).sum()
            grad = jax.jit(jax.grad(contracted, argnums=tuple(range(len(case.wrt)))))
            return [np.asarray(g) for g in grad(*(args[w] for w in case.wrt))]
        with _Float64(case.lib):
            if case.lib == "torch":
                t = _tensors("torch", args, case.wrt, case.numpy)
                out = _call(self.f, t, case.keywords)
                if cotangent is not None:
                    out = (out * _tensors("torch", {"c": cotangent})["c"]).sum()
                out.backward()
                return [t[w].grad.numpy().copy() for w in case.wrt]
            import tensorflow as tf
            t = _tensors("tensorflow", args)
            with tf.GradientTape() as tape:
                for w in case.wrt:
                    tape.watch(t[w])
                out = _call(self.f, t, case.keywords)
                if cotangent is not None:
                    out = tf.reduce_sum(out * tf.constant(cotangent, dtype=tf.float64))
            return [g.numpy() for g in tape.gradient(out, [t[w] for w in case.wrt])]

    def differences(self, cotangent, h: float = 1e-6) -> list:
        """Central differences of the library's evaluation, one element at a
        time."""
        def at(arrays):
            out = self.value(arrays)
            return float(np.sum(out if cotangent is None else out * cotangent))
        grads = []
        for w in self.case.wrt:
            x = np.asarray(self.args[w], dtype=np.float64)
            g = np.zeros_like(x)
            for k in np.ndindex(*x.shape):
                up, down = x.copy(), x.copy()
                up[k] += h
                down[k] -= h
                g[k] = (at({w: up}) - at({w: down})) / (2 * h)
            grads.append(g)
        return grads


def relative(got: list, expected: list) -> float:
    """max |got − expected| / max |expected|, over every gradient at once."""
    diff = max(float(np.max(np.abs(np.asarray(a, dtype=np.float64) - b), initial=0.0))
               for a, b in zip(got, expected))
    scale = max(float(np.max(np.abs(b), initial=0.0)) for b in expected)
    return diff / scale if scale > 0 else diff


# ---------------------------------------------------------------- one case

@dataclass
class Result:
    value: float
    vs_library: float
    vs_fd: float
    entry_points: float = 0.0  # vjp against grad(..., dout=) (vector-valued cases)
    seconds: float = 0.0
    gradients: list = field(default_factory=list)


def run(case: Case) -> Result:
    """Differentiate the case with s2s-ad and compare with (a) and (b)."""
    import s2s_ad

    start = time.perf_counter()
    f = getattr(load(case.lib, case.stem), case.function)
    fn = f.__wrapped__ if case.wrapped else f
    rng = np.random.default_rng(1000 + sum(map(ord, case.id)))
    args = case.data(rng)
    ref = Reference(case, f, args)
    expected_value = ref.value()
    cotangent = None
    entry = 0.0
    if not case.vector:
        vg = s2s_ad.value_and_grad(fn, wrt=case.wrt)
        value, got = vg(**args) if case.keywords else vg(*args.values())
        got = list(got)
    else:
        cotangent = rng.normal(size=expected_value.shape)
        if case.last:
            cotangent = np.zeros(expected_value.shape)
            cotangent[-1] = 1.0
        value, pull = s2s_ad.vjp(fn, **args) if case.keywords else s2s_ad.vjp(fn, *args.values())
        names = list(inspect.signature(fn).parameters)
        cts = pull(cotangent)
        got = [cts[names.index(w)] for w in case.wrt]
        g = s2s_ad.grad(fn, wrt=case.wrt)
        entry = relative(list(g(**args, **{seed_keyword(g, names): cotangent})), got)
    value_error = float(np.max(np.abs(np.asarray(value) - expected_value)))
    scale = max(1.0, float(np.max(np.abs(expected_value))))
    assert value_error <= VALUE_TOL * scale, (
        f"{case.id}: s2s-ad's value differs from the library's by {value_error:.3g}")
    for g, w in zip(got, case.wrt):
        assert np.shape(g) == np.shape(args[w]), (case.id, w, np.shape(g), np.shape(args[w]))
        assert np.all(np.isfinite(g)), f"{case.id}: s2s-ad's gradient for {w} is not finite: {g}"
    result = Result(float(np.sum(value if cotangent is None else value * cotangent)),
                    relative(got, ref.gradient(cotangent)),
                    relative(got, ref.differences(cotangent)), entry,
                    time.perf_counter() - start, got)
    ROWS.append({"case": case, "result": result})
    return result


def seed_keyword(g, names) -> str:
    """The keyword-only seed of the generated gradient ``g``, named after the
    result (``dout``, ``derr``, ...); a gradient that generates its code for
    the arrays of each call shows no signature yet, and its seed is ``dout``
    for the cases here (whose functions return an expression)."""
    params = inspect.signature(g).parameters.values()
    seeds = [p.name for p in params if p.kind is p.KEYWORD_ONLY and p.name not in names]
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return "dout"
    assert len(seeds) == 1, seeds
    return seeds[0]


def refusal(stem: str, name: str, data) -> str:
    """s2s-ad's message for GradBench's jax.jit-decorated function (it must
    refuse); raises AssertionError when it does not."""
    import s2s_ad

    f = getattr(load("jax", stem), name)
    args = data(np.random.default_rng(0))
    try:
        s2s_ad.grad(f)(*args.values())
    except s2s_ad.errors.S2SError as e:
        return str(e)
    raise AssertionError(f"{stem}.{name}: s2s-ad differentiated a jax.jit-compiled function")


# ---------------------------------------------------------------- the report

def table(rows: list) -> str:
    lines = ["| library | file, function | size | s2s-ad against the library's derivative "
             "| against central differences | time |", "| --- | --- | --- | --- | --- | --- |"]
    for row in rows:
        c, r = row["case"], row["result"]
        how = "vjp" if c.vector else "value_and_grad"
        label = f" ({c.label})" if c.label else ""
        lines.append(f"| {c.lib} | `{c.stem}.py`, `{c.function}`{label} ({how}) | {c.size} | "
                     f"{r.vs_library:.1e} | {r.vs_fd:.1e} | {r.seconds:.2f} s |")
    return "\n".join(lines)


def main(argv=None) -> int:
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--library", choices=LIBRARIES, action="append")
    ns = parser.parse_args(argv)
    path = root()
    if path is None or check_root(path):
        print(check_root(path) if path else f"set {ENV} to GradBench's python/gradbench")
        return 2
    failed = 0
    for lib in ns.library or LIBRARIES:
        if library(lib) is None:
            print(f"{lib}: not installed, skipped")
            continue
        for case in CASES:
            if case.lib != lib:
                continue
            try:
                r = run(case)
                bad = r.vs_library > LIBRARY_TOL or r.vs_fd > FD_TOL or r.entry_points > 1e-12
            except Exception as e:  # report every case, then fail
                print(f"{case.id}: {type(e).__name__}: {e}")
                bad = True
            failed += bad
        if lib == "jax":
            for stem, name, data in DECORATED:
                try:
                    print(f"jax {stem}.{name} refused: {refusal(stem, name, data).splitlines()[0]}")
                except AssertionError as e:
                    print(e)
                    failed += 1
    print(table(ROWS))
    print(f"{len(ROWS)} cases run, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
