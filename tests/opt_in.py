"""The opt-in test modules over another project's checkout (GradBench's,
autograd's): skipped unless an environment variable names the checkout,
failed at once when it names something else."""

import contextlib
import importlib
import os
import sys

import pytest


def checkout(variable: str, what: str, helpers: str):
    """The module ``helpers`` (its ``root()`` and ``check_root(path)``), once
    ``variable`` names a checkout it accepts; the calling test module is
    skipped when ``variable`` is not set, before ``helpers`` is imported."""
    if not os.environ.get(variable):
        pytest.skip(f"{what}: set {variable}", allow_module_level=True)
    module = importlib.import_module(helpers)
    problem = module.check_root(module.root())
    if problem:
        pytest.fail(problem, pytrace=False)
    return module


@contextlib.contextmanager
def modules_replaced(standins: dict):
    """``sys.modules[name]`` set to each stand-in meanwhile (None: importing
    the name raises ImportError), then what was there put back."""
    saved = {m: sys.modules.get(m) for m in standins}
    sys.modules.update(standins)
    try:
        yield
    finally:
        for m, held in saved.items():
            if held is None:
                sys.modules.pop(m, None)
            else:
                sys.modules[m] = held
