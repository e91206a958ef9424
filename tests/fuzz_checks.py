"""The fuzzer's checks beyond ``grad``, on every program ``grad`` accepted.

Each check gets the original function, the point, the parameters ``grad``
differentiated and the gradients it gave (already compared with finite
differences by :mod:`tests.fuzz`), and says ``agree``, ``wrong`` (a number
that disagrees) or ``error`` (s2s-ad raised, or refused what ``grad``
accepted):

* ``vjp``: ``s2s_ad.vjp(fn, **point)`` — its value is ``fn``'s, and the
  cotangents it pulls back for two output cotangents are ``c * grad`` for
  the parameters ``grad`` differentiated (relative 1e-9: the two are
  generated separately) and agree with central finite differences for the
  other float parameters;
* ``explain``: ``s2s_ad.explain`` returns text naming the reverse sweep;
* ``graph``: ``s2s_ad.graph_dot`` of the forward graph and of the forward
  and backward graph returns DOT text;
* ``graphrun``: the backward drawing, run node by node by
  :mod:`tests.graph_run`, reaches ``grad``'s gradient (relative 1e-9) (the
  fuzzer skips it for NumPy loops restoring overwritten elements, which the
  runner does not run);
* ``cli``: ``s2s-ad grad FILE:fn [--wrt ...] [--output K] -o out.py`` (the
  command's ``main``, in this process), then ``out.py`` imported and called
  in a fresh interpreter, its gradient identical to the API's to 1e-12.

* ``second`` (only when named): the ``cli`` module read back from its file,
  its JVP along a direction (``H·v``) and ``jvp(grad(fn))`` against central
  differences of that module's gradient, and reverse over the file's reverse
  (``grad`` of a probe summing the file's gradient against ``c``: ``H·c``,
  checked as ``v·(H·c) = c·(H·v)``) (:func:`check_second`).
* ``third`` (only when named): ``second`` on a probe calling the ``cli``
  module, ``½ Σ |grad_f|²`` (:mod:`tests.fuzz_third`).

``graphrun`` and ``cli`` cost most (a traced run; an interpreter per
program), so the fuzzer runs them only when asked (``--soak`` or
``--checks``).
"""

from __future__ import annotations

import contextlib
import inspect
import io
import math
import os
import pickle
import subprocess
import sys
import traceback
from dataclasses import dataclass

import numpy as np

import s2s_ad

CHECKS = ("grad", "vjp", "explain", "graph", "graphrun", "cli")
EXTRA_CHECKS = ("jvp", "second", "third")
"""Checks run only when named (``--checks grad,jvp``): forward mode refuses
some programs reverse mode accepts (docs/forward.md), which the wider smoke
tests over CHECKS would count against it."""
DEFAULT_CHECKS = ("grad", "vjp", "explain", "graph")
"""What ``python -m tests.fuzz`` runs unless told (``--soak``: all of CHECKS)."""
STATUSES = ("agree", "refused", "rejected", "wrong", "error")

COTANGENTS = (1.0, -0.75)

KNOWN: dict = {}
"""Failure classes found and not fixed yet: name -> (check, a pattern of the
failure's detail, the cause), each with strict xfails in tests/test_fuzz_found.py.
The smoke test (tests/test_fuzz.py) accepts only these; the soak names them.
Empty now: the one class found, vjp's pair missing values defined inside a
branch side (a NameError raised in a backward pass), is fixed."""


def known_failure(kind: str, check: "Check") -> str | None:
    """The name of the known class a failed check belongs to, or None."""
    for name, (check_kind, pattern, _) in KNOWN.items():
        if kind == check_kind and check.status == "error" and pattern.search(check.detail):
            return name
    return None


@dataclass
class Check:
    status: str
    """One of STATUSES."""
    detail: str = ""


