"""Audit a published closed-form shuffle bound over a grid of n.

Feldman, McMillan and Talwar (FOCS 2021), Theorem 3.1: shuffling n reports of an ε0-LDP
randomizer gives (ε, δ)-DP with

    ε = log(1 + (e^ε0 − 1)/(e^ε0 + 1) · (8 √(e^ε0 log(4/δ)) / √n + 8 e^ε0 / n)),

for ε0 ≤ log(n / (16 log(2/δ))). Here it is evaluated in floating point, as a user's script
would, for binary randomized response with ε0 = 1 at δ = 1e-6, and every value is audited
against the mechanism's certified ε. This script prints what the audit finds, whatever it is.

Run:  python examples/audit_closed_form.py
"""

import math

import shufflecert as sc

EPS0, DELTA = 1.0, 1e-6
NS = [2_000, 5_000, 10_000, 50_000, 100_000]


def fmt21(delta, n):
    e = math.exp(EPS0)
    return math.log1p((e - 1) / (e + 1) * (8 * math.sqrt(e * math.log(4 / delta)) / math.sqrt(n) + 8 * e / n))


mechanism = sc.Mechanism.binary_rr(eps0=str(EPS0))
valid = [n for n in NS if EPS0 <= math.log(n / (16 * math.log(2 / DELTA)))]
report = sc.audit(mechanism, fmt21, n=valid, deltas=[DELTA], source="FMT21 closed form")
print(f"FMT21 closed form, binary RR eps0 = {EPS0}, delta = {DELTA}:")
print(f"{'n':>8}  {'claimed eps':>12}  {'verdict':>9}  {'certified eps_M':40}  claimed / certified")
for c in report.claims:
    ratio = c.tightness.eps_ratio.float_lo() if c.tightness is not None else float("nan")
    print(f"{c.n:>8}  {float(c.eps):>12.6f}  {c.verdict:>9}  {c.certified_eps!s:40}  {ratio:.3f}")
skipped = sorted(set(NS) - set(valid))
if skipped:
    print(f"(n = {', '.join(map(str, skipped))}: outside the theorem's range, not audited)")
