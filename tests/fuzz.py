"""Differential testing: random programs, s2s-ad against two independent oracles.

    python -m tests.fuzz --n 10000            # the soak: programs tried, mismatches
    python -m tests.fuzz --seed 1234 --n 1    # replay one program (seed = program)
    python -m tests.fuzz --n 500 --no-sympy   # finite differences only (faster)
    python -m tests.fuzz --n 1000 --numpy     # small NumPy programs (finite differences)
    python -m tests.fuzz --n 1000 --numpy-loops   # NumPy loops filling arrays by y[i] = ...
    python -m tests.fuzz --n 1000 --numpy-shifts  # stable softmax shifts, unspread reductions
    python -m tests.fuzz --n 1000 --numpy-rules   # the newer NumPy rules (linalg, var, cumprod...)
    python -m tests.fuzz --n 1000 --numpy-sums    # loops summing independent iterations
    python -m tests.fuzz --n 2000 --numpy-aliasing  # y += e through other names and views
    python -m tests.fuzz --n 2000 --numpy-kinds   # array code in helpers that never name NumPy
    python -m tests.fuzz --n 1000 --conditions    # and/or with conditional expressions inside
    python -m tests.fuzz --n 1000 --helpers       # the work in helpers: branches, loops, fills
    python -m tests.fuzz --n 500 --tuples         # a helper's tuple read by index in a loop, arms
    python -m tests.fuzz --n 500 --carried        # ... and carried across a loop, break/continue
    python -m tests.fuzz --n 300 --lists          # lists grown at run time (tests.fuzz_families)
    python -m tests.fuzz --n 300 --torch          # NumPy programs with torch's names
    python -m tests.fuzz --n 1000 --soak          # every check: + the drawn graph run, the CLI
    python -m tests.fuzz --n 1000 --checks grad   # grad alone (default: grad,vjp,explain,graph)
    python -m tests.fuzz --n 200 --checks grad,vjp,jvp   # forward mode too (named only)

Each program from :mod:`tests.programs` is written to a real ``.py`` file (s2s-ad
reads source), imported, and its gradient computed by ``s2s_ad.grad`` is
compared with

1. **central finite differences** of the original function at the drawn point
   (:func:`fd_agrees` states the tolerance and why), and
2. **sympy** (``s2s_ad.check``: ``sympy.diff`` of the original function,
   proved by ``simplify`` or compared at 50-digit random points), for programs
   of bounded size and under a time limit, since ``sympy.diff`` of a deep
   composition swells.

A program whose original raises or overflows at the drawn point is *rejected*
(not a test of s2s-ad); a point where finite differences are not a reliable
oracle (a kink or jump within the step, the estimate changes with the step)
is *skipped* for that oracle. Everything else that disagrees, raises from
inside s2s-ad or refuses a program of the supported subset is a *mismatch*,
printed in full (source, point, wrt, both gradients) so it can become a
regression test. The aliasing programs (:mod:`tests.programs_aliasing`) may
also be *refused*, counted apart, when the refusal is located (file:line:col,
the line, a caret) and is about the in-place write, and the program is not
one of the clear ones (no alias, view or argument written) that must be accepted.

On every program grad got right, the other checks of :mod:`tests.fuzz_checks`
run (vjp, explain, graph; with ``--soak`` also the drawn graph run node by
node and the CLI's module in a fresh interpreter), each counted as agree /
refused / rejected / wrong / internal error, and every failure printed with
the program; the summary groups failures into classes, naming the known ones.
"""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
import tempfile
import time
import traceback
from collections import Counter
from dataclasses import dataclass, field

if __package__ in (None, ""):
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import s2s_ad  # noqa: E402
from tests.fuzz_checks import (CHECKS, DEFAULT_CHECKS, EXTRA_CHECKS, STATUSES,  # noqa: E402
                               Check, Subject, known_failure, run_checks)
from tests.modules import import_source  # noqa: E402
from tests.programs import Program, RandomDraw, program  # noqa: E402
from tests.programs_aliasing import alias_program  # noqa: E402
from tests.programs_conditions import condition_program  # noqa: E402
from tests.programs_helpers import helper_program  # noqa: E402
from tests.programs_kinds import kinds_program  # noqa: E402
from tests.programs_numpy import numpy_loop_program, numpy_program  # noqa: E402
from tests.programs_rules import rules_program  # noqa: E402
from tests.programs_sums import sums_program  # noqa: E402
from tests.programs_shifts import shift_program  # noqa: E402

