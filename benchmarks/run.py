"""Run every benchmark workload and print the ratios.

    python benchmarks/run.py            # all workload modules
    python benchmarks/run.py scalar     # only benchmarks/workloads_scalar.py

Each ``benchmarks/workloads_*.py`` defines ``WORKLOADS``, a list of
:class:`harness.Workload`.
"""

from __future__ import annotations

import glob
import importlib
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import harness  # noqa: E402


def main(argv: list[str]) -> None:
    names = sorted(os.path.basename(p)[len("workloads_"):-3]
                   for p in glob.glob(os.path.join(HERE, "workloads_*.py")))
    chosen = [n for n in names if not argv or n in argv]
    for name in chosen:
        module = importlib.import_module(f"workloads_{name}")
        print(f"== {name}")
        print(harness.report(harness.run(module.WORKLOADS)))
        print()


if __name__ == "__main__":
    main(sys.argv[1:])
