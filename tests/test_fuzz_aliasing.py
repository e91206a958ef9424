"""Fixed programs of ``python -m tests.fuzz --numpy-aliasing`` (a few seconds;
the soak in docs/testing.md runs thousands): augmented assignment through
other names, views, helpers and arguments, against finite differences of the
function NumPy runs in place, or refused with a located message."""

import pytest

from tests.fuzz import report, run_alias_one
from tests.programs import RandomDraw
from tests.programs_aliasing import alias_program
from tests.soak import beyond

SEEDS = range(200)


@pytest.mark.parametrize("first", beyond(range(0, len(SEEDS), 100), 1))  # 100 of 200 seeds
def test_aliasing_programs_agree_or_are_refused_with_a_location(first, tmp_path):
    counts = {"ok": 0, "refused": 0, "rejected": 0, "clean": 0}
    for seed in SEEDS[first:first + 100]:
        prog = alias_program(RandomDraw(seed))
        outcome = run_alias_one(prog, str(tmp_path), f"al{seed}")
        assert outcome.status != "mismatch", report(f"seed {seed}", prog, outcome)
        counts[outcome.status] += 1
        counts["clean"] += prog.clean
    # both kinds keep being drawn: accepted ones (some with no alias at all) and refused ones
    assert counts["ok"] >= 30 and counts["refused"] >= 30 and counts["clean"] >= 10, counts


def test_the_runner_catches_a_lowering_that_ignores_aliasing(monkeypatch, tmp_path):
    """Without the checks of s2s_ad/frontend/aliasing.py the gradients are wrong and
    the runner says so (the oracle can fail)."""
    from s2s_ad.frontend import aliasing

    monkeypatch.setattr(aliasing.InPlaceNames, "check_inplace", lambda self, stmt, old: None)
    monkeypatch.setattr(aliasing.InPlaceNames, "after_inplace", lambda self, stmt, old, new: None)
    bad = sum(run_alias_one(alias_program(RandomDraw(seed)), str(tmp_path),
                            f"bad{seed}").status == "mismatch" for seed in range(60))
    assert bad >= 5, bad