SYMPY_MAX_OPS = 12
"""Programs with more operations are checked by finite differences only:
sympy.diff and simplify of deeper compositions cost seconds each (measured:
0.03 s on average below 10 operations, 0.8 s at 10-20, 1.6 s at 20-30, with
outliers of 10+ s), which would make a 10,000-program soak take hours."""
SYMPY_SECONDS = 5


@dataclass
class Outcome:
    status: str
    """"ok" | "rejected" | "refused" | "mismatch"."""
    detail: str = ""
    fd: str = ""
    """"agrees" | "skipped" | "" (not run)."""
    sympy: str = ""
    """The verdict status, "timeout", "skipped" or ""."""
    checks: dict = field(default_factory=dict)
    """The other checks run on a program grad got right: kind -> fuzz_checks.Check."""
    subject: Subject | None = None
    """What those checks need (set by the grad run, dropped after the checks)."""

    def grad_check(self) -> Check:
        """This outcome as a check of ``grad`` (fuzz_checks.STATUSES)."""
        if self.status == "ok":
            return Check("agree")
        if self.status in ("rejected", "refused"):
            return Check(self.status, self.detail)
        if self.detail.startswith(("s2s-ad raised", "refused", "generated program")):
            return Check("error", self.detail)  # an unexpected refusal is an error too
        return Check("wrong", self.detail)


@dataclass
class Tally:
    tried: int = 0
    ok: int = 0
    rejected: int = 0
    refused: int = 0
    """Aliasing programs s2s-ad refused with a located message (run_alias_one)."""
    mismatches: list = field(default_factory=list)
    fd_checked: int = 0
    fd_skipped: int = 0
    sympy: dict = field(default_factory=dict)
    by_check: dict = field(default_factory=dict)
    """kind -> Counter of statuses (fuzz_checks.STATUSES)."""
    failures: list = field(default_factory=list)
    """(label, kind, Check) of every check that said wrong or error."""
    refusals: list = field(default_factory=list)
    """(label, kind, Check) of every check that was refused, located."""
    equal: dict = field(default_factory=dict)
    """--torch: programs whose gradient equals the NumPy twin's "bitwise" / to "rounding"."""

    def add(self, o: Outcome, prog: Program, label: str) -> None:
        self.tried += 1
        for kind, check in [("grad", o.grad_check()), *o.checks.items()]:
            self.by_check.setdefault(kind, Counter())[check.status] += 1
            if check.status in ("wrong", "error"):
                self.failures.append((label, kind, check))
            elif check.status == "refused" and kind != "grad":
                self.refusals.append((label, kind, check))
        if o.status == "ok":
            self.ok += 1
        elif o.status == "rejected":
            self.rejected += 1
        elif o.status == "refused":
            self.refused += 1
        else:
            self.mismatches.append((label, prog, o))
        if o.fd == "agrees":
            self.fd_checked += 1
        elif o.fd == "skipped":
            self.fd_skipped += 1
        if o.sympy:
            self.sympy[o.sympy] = self.sympy.get(o.sympy, 0) + 1

    def summary(self, seconds: float) -> str:
        checked = self.tried - self.rejected - self.refused
        refused = f"; refused with a located message: {self.refused}" if self.refused else ""
        sym = ", ".join(f"{k} {v}" for k, v in sorted(self.sympy.items())) or "none"
        checks = "\n".join(f"  {kind:9} " + ", ".join(f"{s} {c[s]}" for s in STATUSES)
                           for kind, c in self.by_check.items())
        return (f"programs tried: {self.tried}; compared: {checked} "
                f"(rejected at the drawn point: {self.rejected}{refused}); mismatches: "
                f"{len(self.mismatches)}\n"
                f"finite differences: {self.fd_checked} agree, {self.fd_skipped} skipped "
                f"(not smooth within the step)\nsympy: {sym}\n"
                f"checks (agree / refused located / rejected / wrong / internal error):\n{checks}\n"
                + self.classes() + self.refusal_reasons() + self.twins() + f"time: {seconds:.1f} s")

    def twins(self) -> str:
        if not any(k for k in self.equal if k):
            return ""
        return (f"torch against the NumPy twin: {self.equal.get('bitwise', 0)} bitwise equal, "
                f"{self.equal.get('rounding', 0)} equal to rounding\n")

    def refusal_reasons(self) -> str:
        """The located refusals of the checks, grouped by what they say."""
        groups: dict = {}
        for label, kind, check in self.refusals:
            said = next((line.split("error: ", 1)[1] for line in check.detail.splitlines()
                         if "error: " in line), check.detail.strip().splitlines()[0]
                        if check.detail.strip() else "?")
            groups.setdefault((kind, failure_class(said)), []).append(label)
        lines = [f"  [{kind}] {reason}: {len(labels)} ({', '.join(labels[:4])}"
                 f"{', ...' if len(labels) > 4 else ''})"
                 for (kind, reason), labels in sorted(groups.items(), key=lambda g: -len(g[1]))]
        return "refusals by reason:\n" + "\n".join(lines) + "\n" if lines else ""

    def classes(self) -> str:
        """The failures grouped by check, status and the last line of their message."""
        groups: dict = {}
        for label, kind, check in self.failures:
            known = known_failure(kind, check)
            cls = f"known class {known}: " if known else ""
            groups.setdefault((kind, check.status, cls + failure_class(check.detail)),
                              []).append(label)
        lines = [f"  [{kind} {status}] {cls}: {len(labels)} ({', '.join(labels[:8])}"
                 f"{', ...' if len(labels) > 8 else ''})"
                 for (kind, status, cls), labels in sorted(groups.items(),
                                                           key=lambda g: -len(g[1]))]
        return "failure classes:\n" + "\n".join(lines) + "\n" if lines else ""