@dataclass
class Subject:
    """What the checks need of one accepted program."""
    fn: object
    path: str
    """The file ``fn`` was imported from (the CLI reads it)."""
    point: dict
    wrt: object
    """As passed to ``grad``: None, an int, a name or a tuple of them."""
    wrt_names: list
    grads: list
    """``grad``'s gradient for each of ``wrt_names``."""
    value: float
    output: int | None = None
    fd_agrees: object = None
    """tests.fuzz.fd_agrees, for the scalar parameters grad did not differentiate."""

    @property
    def arrays(self) -> list:
        """The parameters the point gives an ndarray: the tools that have no
        arguments to look at (explain, graph, the CLI) are told they are arrays."""
        return [k for k, v in self.point.items() if isinstance(v, np.ndarray)]


def _copies(point: dict) -> dict:
    return {k: np.copy(v) if isinstance(v, np.ndarray) else v for k, v in point.items()}


def _close(a, b, rtol: float) -> bool:
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    return a.shape == b.shape and bool(np.all(np.abs(a - b) <= rtol * np.maximum(1.0, np.abs(b))))


def _raised(what: str) -> Check:
    return Check("error", f"{what} raised:\n" + traceback.format_exc(limit=8))


def check_vjp(s: Subject) -> Check:
    params = list(inspect.signature(s.fn).parameters)
    try:
        with np.errstate(all="ignore"):
            value, pull = s2s_ad.vjp(s.fn, **_copies(s.point))
            pulled = []
            for c in COTANGENTS:
                if s.output is None:
                    cot = c
                else:
                    cot = [np.zeros_like(v) if np.ndim(v) else 0.0 for v in value]
                    cot[s.output] = c
                pulled.append(pull(cot))
    except s2s_ad.SourceError as exc:
        return Check("error", f"vjp refused a program grad accepts:\n{exc}")
    except Exception:
        return _raised("vjp")
    mine = value if s.output is None else value[s.output]
    if not _close(mine, s.value, 1e-9):
        return Check("wrong", f"vjp's value {mine!r}, the function's {s.value!r}")
    for c, got in zip(COTANGENTS, pulled):
        if not isinstance(got, tuple) or len(got) != len(params):
            return Check("wrong", f"vjp_fn({c}) gave {got!r}, not one cotangent per parameter "
                         f"{params}")
        by_name = dict(zip(params, got))
        for name, g in zip(s.wrt_names, s.grads):
            if not _close(by_name[name], c * np.asarray(g, dtype=float), 1e-9):
                return Check("wrong", f"vjp_fn({c}) for {name}: {by_name[name]!r}; grad gives "
                             f"{g!r} (times {c})\n" + s2s_ad.source_of(pull))
        for name in params:
            x = s.point.get(name)
            if name in s.wrt_names or s.fd_agrees is None or not isinstance(x, float):
                continue
            g = by_name[name]
            if not isinstance(g, (int, float)) or not math.isfinite(g):
                return Check("wrong", f"vjp_fn({c}) for {name}: {g!r}")
            if s.fd_agrees(s.fn, s.point, name, g / c, s.value) is False:
                return Check("wrong", f"vjp_fn({c}) for {name} (not differentiated by grad): "
                             f"{g!r} disagrees with finite differences (times {c})\n"
                             + s2s_ad.source_of(pull))
    return Check("agree")


def check_jvp(s: Subject) -> Check:
    """``jvp`` along a fixed direction against grad's gradient dotted with it
    (grad agreed with the oracles first); a located refusal of a construct
    forward mode lacks counts as refused."""
    rng = np.random.default_rng(len(s.wrt_names))
    direction = {n: (rng.uniform(-1.0, 1.0, np.shape(s.point[n])) if np.ndim(s.point[n])
                     else float(rng.uniform(-1.0, 1.0))) for n in s.wrt_names}
    try:
        with np.errstate(all="ignore"):
            j = s2s_ad.jvp(s.fn, s.wrt)
            names = _tangent_names(j, s.wrt_names)
            value, tangent = j(**_copies(s.point), **{names[n]: v for n, v in direction.items()})
    except s2s_ad.SourceError as exc:
        if "forward mode" in str(exc) or "forward-mode" in str(exc):
            return Check("refused", str(exc))
        return Check("error", f"jvp refused a program grad accepts:\n{exc}")
    except Exception:
        return _raised("jvp")
    if s.output is not None:
        value, tangent = value[s.output], tangent[s.output]
    if not _close(value, s.value, 1e-9):
        return Check("wrong", f"jvp's value {value!r}, the function's {s.value!r}")
    want = sum(float(np.sum(np.asarray(g, dtype=float) * direction[n]))
               for n, g in zip(s.wrt_names, s.grads))
    scale = sum(float(np.sum(np.abs(np.asarray(g, dtype=float) * direction[n])))
                for n, g in zip(s.wrt_names, s.grads))
    if not np.ndim(tangent) == 0 or abs(float(tangent) - want) > 1e-9 * max(1.0, scale):
        return Check("wrong", f"jvp's tangent {tangent!r}; grad·v gives {want!r}\n"
                     + s2s_ad.jvp_source(s.fn, s.wrt, arrays=s.arrays))
    return Check("agree")


