"""Issue 22's speed targets, the Python side (run from the repository root):

* a Python call adds at most 1 ms over the same computation in the Rust library: the questions
  of ``benches/in_process.rs`` timed through the package (compare with ``cargo bench --bench
  in_process``);
* ``check_accountant`` over 100 grid points for binary RR at n = 10^4 in at most 10 s.

    python python/benchmarks/overhead.py

Each figure is the median of repeated runs (``timeit``), after one warm-up call.
"""

from __future__ import annotations

import math
import statistics
import time
import timeit

import shufflecert as sc
import shufflecert.testing as sct

RR = sc.Mechanism.binary_rr(eps0="1")
TERNARY = sc.Mechanism.from_file("fixtures/mechanisms/ternary.toml")

QUESTIONS = [
    (
        "epsilon binary-rr eps0=1 n=1000 k=0 delta=1e-5",
        lambda: sc.epsilon(RR, n=1000, k=0, delta="1e-5"),
    ),
    (
        "delta ternary n=30 k=7 eps=0.25,1",
        lambda: sc.delta(TERNARY, n=30, k=7, eps=["0.25", "1"]),
    ),
    (
        "profile binary-rr eps0=1 n=1000 delta=1e-6",
        lambda: sc.profile(RR, n=1000, delta="1e-6"),
    ),
]


def median_seconds(call, repeat: int = 30) -> float:
    call()
    number = max(1, int(0.2 / max(timeit.timeit(call, number=1), 1e-6)))
    runs = timeit.repeat(call, number=number, repeat=repeat)
    return statistics.median(runs) / number


def main() -> None:
    print("Python call, median per call")
    for name, call in QUESTIONS:
        print(f"  {name:<46} {median_seconds(call) * 1e3:9.3f} ms")

    # check_accountant: 100 grid points (one mechanism, 4 values of n, 25 values of δ).
    deltas = [f"{m}e-{e}" for e in range(4, 9) for m in (1, 2, 3, 5, 7)]
    ns = [10_000, 10_001, 10_002, 10_003]

    def accountant(mechanism, n, delta):
        # Feldman-McMillan-Talwar's closed form (FOCS 2021, Thm 3.1) for ε0 = 1, in floats.
        e = math.e
        bound = 8 * math.sqrt(e * math.log(4 / float(delta))) / math.sqrt(n) + 8 * e / n
        return math.log1p((e - 1) / (e + 1) * bound)

    start = time.perf_counter()
    report = sct.check_accountant(accountant, mechanisms=[RR], ns=ns, deltas=deltas)
    seconds = time.perf_counter() - start
    print(
        f"check_accountant, binary RR eps0=1, n = 10^4, {len(report.points)} grid points: "
        f"{seconds:.2f} s ({len(report.sound)} sound)"
    )


if __name__ == "__main__":
    main()
