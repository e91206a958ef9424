import os
import sys

import pytest

HERE = os.path.dirname(__file__)
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "examples"))


@pytest.fixture
def wrong_sin(monkeypatch):
    """The built-in rule of math.sin made wrong, ∂sin(x)/∂x = sin(x): a check
    or a gradient test that cannot see it cannot fail."""
    from s2s_ad import api
    from s2s_ad.rules import RULES, Rule
    api.clear_cache()
    monkeypatch.setitem(RULES, "math.sin", Rule("math.sin", "math.sin(x)", ("math.sin(x)",)))
    yield
    api.clear_cache()


def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true",
                     help="rewrite the golden files under tests/golden instead of comparing")
    parser.addoption("--soak", action="store_true",
                     help="also run the long soaks marked @pytest.mark.soak (minutes each)")


def pytest_configure(config):
    config.addinivalue_line("markers", "soak: a long soak, run only with pytest --soak")
    config.addinivalue_line("markers", "gradbench_files: GradBench's own objective files "
                            "(tests/test_gradbench_files.py), run only when S2S_AD_GRADBENCH "
                            "names GradBench's python/gradbench directory")
    config.addinivalue_line("markers", "autograd_files: HIPS autograd's examples, read as "
                            "written (tests/test_autograd_files.py), run only when "
                            "S2S_AD_AUTOGRAD names an autograd checkout")
    config.addinivalue_line("markers", "tangent_files: google/tangent's test functions, read "
                            "as written (tests/test_tangent_files.py), run only when "
                            "S2S_AD_TANGENT names a tangent checkout")
    if config.getoption("--soak"):
        os.environ["S2S_SOAK"] = "1"  # tests/soak.py: the breadth of the soak


def pytest_collection_modifyitems(config, items):
    if config.getoption("--soak"):
        return
    skip = pytest.mark.skip(reason="a long soak: run with pytest --soak")
    for item in items:
        # the marker, not ``"soak" in item.keywords``: keywords hold the names
        # of the folders above the test too (a checkout in a folder named soak)
        if item.get_closest_marker("soak") is not None:
            item.add_marker(skip)


def pytest_terminal_summary(terminalreporter):
    """The differences measured by tests/test_gradbench_files.py, when it ran."""
    module = sys.modules.get("gradbench_files")
    if module is not None and module.ROWS:
        terminalreporter.section("GradBench's own files: relative differences")
        terminalreporter.write_line(module.table(module.ROWS))


@pytest.fixture
def golden(request):
    """golden(name, text): compare ``text`` with tests/golden/name (or rewrite
    it with --update-golden). Golden files show readability; correctness is
    tested against sympy and finite differences elsewhere."""
    update = request.config.getoption("--update-golden")

    def check(name: str, text: str) -> None:
        path = os.path.join(HERE, "golden", name)
        if update or not os.path.exists(path):
            if not update:
                pytest.fail(f"golden file {name} is missing; run pytest --update-golden and review it")
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            return
        with open(path, encoding="utf-8") as f:
            expected = f.read()
        assert text == expected, f"generated text differs from tests/golden/{name}"

    return check


@pytest.fixture
def pairs(monkeypatch):
    """Every helper keeps its forward/backward pair (small ones are otherwise
    inlined, s2s_ad/frontend/inline.py): for tests of the pairs themselves."""
    from s2s_ad import api
    from s2s_ad.frontend import inline
    monkeypatch.setattr(inline, "MAX_OPS", 0)
    api.clear_cache()
    yield
    api.clear_cache()