def _tangent_names(j, wrt_names: list) -> dict:
    """The keyword of each parameter's tangent in ``j``'s signature: ``d`` and
    its name, or a fresh one when the function has a variable of that name.
    (A function generated per kind of its arguments takes ``*args, **kwargs``:
    ``d`` and the name, as docs/forward.md says.)"""
    named = getattr(j, "__s2s_ad_tangents__", None)  # jvp of a generated gradient
    if named is not None:
        return {n: named[n] for n in wrt_names}
    kwonly = [p.name for p in inspect.signature(j).parameters.values()
              if p.kind is p.KEYWORD_ONLY]
    if not kwonly:
        return {n: "d" + n for n in wrt_names}
    tangents = kwonly[len(kwonly) - len(wrt_names):]
    return dict(zip(wrt_names, tangents))


def check_explain(s: Subject) -> Check:
    try:
        text = s2s_ad.explain(s.fn, s.wrt, output=s.output, arrays=s.arrays)
    except Exception:
        return _raised("explain")
    if not isinstance(text, str) or "reverse" not in text:
        return Check("wrong", f"explain gave no reverse sweep:\n{text!r}")
    return Check("agree")


def check_graph(s: Subject) -> Check:
    try:
        forward = s2s_ad.graph_dot(s.fn, arrays=s.arrays)
        both = s2s_ad.graph_dot(s.fn, s.wrt, backward=True, output=s.output, arrays=s.arrays)
    except Exception:
        return _raised("graph_dot")
    for what, text in (("forward", forward), ("backward", both)):
        if not text.startswith("digraph") or not text.rstrip().endswith("}"):
            return Check("wrong", f"graph_dot ({what}) is not DOT text:\n{text[:500]}")
    return Check("agree")


def check_graph_run(s: Subject) -> Check:
    """Run the backward drawing (tests/graph_run.py) and compare its sinks with grad."""
    here = os.path.dirname(os.path.abspath(__file__))
    if here not in sys.path:
        sys.path.insert(0, here)
    import graph_run
    from s2s_ad import api, graph_backward

    params = inspect.signature(s.fn).parameters
    positional = [p for p in params.values() if p.kind != p.KEYWORD_ONLY]
    point = _copies(s.point)
    args = [point[p.name] for p in positional]
    keywords = {p.name: point[p.name] for p in params.values() if p.kind == p.KEYWORD_ONLY}
    try:
        func, code = api.gradient_code(s.fn, s.wrt, s.output, None, s.arrays)
        g = graph_backward.combined(func, code)
        with np.errstate(all="ignore"):
            state, names = graph_run.forward_state(s.fn, args, s.wrt, None, keywords=keywords,
                                                   output=s.output, arrays=s.arrays)
            got = graph_run.run_reverse(g, state, {"math": math, "np": np, **names})
    except Exception:
        return _raised("drawing the graph or running it")
    for name, want in zip(s.wrt_names, s.grads):
        sink = got.get(f"grad_{name}")
        if isinstance(sink, graph_run.Element):
            sink = sink.into(np.zeros(np.shape(want)))
        if sink is None or not _close(sink, want, 1e-9):
            return Check("wrong", f"the drawn graph's sink grad_{name} gets {sink!r}; "
                         f"grad gives {want!r}")
    return Check("agree")


