"""pytest plugin: ``@pytest.mark.s2s_check(fn, ...)`` proves ``fn``'s gradient.

Registered through the ``pytest11`` entry point, so installing s2s-ad makes
the marker available in every test suite (``pytest -p no:s2s_ad`` turns it
off). A test so marked first runs
:func:`s2s_ad.testing.assert_gradient` with the marker's arguments — the
function, then ``wrt``, ``at``, ``shapes``, ``args``, ``output``,
``lengths``, ``like``, ``points``, ``seed``, ``timeout``, ``proof`` as keywords — and
fails with its message when the gradient is wrong; then the test's own body
runs::

    @pytest.mark.s2s_check(nll, wrt=("mu", "log_sigma"), at={"log_sigma": 0.1})
    def test_nll_gradient():
        pass

pytest takes a marker's lone function argument for the test it decorates,
so give at least one keyword (``wrt=None`` will do) or pass ``fn=f``.
Several markers on one test check several functions. s2s-ad (and sympy) is
imported only when a marked test runs.
"""

from __future__ import annotations

import pytest

MARKER = "s2s_check"


def pytest_configure(config):
    config.addinivalue_line(
        "markers", f"{MARKER}(fn, wrt=None, at=None, shapes=None, args=None, ...): prove the "
        "gradient s2s-ad generates for fn (s2s_ad.testing.assert_gradient) before the test runs")


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item):
    __tracebackhide__ = True
    marks = list(item.iter_markers(name=MARKER))
    if not marks:
        return
    from s2s_ad.testing import assert_gradient
    for mark in reversed(marks):  # closest to the function last: in the order written
        kwargs = dict(mark.kwargs)
        if len(mark.args) == 1 and "fn" not in kwargs:
            fn = mark.args[0]
        elif not mark.args and "fn" in kwargs:
            fn = kwargs.pop("fn")
        else:
            pytest.fail(f"@pytest.mark.{MARKER} takes the function to check as its one "
                        f"positional argument and the rest as keywords, e.g. "
                        f"@pytest.mark.{MARKER}(f, wrt='x', at={{'x': 0.5}}); got "
                        f"{len(mark.args)} positional argument(s)", pytrace=False)
        assert_gradient(fn, **kwargs)
