"""Breadth left to ``pytest --soak``: the default run keeps a sample of a long
parametrisation (every construct and position at least once), the soak runs
every case. Cases marked here are skipped without ``--soak`` (tests/conftest.py)
and show as skipped, with the reason, in the default run's count; counts
inside one test (hypothesis examples, seeds a test loops over) come from
:func:`breadth`."""

from __future__ import annotations

import os

import pytest


def beyond(cases, keep: int) -> list:
    """``cases`` (single values) as parameters, all but the first ``keep``
    marked soak: ``@pytest.mark.parametrize("seed", beyond(range(40), 15))``."""
    return [c if i < keep else pytest.param(c, marks=pytest.mark.soak)
            for i, c in enumerate(cases)]


def rows_beyond(rows, keep: int) -> list:
    """:func:`beyond` for rows of several values (``parametrize("name, wrt",
    ...)``): each row unpacked into one case, ids as pytest makes them."""
    return [pytest.param(*r) if i < keep else pytest.param(*r, marks=pytest.mark.soak)
            for i, r in enumerate(rows)]


def soak(*values, id=None):
    """One case of a parametrisation, run only with ``--soak``."""
    return pytest.param(*values, marks=pytest.mark.soak, id=id)


def on() -> bool:
    """Whether this run is a soak: tests/conftest.py sets ``S2S_SOAK=1`` for
    ``pytest --soak`` before any test module is imported."""
    return os.environ.get("S2S_SOAK") == "1"


def breadth(default: int, soak_run: int) -> int:
    """How many examples or seeds a test takes: ``default`` in the default
    run, ``soak_run`` with ``--soak``."""
    return soak_run if on() else default


def in_turn(rows, columns) -> list:
    """The grid ``rows`` x ``columns`` (constructs x positions: helper, loop,
    branch...) as ``(row, column)`` parameters, ids ``row-column``: in the
    default run the first row in every column and row ``k`` in column ``k %
    len(columns)`` besides (every row and every column at least once), every
    pair with ``--soak``."""
    rows, columns = list(rows), list(columns)
    return [(pytest.param if k == 0 or c == columns[k % len(columns)] else soak)(
        r, c, id=f"{r}-{c}") for k, r in enumerate(rows) for c in columns]