RUNNER = """\
import importlib.util, pickle, sys
spec = importlib.util.spec_from_file_location("generated_gradient", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
point = pickle.load(sys.stdin.buffer)
pickle.dump(getattr(module, sys.argv[2])(**point), sys.stdout.buffer)
"""


def _wrt_option(wrt) -> list[str]:
    if wrt is None:
        return []
    items = wrt if isinstance(wrt, tuple) else (wrt,)
    return ["--wrt", ",".join(str(w) for w in items)]


def check_cli(s: Subject, folder: str, label: str) -> Check:
    from s2s_ad import cli

    out = os.path.join(folder, f"{label}_cli_grad.py")
    name = s.fn.__name__
    argv = ["grad", f"{s.path}:{name}", *_wrt_option(s.wrt), "-o", out]
    if s.output is not None:
        argv += ["--output", str(s.output)]
    if s.arrays:
        argv += ["--array", ",".join(s.arrays)]
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = cli.main(argv)
    except BaseException:
        return _raised(f"s2s-ad {' '.join(argv)}")
    if code != 0:
        return Check("error", f"s2s-ad {' '.join(argv)} exited {code}:\n{err.getvalue()}")
    try:
        run = subprocess.run([sys.executable, "-c", RUNNER, out, f"grad_{name}"],
                             input=pickle.dumps(_copies(s.point)), capture_output=True,
                             timeout=120, cwd=folder)
    except subprocess.TimeoutExpired:
        return Check("error", f"grad_{name} from {out} did not return in 120 s")
    if run.returncode != 0:
        return Check("error", f"importing or calling grad_{name} from {out} in a fresh "
                     f"interpreter failed:\n{run.stderr.decode(errors='replace')[-3000:]}")
    got = pickle.loads(run.stdout)
    got = list(got) if isinstance(got, tuple) else [got]
    if len(got) != len(s.grads) or not all(_close(a, b, 1e-12) for a, b in zip(got, s.grads)):
        with open(out, encoding="utf-8") as f:
            text = f.read()
        return Check("wrong", f"the CLI's module gives {got!r}; the API {s.grads!r}\n{text}")
    return Check("agree")


def run_checks(s: Subject, checks, folder: str, label: str) -> dict[str, Check]:
    """Each of ``checks`` (but grad, which the caller ran) on an accepted program."""
    out = {}
    for kind in checks:
        if kind == "vjp":
            out[kind] = check_vjp(s)
        elif kind == "jvp":
            out[kind] = check_jvp(s)
        elif kind == "explain":
            out[kind] = check_explain(s)
        elif kind == "graph":
            out[kind] = check_graph(s)
        elif kind == "graphrun":
            out[kind] = check_graph_run(s)
        elif kind == "cli":
            out[kind] = check_cli(s, folder, label)
        elif kind == "second":
            out[kind] = check_second(s, folder, label)
        elif kind == "third":
            from tests.fuzz_third import check_third  # (it builds on check_second)
            out[kind] = check_third(s, folder, label)
    return out


def _along(g, point: dict, direction: dict, h: float) -> list:
    """Central differences of the gradient ``g`` along ``direction``, step ``h``."""
    up, down = _copies(point), _copies(point)
    for n, v in direction.items():
        up[n] = up[n] + h * v
        down[n] = down[n] - h * v
    gu, gd = g(**up), g(**down)
    gu, gd = (list(gu), list(gd)) if isinstance(gu, tuple) else ([gu], [gd])
    return [(np.asarray(a, dtype=float) - np.asarray(b, dtype=float)) / (2 * h)
            for a, b in zip(gu, gd)]


