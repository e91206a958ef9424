"""Writing test programs to real files: s2s-ad reads a function's source, so
a function defined in a test's string must live in an importable ``.py`` file."""

from __future__ import annotations

import importlib.util
import os
import sys
import types


def import_source(folder: str, text: str, modname: str) -> types.ModuleType:
    """Write ``text`` to ``folder/modname.py`` and import it as ``modname``."""
    path = os.path.join(str(folder), modname + ".py")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    spec = importlib.util.spec_from_file_location(modname, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[modname] = module
    try:
        spec.loader.exec_module(module)
    finally:
        sys.modules.pop(modname, None)
    return module


def run_generated(folder, module: str, function: str, args) -> list:
    """Call ``module.function(*args)`` (a generated module in ``folder``) in
    a fresh interpreter that has no s2s-ad, and return each gradient it
    returns as a NumPy array (args: numbers and arrays)."""
    import ast
    import subprocess

    import numpy as np

    literal = ", ".join(f"np.array({a.tolist()!r})" if isinstance(a, np.ndarray) else repr(a)
                        for a in args)
    probe = (f"import sys, numpy as np, {module}\n"
             f"g = {module}.{function}({literal})\n"
             "g = g if isinstance(g, tuple) else (g,)\n"
             "assert 's2s_ad' not in sys.modules\n"
             "print(repr([np.asarray(v).tolist() for v in g]))\n")
    run = subprocess.run([sys.executable, "-c", probe], cwd=str(folder), capture_output=True,
                         text=True, env={"PATH": os.environ.get("PATH", "")}, timeout=120)
    assert run.returncode == 0, run.stderr
    return [np.array(v) for v in ast.literal_eval(run.stdout.strip())]


def cli_grad(folder, text: str, name: str, args) -> list:
    """``s2s-ad grad FILE:name -o grad_file.py`` on ``text`` written to a file
    in ``folder``, then the generated module called in a fresh interpreter
    without s2s-ad (:func:`run_generated`): its gradients."""
    import subprocess

    src = os.path.join(str(folder), "cli_src.py")
    with open(src, "w", encoding="utf-8") as f:
        f.write(text)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = f"cli_grad_{name}"
    done = subprocess.run([sys.executable, "-m", "s2s_ad", "grad", f"{src}:{name}", "-o",
                           os.path.join(str(folder), out + ".py")], capture_output=True,
                          text=True, timeout=300, env=dict(os.environ, PYTHONPATH=root))
    assert done.returncode == 0, done.stderr
    return run_generated(folder, out, f"grad_{name}", args)


class on_path:
    """``with on_path(folder, name, text):`` writes ``text`` to the module
    ``folder/name.py`` and makes it importable inside the block (a generated
    gradient module a probe module imports, for reverse over its file); the
    folder leaves ``sys.path`` and the module ``sys.modules`` after it."""

    def __init__(self, folder, name: str, text: str):
        self.folder, self.name = str(folder), name
        with open(os.path.join(self.folder, name + ".py"), "w", encoding="utf-8") as f:
            f.write(text)

    def __enter__(self):
        sys.path.insert(0, self.folder)
        return self

    def __exit__(self, *exc):
        sys.path.remove(self.folder)
        sys.modules.pop(self.name, None)
        return False
