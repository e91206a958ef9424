"""Transform time against program size: how long s2s-ad takes to write a gradient.

    python benchmarks/transform_time.py           # every family and size
    python benchmarks/transform_time.py nested    # one family: straight, nested or loops

Three families of generated programs, each at growing size:

* ``straight``: n straight-line statements ``a = a * x + c * y``;
* ``nested``: ``if`` statements nested d deep, each with one assignment;
* ``loops``: n sequential ``for i in range(3)`` loops, each updating ``a``.

For each, the time of ``s2s_ad.gradient_source`` (source → lowering → reverse
transform → copy elimination → emitted module text; the fastest of a few runs
for the small programs) and the time per 1,000 statements of the function, in
CPU seconds (the wall time is shown too; on a shared machine it also counts the
waits for a core).
The transform should be linear in the program's size: the per-1,000 column
stays flat as the programs grow, and under the target of 1 s.

The programs are written to a temporary folder and imported, because s2s-ad
reads a function's source.
"""

from __future__ import annotations

import ast
import importlib.util
import os
import platform
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import s2s_ad  # noqa: E402

TARGET = 1.0
"""Seconds per 1,000 statements."""


def straight(n: int) -> str:
    """``n`` straight-line statements."""
    lines = ["def f(x, y):", "    a = x * y"]
    lines += [f"    a = a * x + {i % 7 + 1}.0 * y" for i in range(n - 2)]
    return "\n".join(lines + ["    return a"]) + "\n"


def nested(depth: int) -> str:
    """``depth`` nested ``if`` statements, each assigning ``a``."""
    lines = ["def f(x, y):", "    a = x * y"]
    indent = "    "
    for i in range(depth):
        lines.append(f"{indent}if x > {i - depth}.0:")
        indent += "    "
        lines.append(f"{indent}a = a * x + y")
    return "\n".join(lines + ["    return a"]) + "\n"


def loops(n: int) -> str:
    """``n`` sequential loops, each carrying ``a``."""
    lines = ["def f(x, y):", "    a = x * y"]
    for _ in range(n):
        lines += ["    for i in range(3):", "        a = a * x + y"]
    return "\n".join(lines + ["    return a"]) + "\n"


FAMILIES = {
    "straight": (straight, [10, 30, 100, 300, 1000], "statements"),
    "nested": (nested, [5, 10, 20, 30, 50], "depth"),
    "loops": (loops, [10, 30, 100, 300, 500], "loops"),
}


def load(text: str, folder: str, name: str):
    """Write ``text`` to ``folder/name.py``, import it and return its ``f``."""
    path = os.path.join(folder, name + ".py")
    with open(path, "w", encoding="utf-8") as out:
        out.write(text)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.f


def statements(text: str) -> int:
    """Statements in the function of ``text``, nested ones included."""
    func = ast.parse(text).body[0]
    return sum(isinstance(n, ast.stmt) for n in ast.walk(func)) - 1


def transform_time(fn, repeat: int) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of the fastest of ``repeat`` runs. The CPU
    time (``time.process_time``) leaves out the time this process waited for
    a core, so it is what the target is judged on: on a shared machine the
    wall time also measures the other users."""
    best = (float("inf"), float("inf"))
    for _ in range(repeat):
        start, cpu = time.perf_counter(), time.process_time()
        s2s_ad.gradient_source(fn)
        best = min(best, (time.perf_counter() - start, time.process_time() - cpu),
                   key=lambda t: t[1])
    return best


def main(argv: list[str]) -> int:
    chosen = [f for f in FAMILIES if not argv or f in argv]
    load_avg = f", load average {os.getloadavg()[0]:.2f}" if hasattr(os, "getloadavg") else ""
    print(f"Python {platform.python_version()}{load_avg}; target: under {TARGET:g} s per "
          "1,000 statements")
    print()
    print(f"{'family':<10}{'size':>12}{'statements':>12}{'wall':>10}{'CPU':>10}"
          f"{'CPU per 1,000':>15}")
    worst = 0.0
    with tempfile.TemporaryDirectory(prefix="s2s-ad-transform-") as folder:
        for family in chosen:
            make, sizes, unit = FAMILIES[family]
            for n in sizes:
                text = make(n)
                fn = load(text, folder, f"{family}_{n}")
                count = statements(text)
                wall, cpu = transform_time(fn, repeat=3 if count < 200 else 2)
                per = cpu / count * 1000
                worst = max(worst, per)
                print(f"{family:<10}{f'{n} {unit}':>12}{count:>12}{wall:>9.3f}s{cpu:>9.3f}s"
                      f"{per:>14.3f}s", flush=True)
    print()
    print(f"worst: {worst:.3f} s of CPU per 1,000 statements: target "
          f"{'met' if worst < TARGET else 'not met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
