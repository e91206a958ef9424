"""Run every benchmark workload and print the ratios.

    python benchmarks/run.py            # all workload modules
    python benchmarks/run.py scalar     # only benchmarks/workloads_scalar.py

Each ``benchmarks/workloads_*.py`` defines ``WORKLOADS``, a list of
:class:`harness.Workload`; a module that sets ``JVP = True`` also gets a
forward-mode table (``s2s_ad.jvp`` of each workload against the function); a
module defining ``report()`` prints its own table instead (``workloads_second``:
Hessian-vector products and Hessians).

BLAS runs on one thread (``OPENBLAS_NUM_THREADS``, ``OMP_NUM_THREADS`` and
``MKL_NUM_THREADS`` set to 1 unless already set): a thread pool's timings
depend on what else runs on the machine's cores. The first line printed says
which setting, Python and NumPy were used.
"""

from __future__ import annotations

import os

# Before anything imports NumPy: BLAS reads these once, when it loads.
THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
_PRESET = {v for v in THREAD_VARIABLES if v in os.environ}
for _v in THREAD_VARIABLES:
    os.environ.setdefault(_v, "1")

import glob  # noqa: E402
import importlib  # noqa: E402
import platform  # noqa: E402
import sys  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))

import harness  # noqa: E402


def header() -> str:
    import numpy as np

    threads = " ".join(f"{v}={os.environ[v]}" + (" (set by the caller)" if v in _PRESET else "")
                       for v in THREAD_VARIABLES)
    load = f", load average {os.getloadavg()[0]:.2f}" if hasattr(os, "getloadavg") else ""
    return f"{threads}; Python {platform.python_version()}; NumPy {np.__version__}{load}"


def main(argv: list[str]) -> None:
    print(header())
    print()
    names = sorted(os.path.basename(p)[len("workloads_"):-3]
                   for p in glob.glob(os.path.join(HERE, "workloads_*.py")))
    chosen = [n for n in names if not argv or n in argv]
    for name in chosen:
        module = importlib.import_module(f"workloads_{name}")
        print(f"== {name}")
        if hasattr(module, "report"):  # a module with its own table (workloads_second)
            print(module.report())
            print()
            continue
        print(harness.report(harness.run(module.WORKLOADS)))
        if getattr(module, "JVP", False):
            print()
            print(harness.report_jvp(harness.run_jvp(module.WORKLOADS)))
        print()


if __name__ == "__main__":
    main(sys.argv[1:])