def failure_class(detail: str) -> str:
    """What a failure's message says, without its numbers and names: the
    exception (last line of a traceback) or the first line."""
    lines = [line for line in detail.strip().splitlines() if line.strip()]
    if not lines:
        return "?"
    line = lines[-1] if "Traceback" in detail else lines[0]
    line = re.sub(r"d/d\w+", "d/d…", re.sub(r"'[^']*'", "'…'", line))
    return re.sub(r"(?<![A-Za-z_\d])-?\d+(\.\d+)?(e-?\d+)?", "N", line)[:120]


def import_program(prog: Program, folder: str, label: str):
    """Write ``prog`` to ``folder/<label>.py`` and import it (s2s-ad needs a real file)."""
    return getattr(import_source(folder, prog.source, f"fuzzprog_{label}"), prog.name)


def evaluate(fn, point: dict) -> float | None:
    """``fn`` at ``point``, or None when the point is outside its domain or
    the value is too large for a finite difference to mean anything."""
    try:
        v = fn(**point)
    except (ValueError, ZeroDivisionError, OverflowError):
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) \
            or abs(v) > 1e6:
        return None
    return float(v)


def finite_difference(fn, point: dict, name: str, h: float) -> float | None:
    up = dict(point)
    down = dict(point)
    up[name] = point[name] + h
    down[name] = point[name] - h
    fu, fd = evaluate(fn, up), evaluate(fn, down)
    if fu is None or fd is None:
        return None
    return (fu - fd) / (2 * h)


def fd_agrees(fn, point: dict, name: str, got: float, value: float) -> bool | None:
    """Does ``got`` match central differences of ``fn`` in ``name``? None when
    finite differences are not a reliable oracle at this point.

    Tolerance. With h = 1e-4·max(1, |x|), the central difference D(h) has a
    truncation error c·h² and a rounding error about ε·|f|/h (ε = 2.2e-16, so
    ~2e-12·|f| here). D(h) − D(h/2) = ¾·c·h² measures the truncation error of
    D(h/2) as a third of it. We accept when |got − D(h/2)| ≤ |D(h) − D(h/2)|
    (three times the estimated truncation error) + 1e-6·max(1, |got|)
    (rounding, with a margin of over 1000) + 1e-9·|f|/h.

    Reliability. We refuse to judge (None) when D(h) and D(h/2) differ by more
    than 1e-3·max(1, |D|) — a jump (floor, %, round) within the step, or a
    function varying too fast for it — or when the step straddles a kink
    (abs, max, min at a tie): there the central difference is the *average*
    of the two one-sided slopes at every step size, so the test above cannot
    see it; the gap between the forward and backward quotients reveals it,
    shrinking like h·f'' for a smooth function but staying put at a kink.
    """
    x = point[name]
    h = 1e-4 * max(1.0, abs(x))
    d1 = finite_difference(fn, point, name, h)
    d2 = finite_difference(fn, point, name, h / 2)
    if d1 is None or d2 is None:
        return None
    scale = max(1.0, abs(d2))
    if abs(d1 - d2) > 1e-3 * scale:
        return None
    gap1, gap2 = _one_sided_gap(fn, point, name, h, value), _one_sided_gap(fn, point, name, h / 2, value)
    if gap1 is None or gap2 is None or (abs(gap2) > 1e-6 * scale and abs(gap2) > 0.75 * abs(gap1)):
        return None
    if abs(got - d2) <= abs(d1 - d2) + 1e-6 * max(1.0, abs(got)) + 1e-9 * abs(value) / h:
        return True
    return None if _finer_than_the_step(fn, point, name, got, value, h) else False


