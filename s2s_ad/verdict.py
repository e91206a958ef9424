"""The verdict of :func:`s2s_ad.check`: one result per parameter, and a report.

Both checks produce it: the symbolic one (:mod:`s2s_ad.verify`) and the
numeric one (:mod:`s2s_ad.verify_arrays`).
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class ParamResult:
    name: str
    status: str  # "proved" | "agrees" | "mismatch" | "undecided"
    expected: object
    got: object
    detail: str = ""


@dataclass
class Verdict:
    function: str
    results: list[ParamResult]
    notes: list[str] = field(default_factory=list)
    rules: list[str] = field(default_factory=list)
    """User derivative rules the gradient rests on (one description each);
    the verdict holds given that they are right."""

    @property
    def status(self) -> str:
        statuses = {r.status for r in self.results}
        for s in ("mismatch", "undecided", "agrees"):
            if s in statuses:
                return s
        return "proved"

    @property
    def ok(self) -> bool:
        """Proved, or agrees numerically."""
        return self.status in ("proved", "agrees")

    def __str__(self) -> str:
        lines = []
        for r in self.results:
            if r.status == "proved":
                lines.append(f"d{self.function}/d{r.name}: proved  ({r.got})")
            elif r.status == "agrees":
                # A finite-difference check never ran sympy on the result:
                # say "not proved" only where sympy was asked.
                why = ("" if "central differences" in r.detail
                       else "; sympy could not prove it symbolically")
                lines.append(f"d{self.function}/d{r.name}: agrees numerically {r.detail}{why}")
            elif r.status == "undecided":
                lines.append(f"d{self.function}/d{r.name}: UNDECIDED: {r.detail}; sympy could "
                             "not prove it either (pass --at to choose the point)")
            else:
                lines.append(f"d{self.function}/d{r.name}: MISMATCH {r.detail}\n"
                             f"    sympy.diff : {r.expected}\n    generated  : {r.got}")
        lines += [f"note: {n}" for n in self.notes]
        head = {"proved": "PROVED", "agrees": "AGREES NUMERICALLY", "mismatch": "MISMATCH",
                "undecided": "UNDECIDED"}
        return f"{head[self.status]}: gradient of {self.function}\n" + "\n".join(lines)
