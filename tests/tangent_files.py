"""google/tangent's corpus of test functions (its ``tests/functions.py``), read
from a tangent checkout as written: every function not written for
TensorFlow is differentiated by s2s-ad — ``grad`` with respect to all its
differentiable parameters, ``vjp`` with a random cotangent, ``jvp`` with a
random tangent and, for the ``gradgrad_*`` functions tangent wrote to test
second derivatives and the functions of numbers ``a``, ``b``, ``c`` its
reverse-over-reverse test takes, ``hessian`` and ``grad`` of ``grad`` — each compared with
central finite differences of the same function in float64; or its refusal
is checked to be a located ``SourceError`` saying what is not supported.

Parameters are filled by name as tangent's own harness fills them
(``tests/conftest.py`` there): ``a``, ``b``, ``c`` numbers from -2 to 2,
``n`` an int from 1 to 3, ``x`` a vector of 3, 5 or 10, ``sqm`` a square
matrix of 1 or 5; its packed forms (a tuple of ``a, b, c``, a dict of them,
a dict of dicts) and the three functions tangent tests with arrays of its
own shapes (``logistic_regression``, ``rnn``, ``bilinear``) as its
``test_reverse_mode.py`` makes them. A point where the function does not
give a finite value, or where central differences of two step sizes
disagree (a jump: ``while_big`` at ``a = 0.1``), is not a point of
comparison.

``functions.py`` imports ``tangent`` (for ``insert_grad_of``, its
``@tangent.trace`` decorator and, inside three functions, its tape
``tangent.Stack``/``push``/``pop``): the loader puts a stand-in module
holding ``insert_grad_of`` and ``trace`` in ``sys.modules`` for the import
only, so the functions using tangent's own machinery are refused.
Nothing of tangent is copied here: the checkout is named by the environment
variable S2S_AD_TANGENT (the repository's root, holding
``tests/functions.py``). ``tests/test_tangent_files.py`` runs the functions
under pytest; ``python tests/tangent_files.py`` prints the table."""

from __future__ import annotations

import ast
import contextlib
import copy
import importlib.util
import inspect
import itertools
import os
import sys
import types
import warnings
from dataclasses import dataclass

import numpy as np

from autograd_files import leaves, rebuilt
from opt_in import modules_replaced

ENV = "S2S_AD_TANGENT"
FD_TOL = 1e-5     # against central differences, relative to the largest (at least 1e-6)
SECOND_TOL = 1e-4  # against second differences (tangent's own test allows 1e-2)
H = 1e-6          # the step of the first differences
MAX_POINTS = 12   # points per function, drawn from the harness's product of values
SCALARS = [-2.0, -1.5, -1.0, -0.5, -0.1, 0.1, 0.5, 1.0, 1.5, 2.0]


def root() -> str | None:
    """The directory named by S2S_AD_TANGENT, or None."""
    path = os.environ.get(ENV)
    return os.path.abspath(path) if path else None


def check_root(path: str) -> str | None:
    """Why ``path`` is not a tangent checkout, or None."""
    if not os.path.isfile(os.path.join(path, "tests", "functions.py")):
        return f"{ENV}={path}: no tests/functions.py there (name the root of a tangent checkout)"
    return None


def _insert_grad_of(*args):
    raise NotImplementedError("tangent's insert_grad_of: a stand-in for the import only")


