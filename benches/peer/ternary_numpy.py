"""The float64 peer of benches/window.rs: eps at delta for the pair (T_{n,0}, T_{n,1}) of a
ternary mechanism by enumerating every histogram (numpy/scipy, no certification).

usage: python3 ternary_numpy.py N [DELTA]   -> prints eps_two_sided and the seconds taken
"""
import sys, time
import numpy as np
from scipy.special import gammaln

W0 = np.array([0.70, 0.20, 0.10])
W1 = np.array([0.15, 0.55, 0.30])


def eps_for_delta(n, delta):
    n1 = np.concatenate([np.full(n + 1 - a, a) for a in range(n + 1)])
    n2 = np.concatenate([np.arange(n + 1 - a) for a in range(n + 1)])
    n0 = n - n1 - n2
    logp = (gammaln(n + 1) - gammaln(n0 + 1) - gammaln(n1 + 1) - gammaln(n2 + 1)
            + n0 * np.log(W0[0]) + n1 * np.log(W0[1]) + n2 * np.log(W0[2]))
    p = np.exp(logp)
    ratio = W1 / W0
    lr = (n0 * ratio[0] + n1 * ratio[1] + n2 * ratio[2]) / n  # Q = L P at k = 0
    q = lr * p

    def delta_at(eps):
        c = np.exp(eps)
        return max(np.maximum(q - c * p, 0).sum(), np.maximum(p - c * q, 0).sum())

    lo, hi = 0.0, 1.0
    while delta_at(hi) > delta:
        hi *= 2
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if delta_at(mid) > delta else (lo, mid)
    return hi


if __name__ == "__main__":
    n = int(sys.argv[1])
    delta = float(sys.argv[2]) if len(sys.argv) > 2 else 1e-6
    start = time.perf_counter()
    eps = eps_for_delta(n, delta)
    print(f"n = {n}  eps = {eps:.15g}  seconds = {time.perf_counter() - start:.3f}")