def _finer_than_the_step(fn, point: dict, name: str, got: float, value: float, h: float) -> bool:
    """Do central differences at steps 100 and 1000 times smaller agree with
    each other and with ``got``? Then the function varies on a scale finer
    than ``h`` (``floor`` of a value scaled by 10⁴ is a staircase whose
    average slope D(h) and D(h/2) both see), and the oracle at ``h`` is not
    reliable. A wrong gradient still disagrees: the small steps converge to
    the derivative."""
    d3 = finite_difference(fn, point, name, h * 1e-2)
    d4 = finite_difference(fn, point, name, h * 1e-3)
    if d3 is None or d4 is None or abs(d3 - d4) > 1e-3 * max(1.0, abs(d4)):
        return False
    # rounding at the step h/1000: about ε·|f|/step, ε = 2.2e-16; a margin of 50
    return abs(got - d4) <= abs(d3 - d4) + 1e-6 * max(1.0, abs(got)) + 1e-14 * abs(value) / (h * 1e-3)


def _one_sided_gap(fn, point: dict, name: str, h: float, value: float) -> float | None:
    """forward quotient − backward quotient: ≈ h·f'' when smooth, the slope's jump at a kink."""
    up, down = dict(point), dict(point)
    up[name] += h
    down[name] -= h
    fu, fd = evaluate(fn, up), evaluate(fn, down)
    if fu is None or fd is None:
        return None
    return (fu - value) / h - (value - fd) / h


def run_one(prog: Program, folder: str, label: str, *, use_sympy: bool = True,
            checks=("grad",)) -> Outcome:
    """grad against finite differences (and sympy), then the other ``checks``
    (tests.fuzz_checks) when grad was right."""
    outcome = _run_grad(prog, folder, label, use_sympy)
    if outcome.status == "ok" and len(checks) > 1:
        outcome.checks = run_checks(outcome.subject, checks, folder, label)
    outcome.subject = None
    return outcome


def _really_integer(fn, point, exc: Exception) -> bool:
    """The refusal of an int or bool result is right when the program does
    return one (``v0 = round(...)``, ``return v0``): it has no gradient."""
    return "which has no gradient" in str(exc) and type(fn(**point)) in (int, bool)


def _run_grad(prog: Program, folder: str, label: str, use_sympy: bool) -> Outcome:
    try:
        fn = import_program(prog, folder, label)
    except Exception as exc:  # the generator produced invalid Python: a bug of the test
        return Outcome("mismatch", f"generated program does not import: {exc!r}")
    value = evaluate(fn, prog.point)
    if value is None:
        return Outcome("rejected")
    try:
        grad_fn = s2s_ad.grad(fn, prog.wrt)
        got = grad_fn(**prog.point)
    except s2s_ad.SourceError as exc:
        if _really_integer(fn, prog.point, exc):
            return Outcome("rejected")
        return Outcome("mismatch", f"refused a program of the supported subset:\n{exc}")
    except Exception:
        return Outcome("mismatch", "s2s-ad raised:\n" + traceback.format_exc(limit=6))
    grads = list(got) if isinstance(got, tuple) else [got]
    if len(grads) != len(prog.wrt_names):
        return Outcome("mismatch", f"expected {len(prog.wrt_names)} gradients, got {got!r}")
    outcome = Outcome("ok")
    fd_states = []
    for name, g in zip(prog.wrt_names, grads):
        if not isinstance(g, (int, float)) or not math.isfinite(g):
            return Outcome("mismatch", f"d/d{name} = {g!r} is not a finite number, though "
                           f"f({prog.point}) = {value}\n" + s2s_ad.source_of(grad_fn))
        verdict = fd_agrees(fn, prog.point, name, g, value)
        fd_states.append(verdict)
        if verdict is False:
            x = prog.point[name]
            fd = finite_difference(fn, prog.point, name, 5e-5 * max(1.0, abs(x)))
            return Outcome("mismatch", f"d/d{name}: s2s-ad {g!r}, finite differences {fd!r}\n"
                           + s2s_ad.source_of(grad_fn), fd="mismatch")
    outcome.fd = "skipped" if None in fd_states else "agrees"
    outcome.subject = Subject(fn, os.path.join(folder, f"fuzzprog_{label}.py"), prog.point,
                              prog.wrt, prog.wrt_names, grads, value, fd_agrees=fd_agrees)
    if use_sympy:
        if prog.ops > SYMPY_MAX_OPS:
            outcome.sympy = "skipped (size)"
        else:
            try:
                # check's own time budget: past it, sympy's symbolic work stops
                # and random points decide (reported as "agrees", not a proof).
                verdict = s2s_ad.check(fn, prog.wrt, at=prog.point, points=4,
                                       timeout=SYMPY_SECONDS)
                outcome.sympy = verdict.status
                if verdict.status == "mismatch":
                    return Outcome("mismatch", str(verdict) + "\n" + s2s_ad.source_of(grad_fn),
                                   outcome.fd, "mismatch")
            except Exception as exc:
                # sympy failing on an expression (not s2s-ad) is recorded, not hidden.
                outcome.sympy = f"error {type(exc).__name__}"
    return outcome


