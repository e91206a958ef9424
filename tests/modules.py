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