def load() -> types.ModuleType:
    """tests/functions.py, imported as written, ``tangent`` a stand-in while
    it imports (``tensorflow``, when installed, is not imported: the module
    reads ``tf = None`` then, as without it)."""
    name = "tangent_functions"
    if name in sys.modules:
        return sys.modules[name]
    standin = types.ModuleType("tangent")
    standin.insert_grad_of = _insert_grad_of
    standin.trace = lambda fn: fn
    spec = importlib.util.spec_from_file_location(
        name, os.path.join(root(), "tests", "functions.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        with modules_replaced({"tangent": standin, "tensorflow": None}):
            spec.loader.exec_module(module)
        return module
    except BaseException:
        sys.modules.pop(name, None)
        raise


def _reads_tf(fn) -> bool:
    tree = ast.parse(inspect.getsource(fn).lstrip())
    return any(isinstance(n, ast.Name) and n.id == "tf" for n in ast.walk(tree))


def functions() -> list:
    """The module's own functions, those written for TensorFlow left out
    (``tfe_*`` and the two helpers they call, which read ``tf``)."""
    module = load()
    return [f for f in vars(module).values()
            if isinstance(f, types.FunctionType) and f.__module__ == module.__name__
            and not f.__name__.startswith("tfe_") and not _reads_tf(f)]


# ---------------------------------------------------------------- the points

def _by_name(name: str, rng) -> list:
    """The values tangent's harness gives a parameter of this name."""
    if name in ("a", "b", "c"):
        return SCALARS
    if name == "n":
        return [1, 2, 3]
    if name == "i":  # passthru_pack's index into (a, b, c)
        return [0, 1, 2]
    if name == "x":
        return [rng.normal(size=k) for k in (3, 5, 10)]
    if name == "sqm":
        return [rng.normal(size=(k, k)) for k in (1, 5)]
    if name == "abc_packed_in_tuple":
        return [tuple(float(v) for v in rng.choice(SCALARS, 3)) for _ in range(3)]
    if name == "val":
        return [dict(zip("abc", (float(v) for v in rng.choice(SCALARS, 3)))) for _ in range(3)]
    if name == "p":
        return [dict(i=dict(j=3.0, k=4.0)), dict(i=dict(j=-0.5, k=1.5))]
    raise KeyError(name)


def _own_shapes(fn_name: str, rng) -> list | None:
    """The points tangent's test_reverse_mode.py makes for the functions it
    tests with arrays of its own shapes."""
    if fn_name == "logistic_regression":
        label = np.zeros(5)
        label[1] = 1.0
        return [(rng.uniform(size=3), label, rng.normal(size=(3, 5)), rng.normal(size=5))
                for _ in range(3)]
    if fn_name == "rnn":
        return [(rng.normal(size=(3, 2)), rng.normal(size=(2, 3))) for _ in range(3)]
    if fn_name == "bilinear":
        return [tuple(rng.normal(size=s) for s in [(1, 3), (1, 3), (3, 3), (3, 3), (1, 3)])
                for _ in range(3)]
    if fn_name == "listcomp":  # its parameter is named `a` but it iterates over it
        return [(rng.normal(size=k),) for k in (3, 5)]
    return None


def points(fn, seed: int = 49) -> list:
    """Argument tuples for ``fn``: the harness's product, at most MAX_POINTS."""
    rng = np.random.default_rng(seed)
    own = _own_shapes(fn.__name__, rng)
    if own is not None:
        return own
    names = list(inspect.signature(fn).parameters)
    product = list(itertools.product(*[_by_name(n, rng) for n in names]))
    if len(product) > MAX_POINTS:
        product = [product[k] for k in sorted(rng.choice(len(product), MAX_POINTS,
                                                           replace=False))]
    return product


def differentiable(fn, args) -> list:
    """The positions of the parameters holding floats (not ints)."""
    return [k for k, v in enumerate(args)
            if not isinstance(v, (int, np.integer)) or isinstance(v, bool)]


# ---------------------------------------------------------------- references

def _call(fn, args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*copy.deepcopy(args))  # (test_subscript2 writes into its x)


def _flat(value) -> np.ndarray:
    return np.concatenate([np.ravel(np.asarray(v, np.float64)) for v in leaves(value)])


def _moved(args, k, direction: list, t: float):
    parts = [np.asarray(p, np.float64) + t * d
             for p, d in zip(leaves(args[k]), direction)]
    a = list(args)
    a[k] = rebuilt(args[k], [p if p.ndim else float(p) for p in parts])
    return tuple(a)


def directional(fn, args, directions: dict, h: float = H) -> np.ndarray:
    """(f(args + h v) - f(args - h v)) / 2h, flattened; ``directions`` maps a
    position to its leaves' directions."""
    def at(t):
        a = args
        for k, d in directions.items():
            a = _moved(a, k, d, t)
        return _flat(_call(fn, a))
    return (at(h) - at(-h)) / (2 * h)


def _units(args, k):
    """Unit directions along each element of each leaf of ``args[k]``."""
    shapes = [np.shape(p) for p in leaves(args[k])]
    for j, s in enumerate(shapes):
        for idx in np.ndindex(*s):
            d = [np.zeros(t) for t in shapes]
            d[j][idx] = 1.0
            yield d


def gradient_fd(fn, args, k, h: float = H) -> np.ndarray:
    """∂ f / ∂ args[k], one row per element of args[k] (f flattened)."""
    return np.array([directional(fn, args, {k: d}, h) for d in _units(args, k)])


def relative(got, want, floor: float = 1e-6) -> float:
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    if got.shape != want.shape:
        return np.inf
    scale = max(float(np.max(np.abs(want), initial=0.0)), floor)
    return float(np.max(np.abs(got - want), initial=0.0)) / scale


def smooth(fn, args, k, h: float = H) -> bool:
    """The value is finite and, along each element of ``args[k]``, the
    differences on either side of the point agree to 1%: no kink
    (``multivar_if`` at ``a == b``) or jump (``while_big`` at ``a = 0.1``)
    there, where central differences are no reference."""
    value = _flat(_call(fn, args))
    if not np.all(np.isfinite(value)):
        return False
    for d in _units(args, k):
        ahead = (_flat(_call(fn, _moved(args, k, d, h))) - value) / h
        behind = (value - _flat(_call(fn, _moved(args, k, d, -h)))) / h
        scale = max(float(np.max(np.abs(ahead), initial=0.0)),
                    float(np.max(np.abs(behind), initial=0.0)), 1e-3)
        if not (np.all(np.isfinite(ahead)) and np.all(np.isfinite(behind))
                and float(np.max(np.abs(ahead - behind), initial=0.0)) <= 1e-2 * scale):
            return False
    return True


# ---------------------------------------------------------------- s2s-ad

def _leafwise(value) -> np.ndarray:
    return _flat(value) if leaves(value) else np.zeros(0)


def check_grad(fn, args, ks) -> float:
    import s2s_ad
    value = _call(fn, args)
    outputs = range(len(value)) if isinstance(value, tuple) else [None]
    worst = 0.0
    for out in outputs:
        df = s2s_ad.grad(fn, wrt=tuple(ks), output=out)
        got = df(*copy.deepcopy(args))
        for k, g in zip(ks, got):
            want = gradient_fd(fn, args, k)
            if out is not None:
                want = want[:, out]
            worst = max(worst, relative(_leafwise(g), want.ravel()))
    return worst


def check_vjp(fn, args, ks, rng) -> float:
    import s2s_ad
    value, vjp_fn = s2s_ad.vjp(fn, *copy.deepcopy(args))
    want_value = _call(fn, args)
    if isinstance(want_value, tuple):
        cot = tuple(float(rng.normal()) if np.ndim(v) == 0 else rng.normal(size=np.shape(v))
                    for v in want_value)
    else:
        cot = float(rng.normal()) if np.ndim(want_value) == 0 \
            else rng.normal(size=np.shape(want_value))
    got = vjp_fn(cot)
    worst = relative(_flat(value), _flat(want_value))
    c = _flat(cot)
    for k in ks:
        worst = max(worst, relative(_leafwise(got[k]), gradient_fd(fn, args, k) @ c))
    return worst


def check_jvp(fn, args, ks, rng) -> float:
    import s2s_ad
    names = list(inspect.signature(fn).parameters)
    directions = {k: [rng.normal(size=np.shape(p)) for p in leaves(args[k])] for k in ks}
    tangents = {"d" + names[k]: rebuilt(args[k], [d if np.ndim(d) else float(d)
                                                  for d in directions[k]])
                for k in ks}
    value, tangent = s2s_ad.jvp(fn, wrt=tuple(names[k] for k in ks))(
        *copy.deepcopy(args), **tangents)
    worst = relative(_flat(value), _flat(_call(fn, args)))
    return max(worst, relative(_flat(tangent), directional(fn, args, directions)))


def check_second(fn, args, ks) -> float:
    """``hessian`` with respect to every number parameter, and ``grad`` of
    ``grad`` with respect to the first (as tangent's reverse-over-reverse
    test takes it), against second central differences (steps 1e-3 and
    5e-4, extrapolated: Richardson's)."""
    import s2s_ad
    e = {k: [np.ones(())] for k in ks}

    def second(i, j):
        def f(t, s):
            a = _moved(_moved(args, i, e[i], t), j, e[j], s)
            return float(_flat(_call(fn, a))[0])

        def at(h):
            return (f(h, h) - f(h, -h) - f(-h, h) + f(-h, -h)) / (4 * h * h)
        return (4 * at(5e-4) - at(1e-3)) / 3

    want = np.array([[second(i, j) for j in ks] for i in ks])
    names = list(inspect.signature(fn).parameters)
    hess = s2s_ad.hessian(fn, wrt=tuple(names[k] for k in ks))(*copy.deepcopy(args))
    got = np.array([[float(hess[i][j]) for j in range(len(ks))] for i in range(len(ks))])
    gg = s2s_ad.grad(s2s_ad.grad(fn, wrt=ks[0]), wrt=ks[0])(*copy.deepcopy(args))
    # (second differences of a function of size 1 carry ~1e-9 of rounding:
    # relative to at least 1e-3, a second derivative of 0 is compared too)
    return max(relative(got, want, 1e-3), relative(float(gg), want[0, 0], 1e-3))


# ---------------------------------------------------------------- the table

# function -> (a phrase of s2s-ad's refusal, why)
REFUSED: dict[str, tuple[str, str]] = {
    "test_subscript2": ("would change an array the caller passed in",
                        "`x[0] = a * b` writes into the parameter: the caller's array would "
                        "change (docs/numpy.md)"),
    "test_subscript3": ("would change an array the caller passed in", "as test_subscript2"),
    "cart2polar": ("`np.arctan` takes 1 array argument(s) here, got 2",
                   "`np.arctan(b, a)` passes `a` as NumPy's `out`: NumPy raises too "
                   "(tangent's comment: should really be arctan2)"),
    "inlining_contextmanager": ("`with` is not supported",
                                "`with insert_grad_of(a) as g:`, tangent's own machinery"),
    "stack_pushing": ("module tangent has no attribute 'Stack'",
                      "`tangent.Stack()`, `tangent.push`/`pop`: tangent's own tape"),
    "useless_stack_ops": ("module tangent has no attribute 'Stack'", "as stack_pushing"),
    "redefining_var_as_list": ("module tangent has no attribute 'Stack'", "as stack_pushing"),
}


@dataclass
class Result:
    name: str
    worst: dict            # check -> largest relative difference over the points
    points: int            # points compared
    skipped: int           # points not compared (not finite, or a jump nearby)


def seconds(fn) -> bool:
    """Whether ``fn`` gets second derivatives: the ``gradgrad_*`` functions
    and, as tangent's reverse-over-reverse test takes them, those of one to
    three numbers ``a``, ``b``, ``c`` returning one number."""
    names = list(inspect.signature(fn).parameters)
    if fn.__name__.startswith("gradgrad_"):
        return True
    if not set(names) <= set("abc"):
        return False
    args = points(fn)[0]  # (listcomp's `a` is a vector; fn_multiple_return gives a tuple)
    return all(np.ndim(a) == 0 for a in args) and not isinstance(_call(fn, args), tuple)


def run(fn, seed: int = 49) -> Result:
    """Every check at every smooth point of ``fn``."""
    rng = np.random.default_rng(seed + 1)
    worst = {"grad": 0.0, "vjp": 0.0, "jvp": 0.0}
    if seconds(fn):
        worst["second"] = 0.0
    compared = skipped = 0
    for args in points(fn, seed):
        ks = differentiable(fn, args)
        if not all(smooth(fn, args, k) for k in ks):
            skipped += 1
            continue
        compared += 1
        worst["grad"] = max(worst["grad"], check_grad(fn, args, ks))
        worst["vjp"] = max(worst["vjp"], check_vjp(fn, args, ks, rng))
        worst["jvp"] = max(worst["jvp"], check_jvp(fn, args, ks, rng))
        if "second" in worst:
            worst["second"] = max(worst["second"], check_second(fn, args, ks))
    return Result(fn.__name__, worst, compared, skipped)


def tolerance(check: str) -> float:
    return SECOND_TOL if check == "second" else FD_TOL


def refusal(fn, seed: int = 49) -> str:
    """s2s-ad's message for ``fn`` (from ``vjp`` at the first point);
    AssertionError when it is not refused."""
    import s2s_ad
    args = points(fn, seed)[0]
    try:
        s2s_ad.vjp(fn, *copy.deepcopy(args))
    except s2s_ad.SourceError as exc:
        return str(exc)
    raise AssertionError(f"{fn.__name__}: s2s-ad differentiates it now; "
                         "move it to the agreeing functions")


def outcome(fn) -> tuple[str, str]:
    """(kind, detail): kind 'agrees', 'refused', 'wrong', 'error', 'does not run'."""
    import s2s_ad
    try:
        return "refused", refusal(fn)
    except AssertionError:
        pass  # not refused
    except Exception as exc:  # noqa: BLE001 - the table reports it
        return "error", f"{type(exc).__name__}: {exc}"
    try:
        r = run(fn)
    except s2s_ad.SourceError as exc:
        return "refused", str(exc)
    except Exception as exc:  # noqa: BLE001 - the table reports it
        return "error", f"{type(exc).__name__}: {exc}"
    if r.points == 0:
        return "does not run", f"no point compared ({r.skipped} skipped)"
    bad = {c: w for c, w in r.worst.items() if not w <= tolerance(c)}
    if bad:
        return "wrong", ", ".join(f"{c} {w:.2g}" for c, w in bad.items())
    return "agrees", ", ".join(f"{c} {w:.1e}" for c, w in r.worst.items()) + \
        f" at {r.points} points" + (f" ({r.skipped} skipped)" if r.skipped else "")


def table() -> str:
    rows = ["| function | result |", "| --- | --- |"]
    counts: dict[str, int] = {}
    for fn in functions():
        kind, detail = outcome(fn)
        counts[kind] = counts.get(kind, 0) + 1
        if kind == "refused":
            detail = detail.splitlines()[0].split("error: ", 1)[-1]
        rows.append(f"| `{fn.__name__}` | {kind}: {detail} |")
    rows.append("")
    rows.append(", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return "\n".join(rows)


if __name__ == "__main__":
    if root() is None or check_root(root()):
        sys.exit(check_root(root()) if root() else f"set {ENV} to a tangent checkout")
    with contextlib.suppress(BrokenPipeError):
        print(table())