def run_numpy_one(prog, folder: str, label: str, copy_args: bool = False,
                  checks=("grad",)) -> Outcome:
    """A NumPy program (tests.programs_numpy, tests.programs_shifts): every
    element's partial derivative against finite differences in that element
    (fd_agrees); for a function returning a tuple, of item ``prog.output``.
    With ``copy_args`` the original gets copies of the arrays at every call.
    The other ``checks`` (tests.fuzz_checks) run when grad was right."""
    outcome = _run_numpy_grad(prog, folder, label, copy_args)
    if outcome.status == "ok" and len(checks) > 1:
        outcome.checks = run_checks(outcome.subject, checks, folder, label)
    outcome.subject = None
    return outcome


def _run_numpy_grad(prog, folder: str, label: str, copy_args: bool, convert=None) -> Outcome:
    """``convert``: applied to each array argument of the original's calls
    (tests.fuzz_families: a torch stand-in tensor)."""
    import numpy as np

    try:
        fn = getattr(import_source(folder, prog.source, f"fuzznp_{label}"), "f")
    except Exception as exc:
        return Outcome("mismatch", f"generated program does not import: {exc!r}")
    item = prog.output
    original = fn
    if copy_args or convert:
        def original(**kw):
            return fn(**{k: (convert or np.copy)(np.copy(v)) if isinstance(v, np.ndarray)
                         else v for k, v in kw.items()})
    objective = original if item is None else (lambda **kw: original(**kw)[item])
    with np.errstate(all="ignore"):
        value = evaluate(lambda **kw: float(objective(**kw)), prog.point)
    if value is None:
        return Outcome("rejected")
    try:  # a NaN in an element the result does not read: the point is outside the domain
        with np.errstate(invalid="raise", divide="raise", over="raise", under="ignore"):
            objective(**prog.point)
    except FloatingPointError:
        return Outcome("rejected")
    names = tuple(prog.wrt)
    try:
        # as the original is checked: an underflow (a product of tiny adjoints
        # rounding to 0) is no error (--numpy-loops seed 1007746)
        with np.errstate(all="raise", under="ignore"):
            grad_fn = s2s_ad.grad(fn, names, **({} if item is None else {"output": item}))
            got = grad_fn(**prog.point)
    except s2s_ad.SourceError as exc:
        return Outcome("mismatch", f"refused a program of the supported subset:\n{exc}")
    except Exception:
        return Outcome("mismatch", "s2s-ad raised:\n" + traceback.format_exc(limit=6))
    states = []
    for name, g in zip(names, got):
        base = prog.point[name]
        scalar = np.ndim(base) == 0
        g = np.asarray(g, dtype=float)
        if g.shape != np.shape(base):
            return Outcome("mismatch", f"d/d{name} has shape {g.shape}, expected {np.shape(base)}")
        for index in np.ndindex(np.shape(base)):
            def one(e, name=name, index=index, scalar=scalar):
                point = {k: np.array(v, dtype=float) if np.ndim(v) else v
                         for k, v in prog.point.items()}
                if scalar:
                    point[name] = e
                else:
                    point[name][index] = e
                with np.errstate(all="ignore"):
                    return float(objective(**point))
            x0 = float(base) if scalar else float(base[index])
            verdict = fd_agrees(one, {"e": x0}, "e", float(g[index]), value)
            states.append(verdict)
            if verdict is False:
                fd = finite_difference(one, {"e": x0}, "e", 5e-5 * max(1.0, abs(x0)))
                return Outcome("mismatch", f"d/d{name}{list(index)}: s2s-ad {float(g[index])!r}, "
                               f"finite differences {fd!r}\n" + s2s_ad.source_of(grad_fn),
                               fd="mismatch")
    done = Outcome("ok", fd="skipped" if None in states else "agrees")
    done.subject = Subject(fn, os.path.join(folder, f"fuzznp_{label}.py"), prog.point, names,
                           list(names), list(got), value, output=item)
    return done


