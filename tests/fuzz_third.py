"""The fuzzer's ``third`` check (only when named: ``--checks grad,third``):
third derivatives of a random program through files.

The CLI's gradient module of the program (``s2s-ad grad FILE:f -o g1.py``)
is called by a probe module, ``probe(params) = ½ Σ |grad_f(params)|²`` (a
function of the program's parameters whose gradient is ``H·∇f``), and the
``second`` check (:func:`tests.fuzz_checks.check_second`) runs on that
probe: the CLI's gradient module of the probe (``H·∇f``, made from a module
that calls ``g1.py``) read back from its file, its JVP along a direction and
reverse over it, against central differences of it. Those are third
derivatives of the program (``∂³f[∇f, v] + H·H·v``), each compared with
differences of a second derivative; a refusal of a generated module is
*refused*, located, as in ``second``."""

from __future__ import annotations

import inspect
import os
import sys

import numpy as np

from tests.fuzz_checks import Check, Subject, _copies, _raised, check_second, cli_gradient
from tests.modules import import_source


def check_third(s: Subject, folder: str, label: str) -> Check:
    name = s.fn.__name__
    module = f"{label}_third_grad"
    first = cli_gradient(s, folder, os.path.join(folder, module + ".py"), f"{module}_again")
    if isinstance(first, Check):
        return first
    names = list(s.point)
    sys.path.insert(0, folder)
    try:
        with np.errstate(all="ignore"):
            returned = first(**_copies(s.point))
        items = returned if isinstance(returned, tuple) else (returned,)
        outs = [next(f"r{k}_third{j or ''}" for j in range(100)
                     if f"r{k}_third{j or ''}" not in names) for k in range(len(items))]
        arrays = bool(s.arrays) or any(np.ndim(v) for v in items)
        terms = [f"np.sum({o} * {o})" if arrays else f"{o} * {o}" for o in outs]
        lhs = ", ".join(outs) + ("," if isinstance(returned, tuple) and len(items) == 1 else "")
        # the program's own signature (keyword-only parameters stay so), each
        # argument passed on by name
        text = (("import numpy as np\n" if arrays else "") +
                f"from {module} import grad_{name} as first_grad\n\n\n"
                f"def probe{inspect.signature(s.fn)}:\n"
                f"    {lhs} = first_grad({', '.join(f'{n}={n}' for n in names)})\n"
                f"    return 0.5 * ({' + '.join(terms)})\n")
        probe_label = f"{label}_third_probe"
        probe = import_source(folder, text, probe_label).probe
        with np.errstate(all="ignore"):
            value = probe(**_copies(s.point))
        subject = Subject(probe, os.path.join(folder, probe_label + ".py"), s.point, s.wrt,
                          s.wrt_names, [], value)
        return check_second(subject, folder, probe_label)
    except Exception:
        return _raised("the third-order probe of the gradient file")
    finally:
        sys.path.remove(folder)
        sys.modules.pop(module, None)