def _reverse_over_file(g, s: Subject, folder: str, label: str, direction: dict, fd: list):
    """Reverse over the file's reverse sweep: ``grad`` of a probe module,
    ``probe(params..., c...) = Σ c·grad_fn(params...)``, calling the file's
    gradient, is ``H·c``; ``v·(H·c)`` must equal ``c·(H·v)`` (H is
    symmetric), the latter from the central differences ``fd`` along ``v``.
    Returns (that pair, a scale for the tolerance), or None where the file's
    gradient takes parameters the probe cannot pass on."""
    params = list(inspect.signature(g).parameters.values())
    names = [p.name for p in params if p.kind is p.POSITIONAL_OR_KEYWORD]
    if any(p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in params) \
            or set(names) != set(s.point):
        return None
    wrt = list(s.wrt_names)
    rng = np.random.default_rng(11 + len(wrt))
    cs = {w: (rng.uniform(-1.0, 1.0, np.shape(d)) if np.ndim(d) else float(rng.uniform(-1.0, 1.0)))
          for w, d in zip(wrt, fd)}
    taken = set(names) | {"np"}
    cnames = {w: next(f"c{k}_{w}" for k in range(100) if f"c{k}_{w}" not in taken) for w in wrt}
    outs = [next(f"r{k}_{i}" for k in range(100) if f"r{k}_{i}" not in taken)
            for i in range(len(wrt))]
    arrays = any(np.ndim(v) for v in list(s.point.values()) + list(cs.values()))
    terms = [f"np.sum({r} * {cnames[w]})" if arrays else f"{r} * {cnames[w]}"
             for r, w in zip(outs, wrt)]
    lhs = ", ".join(outs) + ("," if len(outs) == 1 and _returns_tuple(g, s) else "")
    called = next(f"file_grad{k}" for k in range(100) if f"file_grad{k}" not in taken)
    text = (("import numpy as np\n" if arrays else "") +
            f"from {label}_second_mod import grad_{s.fn.__name__} as {called}\n\n\n"
            f"def probe({', '.join(names + [cnames[w] for w in wrt])}):\n"
            f"    {lhs} = {called}({', '.join(names)})\n"
            f"    return {' + '.join(terms)}\n")
    from tests.modules import import_source
    sys.path.insert(0, folder)
    try:
        probe = import_source(folder, text, f"{label}_probe").probe
        got = s2s_ad.grad(probe, tuple(wrt))(**_copies(s.point), **{cnames[w]: cs[w] for w in wrt})
    finally:
        sys.path.remove(folder)
        sys.modules.pop(f"{label}_second_mod", None)
    got = list(got) if isinstance(got, tuple) else [got]
    vhc = sum(float(np.sum(np.asarray(u, dtype=float) * direction[w])) for u, w in zip(got, wrt))
    chv = sum(float(np.sum(cs[w] * d)) for w, d in zip(wrt, fd))
    scale = max([1.0] + [float(np.sum(np.abs(cs[w] * d))) for w, d in zip(wrt, fd)])
    return vhc, chv, scale


def _returns_tuple(g, s: Subject) -> bool:
    """Does the file's gradient return a tuple (not one gradient, plain)?"""
    return isinstance(g(**_copies(s.point)), tuple)


def cli_gradient(s: Subject, folder: str, out: str, module: str):
    """``s2s-ad grad FILE:fn [--wrt ...] [--output K] [--array ...] -o out``
    (the command's ``main``, in this process), and the gradient read back
    from ``out`` imported as ``module``; a :class:`Check` (error) where that
    fails."""
    from s2s_ad import cli
    from tests.modules import import_source

    name = s.fn.__name__
    argv = ["grad", f"{s.path}:{name}", *_wrt_option(s.wrt), "-o", out]
    if s.output is not None:
        argv += ["--output", str(s.output)]
    if s.arrays:
        argv += ["--array", ",".join(s.arrays)]
    try:
        with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
            if cli.main(argv) != 0:
                return Check("error", f"s2s-ad {' '.join(argv)} failed")
        with open(out, encoding="utf-8") as f:
            return getattr(import_source(folder, f.read(), module), f"grad_{name}")
    except Exception:
        return _raised(f"s2s-ad {' '.join(argv)}")