LOCATED = re.compile(r"^\S+\.py:\d+:\d+: error: .*\n    .*\n    *\^$")
IN_PLACE = ("works in place", "changes in place since")


def run_alias_one(prog, folder: str, label: str, checks=("grad",)) -> Outcome:
    """An aliasing program (tests.programs_aliasing): as run_numpy_one, with
    every call of the original given copies of the arrays (NumPy's ``+=``
    may write into them); a refusal counts as "refused" when it is located
    and about the in-place write and the program is not a clear one; an
    accepted program must leave its arguments alone, as the gradient does."""
    import numpy as np

    def copies(point: dict) -> dict:
        return {k: np.copy(v) if isinstance(v, np.ndarray) else v for k, v in point.items()}

    point = copies(prog.point)
    try:
        with np.errstate(all="ignore"):
            getattr(import_source(folder, prog.source, f"fuzznp_{label}"), "f")(**copies(point))
    except Exception:  # (an index of a number, a shape mismatch: not a test of s2s-ad)
        return Outcome("rejected")
    o = run_numpy_one(prog, folder, label, copy_args=True, checks=checks)
    if o.status == "mismatch" and o.detail.startswith("refused a program"):
        error = o.detail.split("\n", 1)[1]
        if prog.clean:
            return Outcome("mismatch", "refused a program without aliases:\n" + error)
        if not LOCATED.match(error) or not any(w in error for w in IN_PLACE):
            return Outcome("mismatch", "refused without a located in-place message:\n" + error)
        return Outcome("refused", error)
    if o.status == "ok":
        fn = getattr(import_source(folder, prog.source, f"fuzznp_{label}"), "f")
        given = copies(point)
        with np.errstate(all="ignore"):
            fn(**given)
        changed = [k for k in given if isinstance(given[k], np.ndarray)
                   and not np.array_equal(given[k], point[k])]
        if changed:
            return Outcome("mismatch", f"f changes its argument(s) {changed} in place, and "
                           "s2s-ad gave it a gradient (which does not)")
    return o


def _helper_draw(seed: int, tuples: bool, carried: bool):
    """The ``--helpers`` program of ``seed``; a helper returning a tuple with
    ``--tuples``, carried across a loop too with ``--carried``."""
    return helper_program(RandomDraw(seed), items=tuples or carried, carried=carried)


def run_helper_one(prog, folder: str, label: str, *, use_sympy: bool = False,
                   checks=("grad",)) -> Outcome:
    """A program of tests.programs_helpers: run as its base family's programs
    are (a NumPy base is a loop restoring overwritten elements: no graphrun)."""
    if isinstance(prog, Program):
        return run_one(prog, folder, label, use_sympy=use_sympy, checks=checks)
    return run_numpy_one(prog, folder, label, checks=tuple(k for k in checks if k != "graphrun"))


def report(label: str, prog: Program, o: Outcome) -> str:
    """The program, the point and every failed check, to replay or make a test of."""
    item = getattr(prog, "output", None)
    output = "" if item is None else f" output={item}"
    failed = [(kind, c) for kind, c in o.checks.items() if c.status in ("wrong", "error")]
    if o.status == "mismatch":
        failed.insert(0, ("grad", o.grad_check()))
    head = "MISMATCH" if o.status == "mismatch" else "FAILURE"
    return (f"=== {head} {label}: wrt={prog.wrt!r}{output} at {prog.point}\n{prog.source}"
            + "".join(f"--- [{kind} {c.status}] {c.detail}\n" for kind, c in failed))


def failed(o: Outcome) -> bool:
    """Did grad or any other check say wrong or error?"""
    return o.status == "mismatch" or any(c.status in ("wrong", "error") for c in o.checks.values())


