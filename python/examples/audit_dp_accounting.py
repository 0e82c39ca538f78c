"""Audit what Google's dp_accounting says about shuffled binary randomized response.

A dp_accounting user builds the privacy-loss distribution (PLD) of the shuffled histogram from
the two datasets' probability mass functions, with the library's defaults, and asks it for ε at
δ = 1e-5. The neighbouring datasets are "every one of the n users holds 0" and "one user holds
1"; each user reports their bit truthfully with probability e^ε0 / (1 + e^ε0), ε0 = 1, and the
shuffler releases how many users reported 1.

shufflecert then audits that ε: for the mechanism (its worst case over every dataset, both
directions) and for the boundary pair the user modelled (both directions). This script prints
what the audit finds, whatever that is.

Run:  python examples/audit_dp_accounting.py        (needs: pip install dp-accounting)
"""

import math

from dp_accounting.pld import privacy_loss_distribution
from scipy import stats

import shufflecert as sc

N, EPS0, DELTA = 1000, 1.0, 1e-5

# Probability that a user holding 0 reports 1.
q = 1 / (1 + math.exp(EPS0))
counts = range(N + 1)
# All users hold 0: the count of 1s is Binomial(n, q).
p_all_zero = stats.binom.pmf(counts, N, q)
# One user holds 1 (reports 1 w.p. 1 - q): Binomial(n - 1, q) plus that user's report.
rest = stats.binom.pmf(counts, N - 1, q)
p_one = [q * rest[j] + (1 - q) * (rest[j - 1] if j > 0 else 0.0) for j in counts]


def log_pmf(pmf):
    return {j: math.log(p) for j, p in zip(counts, pmf) if p > 0}


pld = privacy_loss_distribution.from_two_probability_mass_functions(
    log_pmf(p_all_zero), log_pmf(p_one)
)
eps = pld.get_epsilon_for_delta(DELTA)
print(f"dp_accounting (PLD, defaults): eps = {eps!r} at delta = {DELTA} for n = {N}")

mechanism = sc.Mechanism.binary_rr(eps0=str(EPS0))
source = "dp_accounting PLD, defaults"
for scope, claim in [
    ("the mechanism (every dataset, both directions)", {"n": N, "eps": eps, "delta": DELTA}),
    ("the boundary pair k = 0 (both directions)", {"n": N, "eps": eps, "delta": DELTA, "k": 0}),
]:
    report = sc.audit(mechanism, [dict(claim, source=source)])
    c = report.claims[0]
    print(f"\naudit against {scope}: {c.verdict.upper()}")
    print(f"  certified eps at delta = {DELTA}: {c.certified_eps}")
    if c.witness is not None:
        w = c.witness
        print(
            f"  witness: the pair k = {w.k}, direction {w.direction}, has delta = {w.value} "
            f"> {DELTA} at eps = {eps!r}"
        )
    if c.tightness is not None and c.verdict == "sound":
        print(f"  claimed eps / certified eps = {c.tightness.eps_ratio}")
