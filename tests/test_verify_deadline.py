"""The time budget of symbolic checking (``verify._deadline``): it fires
inside the block even when its first expiry is lost, a deadline inside
another leaves the outer one in force, and leaving the block disarms it.
The loops below spin until the deadline fires, with a 10 s bound so that a
broken deadline fails the test instead of hanging the suite."""

import signal
import time

import pytest

from s2s_ad import verify


def spin(seconds=10.0):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass
    pytest.fail("the deadline did not fire")


def test_a_lost_expiry_is_followed_by_another():
    lost = 0
    with pytest.raises(verify._OutOfTime):
        with verify._deadline(0.05):
            try:
                spin()
            except verify._OutOfTime:
                lost += 1  # as if raised inside a finalizer, where it is dropped
            spin()
    assert lost == 1


def test_an_inner_deadline_leaves_the_outer_one_in_force():
    inner_fired = False
    with pytest.raises(verify._OutOfTime):
        with verify._deadline(0.3):
            try:
                with verify._deadline(0.05):
                    spin()
            except verify._OutOfTime:
                inner_fired = True
            spin()
    assert inner_fired


def test_an_inner_deadline_ends_no_later_than_the_outer_one():
    with pytest.raises(verify._OutOfTime):
        with verify._deadline(0.05):
            with verify._deadline(30.0):
                spin()


def test_leaving_the_block_disarms_the_timer_and_restores_the_handler():
    before = signal.getsignal(signal.SIGALRM)
    with verify._deadline(5.0):
        pass
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert signal.getsignal(signal.SIGALRM) is before
    with pytest.raises(verify._OutOfTime):
        with verify._deadline(0.05):
            spin()
    assert signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)
    assert signal.getsignal(signal.SIGALRM) is before