def soak(seeds, *, use_sympy: bool = True, out=sys.stdout, max_stmts: int = 5,
         max_depth: int = 3, numpy: bool = False, loops: bool = False,
         shifts: bool = False, aliasing: bool = False, conditions: bool = False,
         kinds: bool = False, helpers: bool = False, rules: bool = False, sums: bool = False,
         lists: bool = False, torch: bool = False, tuples: bool = False,
         carried: bool = False, checks=DEFAULT_CHECKS) -> Tally:
    from tests import fuzz_families
    tally = Tally()
    with tempfile.TemporaryDirectory(prefix="s2s-ad-fuzz-") as folder:
        for seed in seeds:
            label = f"seed{seed}"
            if lists or torch:
                prog, o = fuzz_families.run_seed(seed, folder, label, torch, checks)
                tally.equal[o.detail] = tally.equal.get(o.detail, 0) + (o.status == "ok")
            elif aliasing:
                prog = alias_program(RandomDraw(seed))
                o = run_alias_one(prog, folder, label, checks=checks)
            elif helpers or tuples or carried:
                prog = _helper_draw(seed, tuples, carried)
                o = run_helper_one(prog, folder, label, use_sympy=use_sympy, checks=checks)
            elif numpy or loops or shifts or kinds or rules or sums:
                prog = _numpy_generator(loops, shifts, kinds, rules, sums)(RandomDraw(seed))
                # tests.graph_run does not run loops restoring overwritten elements
                # (y[i] = y_old.pop()), which most of these loops are
                o = run_numpy_one(prog, folder, label, checks=tuple(
                    k for k in checks if not (loops and k == "graphrun")))
            else:
                prog = _scalar_program(seed, max_stmts, max_depth, conditions)
                o = run_one(prog, folder, label, use_sympy=use_sympy, checks=checks)
            tally.add(o, prog, label)
            if failed(o):
                print(report(label, prog, o), file=out, flush=True)
            if tally.tried % 500 == 0:
                print(f"... {tally.tried} programs, {len(tally.mismatches)} grad mismatches, "
                      f"{len(tally.failures)} failed checks", file=out, flush=True)
    return tally


def _scalar_program(seed: int, max_stmts: int, max_depth: int, conditions: bool) -> Program:
    if conditions:
        return condition_program(RandomDraw(seed), max_stmts=max_stmts, max_depth=max_depth)
    return program(RandomDraw(seed), max_stmts=max_stmts, max_depth=max_depth)


