"""The verdict of :func:`s2s_ad.check`: one result per parameter, and a report.

Both checks produce it: the symbolic one (:mod:`s2s_ad.verify`) and the
numeric one (:mod:`s2s_ad.verify_arrays`). A symbolic check of a function
that branches has one :class:`PathResult` per distinct path it found; the
per-parameter ``results`` are then each parameter's worst result over the
paths (a mismatch on one path is a mismatch).
"""

from __future__ import annotations

from dataclasses import dataclass, field

_ORDER = ("mismatch", "undecided", "agrees", "proved")


@dataclass
class ParamResult:
    name: str
    status: str  # "proved" | "agrees" | "mismatch" | "undecided"
    expected: object
    got: object
    detail: str = ""


@dataclass
class PathResult:
    """One path through the function's comparisons: the point that took it
    (``"x=0.5, y=0.7"``), how it was found (``"the sample point"``,
    ``"random point 3"``), the decisions, and the result per parameter."""
    point: str
    found: str
    decisions: list[str]
    results: list[ParamResult]

    @property
    def status(self) -> str:
        return _worst(r.status for r in self.results)


def _worst(statuses) -> str:
    statuses = set(statuses)
    return next((s for s in _ORDER if s in statuses), "proved")


@dataclass
class Verdict:
    function: str
    results: list[ParamResult]
    notes: list[str] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)
    """User derivative rules the gradient rests on (one description each);
    the verdict holds given that they are right."""
    paths: list[PathResult] = field(default_factory=list)
    """The distinct paths found, when the function branches (else empty)."""
    order: int = 1
    """2 for a check of second derivatives: each result is named ``"x,y"``."""

    @classmethod
    def of_paths(cls, function: str, paths: list[PathResult], notes: list[str],
                 rules: list[str]) -> "Verdict":
        """A verdict over ``paths``: a path-free function (one path, no
        decisions) reads as before; otherwise each parameter's result is its
        worst over the paths, its detail naming the path."""
        if len(paths) == 1 and not paths[0].decisions:
            return cls(function, paths[0].results, notes, rules)
        results = []
        for k, first in enumerate(paths[0].results):
            on = [(i, p.results[k]) for i, p in enumerate(paths)]
            i, worst = min(on, key=lambda pair: _ORDER.index(pair[1].status))
            detail = (f"on path {i + 1} of {len(paths)}: {worst.detail}"
                      if worst.status != "proved" else worst.detail)
            results.append(ParamResult(worst.name, worst.status, worst.expected, worst.got,
                                       detail))
        return cls(function, results, notes, rules, paths)

    @property
    def status(self) -> str:
        return _worst(r.status for r in self.results)

    @property
    def ok(self) -> bool:
        """Proved, or agrees numerically."""
        return self.status in ("proved", "agrees")

    def _line(self, r: ParamResult) -> str:
        d = f"d{self.function}/d{r.name}"
        if self.order == 2:
            d = f"d²{self.function}/" + "".join(f"d{n}" for n in r.name.split(","))
        if r.status == "proved":
            return f"{d}: proved  ({r.got})"
        if r.status == "agrees":
            # A finite-difference check never ran sympy on the result:
            # say "not proved" only where sympy was asked.
            why = ("" if "central differences" in r.detail
                   else "; sympy could not prove it symbolically")
            return f"{d}: agrees numerically {r.detail}{why}"
        if r.status == "undecided":
            return (f"{d}: UNDECIDED: {r.detail}; sympy could "
                    "not prove it either (pass --at to choose the point)")
        return (f"{d}: MISMATCH {r.detail}\n"
                f"    sympy.diff : {r.expected}\n    generated  : {r.got}")

    def _head(self) -> str:
        head = {"proved": "PROVED", "agrees": "AGREES NUMERICALLY", "mismatch": "MISMATCH",
                "undecided": "UNDECIDED"}[self.status]
        if not self.paths:
            return head
        n = len(self.paths)
        which = [i + 1 for i, p in enumerate(self.paths) if p.status == self.status]
        counted = f"{head} on {len(which)} of {n} path{'s' * (n != 1)} found"
        if self.status == "proved":
            return counted
        proved = sum(p.status == "proved" for p in self.paths)
        numeric = [i + 1 for i, p in enumerate(self.paths) if p.status == "agrees"]
        extra = []
        if self.status != "agrees" and numeric:
            extra.append(f"only numerically on {_paths(numeric)}")
        if proved:
            extra.append(f"proved on {proved}")
        return f"{counted} ({_paths(which)}" + "".join(f"; {e}" for e in extra) + ")"

    def __str__(self) -> str:
        lines = []
        if self.paths:
            n = len(self.paths)
            for i, p in enumerate(self.paths):
                state = {"proved": "proved", "agrees": "checked numerically only",
                         "mismatch": "MISMATCH", "undecided": "UNDECIDED"}[p.status]
                lines.append(f"path {i + 1} of {n}: {state}, taken at {p.point} ({p.found}): "
                             + "; ".join(p.decisions))
                lines += ["    " + line for r in p.results for line in self._line(r).split("\n")]
        else:
            lines = [self._line(r) for r in self.results]
        lines += [f"note: {n}" for n in self.notes]
        what = "second derivatives" if self.order == 2 else "gradient"
        return f"{self._head()}: {what} of {self.function}\n" + "\n".join(lines)


def _paths(numbers: list[int]) -> str:
    return ("path " if len(numbers) == 1 else "paths ") + ", ".join(map(str, numbers))
