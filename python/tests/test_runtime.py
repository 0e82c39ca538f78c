"""Long computations: the interpreter's lock released, progress, interrupts."""

from __future__ import annotations

import _thread
import threading
import time

import pytest

import shufflecert as sc

TERNARY = "fixtures/mechanisms/ternary.toml"


def test_the_lock_is_released_while_the_engine_works():
    """A Python thread keeps running (ticking every millisecond) while another waits for a
    profile that takes a while."""
    ticks = []
    done = threading.Event()

    def ticker():
        while not done.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.001)

    t = threading.Thread(target=ticker)
    t.start()
    start = time.monotonic()
    sc.profile(sc.Mechanism.binary_rr(eps0="1"), n=20000, delta="1e-6", threads=1)
    elapsed = time.monotonic() - start
    done.set()
    t.join()
    during = [x for x in ticks if start <= x <= start + elapsed]
    # Held for the whole run, the lock would allow none (the ticker starves).
    assert len(during) >= max(5, int(elapsed / 0.001 / 10)), (len(during), elapsed)


def test_two_threads_compute_together():
    """Two single-threaded profiles in two Python threads overlap in time."""
    m = sc.Mechanism.binary_rr(eps0="1")
    spans = {}

    def job(i):
        start = time.monotonic()
        r = sc.profile(m, n=20000, delta="1e-6", threads=1)
        spans[i] = (start, time.monotonic(), r.eps_profile)

    threads = [threading.Thread(target=job, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    (s0, e0, a), (s1, e1, b) = spans[0], spans[1]
    assert a == b
    overlap = min(e0, e1) - max(s0, s1)
    assert overlap > 0.5 * min(e0 - s0, e1 - s1), spans


def test_keyboard_interrupt_stops_the_computation():
    """An interrupt during a long profile raises KeyboardInterrupt promptly, and the engine
    answers the next question as usual."""
    timer = threading.Timer(0.5, _thread.interrupt_main)
    timer.start()
    start = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        sc.profile(TERNARY, n=20000, delta="1e-6")
    assert time.monotonic() - start < 10
    r = sc.epsilon("binary-rr:eps0=1", n=100, k=0, delta="1e-5")
    assert r.eps.resolved


def test_progress_reaches_a_callable():
    events = []
    sc.profile("binary-rr:eps0=1", n=30000, delta="1e-6", progress=lambda k, p: events.append((k, p)))
    stages = [p for k, p in events if k == "stages"]
    assert stages, events
    seen = [s for s in stages if s]
    assert seen and all(name == "profile scan" and unit == "values of k" and done <= total
                        for name, unit, done, total in (s[0] for s in seen))


def test_progress_true_draws_on_stderr(capsys):
    sc.profile("binary-rr:eps0=1", n=30000, delta="1e-6", progress=True)
    assert "profile scan" in capsys.readouterr().err