def check_second(s: Subject, folder: str, label: str) -> Check:
    """Second order, metamorphic: the CLI's gradient module (``grad -o``)
    read back from its file and differentiated again, its JVP along a fixed
    direction ``v`` (``H·v``, forward over the file's reverse sweep), and
    ``jvp(grad(fn))`` (made from ``fn``'s IR), both against central
    differences of the file's gradient along ``v`` (itself identical to the
    API's first: the ``cli`` check). Where the differences at two steps
    disagree (a kink or branch switch within the step) the program is
    *rejected* for this check; a located refusal of the file is *refused*."""
    out = os.path.join(folder, f"{label}_second.py")
    g = cli_gradient(s, folder, out, f"{label}_second_mod")
    if isinstance(g, Check):
        return g
    rng = np.random.default_rng(7 + len(s.wrt_names))
    direction = {n: (rng.uniform(-1.0, 1.0, np.shape(s.point[n])) if np.ndim(s.point[n])
                     else float(rng.uniform(-1.0, 1.0))) for n in s.wrt_names}
    wrt = tuple(s.wrt_names)
    try:
        with np.errstate(all="ignore"):
            scale = max([1.0] + [float(np.max(np.abs(np.asarray(v, dtype=float)))) for v in
                                 (s.point[n] for n in s.wrt_names)])
            fd = _along(g, s.point, direction, 1e-5 * scale)
            fd2 = _along(g, s.point, direction, 0.5e-5 * scale)
    except (ValueError, ZeroDivisionError, OverflowError, FloatingPointError):
        return Check("rejected", "the gradient is not defined near the point")
    size = max([1.0] + [float(np.max(np.abs(a))) for a in fd])
    if not all(np.all(np.isfinite(a)) for a in fd + fd2) or any(
            np.max(np.abs(a - b)) > 1e-4 * size for a, b in zip(fd, fd2)):
        return Check("rejected", "central differences of the gradient change with the step")
    routes = {}
    try:
        with np.errstate(all="ignore"):
            j = s2s_ad.jvp(g, wrt)
            names = _tangent_names(j, s.wrt_names)
            routes["jvp of the file"] = j(**_copies(s.point),
                                          **{names[n]: v for n, v in direction.items()})[1]
    except s2s_ad.SourceError as exc:
        return Check("refused", f"the file {out} read back:\n{exc}")
    except Exception:
        return _raised("jvp of the gradient file")
    try:
        with np.errstate(all="ignore"):
            j = s2s_ad.jvp(s2s_ad.grad(s.fn, s.wrt, output=s.output), wrt)
            names = _tangent_names(j, s.wrt_names)
            routes["jvp(grad(fn))"] = j(**_copies(s.point),
                                        **{names[n]: v for n, v in direction.items()})[1]
    except s2s_ad.SourceError as exc:
        if "forward mode" in str(exc):
            pass  # a construct forward mode lacks (docs/forward.md): the file's route stands
        else:
            return Check("error", f"jvp(grad(fn)) refused a program grad accepts:\n{exc}")
    except Exception:
        return _raised("jvp(grad(fn))")
    try:
        with np.errstate(all="ignore"):
            reverse = _reverse_over_file(g, s, folder, label, direction, fd)
    except s2s_ad.SourceError as exc:
        return Check("refused", f"the file {out} read back, reverse over reverse:\n{exc}")
    except Exception:
        return _raised("grad of a probe over the gradient file")
    if reverse is not None:
        got, want, scale = reverse
        if not abs(got - want) <= 1e-4 * scale:
            with open(out, encoding="utf-8") as f:
                text = f.read()
            return Check("wrong", f"reverse over the file's reverse gives v·(H·c) = {got!r}; "
                         f"c·(H·v) from central differences of the file's gradient {want!r}"
                         f"\n{text}")
    for route, got in routes.items():
        # (a one-item `wrt` tuple: the API's gradient is a 1-tuple, the file's
        # `--wrt z` a plain one)
        got = list(got) if isinstance(got, tuple) else [got]
        if len(got) != len(fd) or any(
                np.shape(a) != np.shape(b)
                or np.max(np.abs(np.asarray(a, dtype=float) - b), initial=0.0) > 1e-4 * size
                for a, b in zip(got, fd)):
            with open(out, encoding="utf-8") as f:
                text = f.read()
            return Check("wrong", f"{route} gives H·v = {got!r}; central differences of the "
                         f"file's gradient {fd!r}\n{text}")
    return Check("agree")
