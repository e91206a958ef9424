"""The fuzzer's families of run-time lists and of torch-flavoured code.

* ``--lists`` (:mod:`tests.programs_lists`): lists grown by ``append`` in
  loops over run-time ranges, read by index, summed, iterated, comprehended,
  passed to helpers, stacked, written by index; run as the NumPy families are
  (:func:`tests.fuzz.run_numpy_one`: every element's partial derivative
  against central differences; the other checks when grad agreed).
* ``--torch`` (:mod:`tests.programs_torch`): the NumPy programs written with
  torch's names. :func:`run_torch_one` compares the torch program's gradient
  with central differences of the torch function itself, run on the stand-in
  tensors of :mod:`tests.torch_standin` (torch's meaning, in NumPy), and with
  the gradient of the same program written with NumPy's names: equal to
  rounding (1e-12 relative), counted apart when bitwise equal
  (``Outcome.detail`` says "bitwise" or "rounding").
"""

from __future__ import annotations

import traceback

import numpy as np

import s2s_ad
from tests.fuzz import Outcome, _run_numpy_grad
from tests.fuzz_checks import run_checks
from tests.modules import import_source


def to_tensor(v):
    from tests.torch_standin import Tensor
    return np.asarray(v).view(Tensor)


def run_torch_one(prog, folder: str, label: str, checks=("grad",)) -> Outcome:
    """A program of tests.programs_torch (module docstring)."""
    o = _run_numpy_grad(prog, folder, label, False, convert=to_tensor)
    if o.status != "ok":
        return o
    subject = o.subject
    try:
        twin = getattr(import_source(folder, prog.numpy_source, f"fuzztwin_{label}"), "f")
        with np.errstate(all="raise", under="ignore"):
            want = s2s_ad.grad(twin, tuple(prog.wrt),
                               **({} if prog.output is None else {"output": prog.output})
                               )(**{k: np.copy(v) if isinstance(v, np.ndarray) else v
                                    for k, v in prog.point.items()})
    except Exception:
        return Outcome("mismatch", "the NumPy twin failed:\n" + traceback.format_exc(limit=6)
                       + prog.numpy_source)
    bitwise = True
    for name, g, w in zip(prog.wrt, subject.grads, want):
        g, w = np.asarray(g, dtype=float), np.asarray(w, dtype=float)
        if g.shape != w.shape or not np.all(np.abs(g - w) <= 1e-12 * np.maximum(1.0, np.abs(w))):
            return Outcome("mismatch", f"d/d{name}: the torch program's gradient {g!r}, the "
                           f"NumPy twin's {w!r}\n--- NumPy twin:\n{prog.numpy_source}")
        bitwise = bitwise and np.array_equal(g, w)
    o.detail = "bitwise" if bitwise else "rounding"
    if len(checks) > 1:
        o.checks = run_checks(subject, checks, folder, label)
    o.subject = None
    return o


def draw(seed: int, torch: bool):
    from tests.programs import RandomDraw
    from tests.programs_lists import list_program
    from tests.programs_torch import torch_program
    return (torch_program if torch else list_program)(RandomDraw(seed))


def run_seed(seed: int, folder: str, label: str, torch: bool, checks) -> tuple:
    """(program, outcome) of seed ``seed`` of the ``--torch`` or ``--lists`` family."""
    from tests.fuzz import run_numpy_one
    prog = draw(seed, torch)
    if torch:
        return prog, run_torch_one(prog, folder, label, checks=checks)
    return prog, run_numpy_one(prog, folder, label, checks=checks)