def _numpy_generator(loops: bool, shifts: bool, kinds: bool = False, rules: bool = False,
                     sums: bool = False):
    if sums:
        return sums_program
    if rules:
        return rules_program
    if kinds:
        return kinds_program
    return shift_program if shifts else numpy_loop_program if loops else numpy_program


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m tests.fuzz", description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=1000, help="how many programs")
    p.add_argument("--seed", type=int, default=0, help="first seed (program i uses seed+i)")
    p.add_argument("--no-sympy", action="store_true", help="finite differences only")
    p.add_argument("--stmts", type=int, default=5, help="most statements per program")
    p.add_argument("--depth", type=int, default=3, help="deepest expression nesting")
    p.add_argument("--numpy", action="store_true", help="NumPy programs (finite differences)")
    p.add_argument("--numpy-loops", action="store_true",
                   help="NumPy loops filling arrays by subscript assignment (finite differences)")
    p.add_argument("--numpy-shifts", action="store_true",
                   help="stable log-sum-exp/softmax shifts, perturbed, and reductions of "
                        "elementwise expressions of mixed shapes (finite differences)")
    p.add_argument("--numpy-rules", action="store_true",
                   help="NumPy programs over the newer rules: var/std, cumprod, flip, roll, "
                        "repeat, tile, stacks, inner, cross, einsum, det, inv, solve, ... "
                        "(tests.programs_rules; finite differences)")
    p.add_argument("--numpy-sums", action="store_true",
                   help="NumPy loops summing independent iterations (computed at once) and "
                        "near misses that stay loops (tests.programs_sums; finite differences)")
    p.add_argument("--numpy-aliasing", action="store_true",
                   help="augassign (y += e) through other names, views, helpers and arguments "
                        "(finite differences; located refusals counted apart)")
    p.add_argument("--numpy-kinds", action="store_true",
                   help="array code in helpers that never name NumPy, called with arrays, "
                        "numbers and both, from NumPy code or code without it "
                        "(tests.programs_kinds; finite differences)")
    p.add_argument("--conditions", action="store_true",
                   help="scalar programs whose if/while conditions combine and/or with "
                        "conditional expressions, and nested conditional expressions "
                        "(tests.programs_conditions)")
    p.add_argument("--helpers", action="store_true",
                   help="a scalar, condition or NumPy-loop program moved into a helper with "
                        "integer and inactive parameters, called directly, through another "
                        "helper, twice, in a loop or in a branch (tests.programs_helpers)")
    p.add_argument("--tuples", action="store_true",
                   help="the --helpers programs with the helper returning a tuple, which f "
                        "binds to a name and reads by index in a loop and in both arms of a "
                        "branch (tests.programs_helpers)")
    p.add_argument("--carried", action="store_true",
                   help="the --tuples programs carrying the tuple across a loop's iterations, "
                        "with break or continue on a test of an item (tests.programs_helpers)")
    p.add_argument("--lists", action="store_true",
                   help="lists grown at run time and written by index, in code of numbers and "
                        "NumPy code (tests.programs_lists)")
    p.add_argument("--torch", action="store_true",
                   help="NumPy programs written with torch's names, against central "
                        "differences on the stand-in and the NumPy twin (tests.programs_torch)")
    p.add_argument("--checks", type=_check_list, default=DEFAULT_CHECKS,
                   help=f"comma-separated checks of {', '.join(CHECKS + EXTRA_CHECKS)} "
                        f"(default {','.join(DEFAULT_CHECKS)}; grad always runs)")
    p.add_argument("--soak", action="store_true",
                   help=f"every check ({','.join(CHECKS)}): the CLI's module in a fresh "
                        "interpreter and the drawn graph run node by node too")
    p.add_argument("--show", action="store_true", help="print each program's source")
    args = p.parse_args(argv)
    checks = CHECKS if args.soak else args.checks
    seeds = range(args.seed, args.seed + args.n)
    if args.show:
        for s in seeds:
            if args.lists or args.torch:
                from tests.fuzz_families import draw
                prog = draw(s, args.torch)
                print(f"# seed {s}: wrt={prog.wrt!r} at {prog.point}\n{prog.source}")
                continue
            if args.helpers or args.tuples or args.carried:
                prog = _helper_draw(s, args.tuples, args.carried)
                print(f"# seed {s}: wrt={prog.wrt!r} at {prog.point}\n{prog.source}")
                continue
            if args.numpy_aliasing:
                prog = alias_program(RandomDraw(s))
                print(f"# seed {s}: clean={prog.clean} at {prog.point}\n{prog.source}")
                continue
            if args.numpy or args.numpy_loops or args.numpy_shifts or args.numpy_kinds \
                    or args.numpy_rules or args.numpy_sums:
                prog = _numpy_generator(args.numpy_loops, args.numpy_shifts, args.numpy_kinds,
                                        args.numpy_rules, args.numpy_sums)(RandomDraw(s))
                item = "" if prog.output is None else f" output={prog.output}"
                print(f"# seed {s}:{item} at {prog.point}\n{prog.source}")
                continue
            prog = _scalar_program(s, args.stmts, args.depth, args.conditions)
            print(f"# seed {s}: wrt={prog.wrt!r} at {prog.point}\n{prog.source}")
        return 0
    start = time.time()
    tally = soak(seeds, use_sympy=not args.no_sympy, max_stmts=args.stmts, max_depth=args.depth,
                 numpy=args.numpy, loops=args.numpy_loops, shifts=args.numpy_shifts,
                 aliasing=args.numpy_aliasing, conditions=args.conditions,
                 kinds=args.numpy_kinds, helpers=args.helpers, rules=args.numpy_rules,
                 sums=args.numpy_sums,
                 lists=args.lists, torch=args.torch, tuples=args.tuples, carried=args.carried,
                 checks=checks)
    print(tally.summary(time.time() - start))
    return 1 if tally.failures else 0


def _check_list(text: str) -> tuple:
    kinds = tuple(k.strip() for k in text.split(",") if k.strip())
    known = CHECKS + EXTRA_CHECKS
    unknown = [k for k in kinds if k not in known]
    if unknown:
        raise argparse.ArgumentTypeError(f"unknown checks {unknown}; known: {', '.join(known)}")
    return ("grad",) + tuple(k for k in kinds if k != "grad")


if __name__ == "__main__":
    sys.exit(main())
