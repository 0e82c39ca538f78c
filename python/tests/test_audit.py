"""Claims in the forms accountants give them."""

from __future__ import annotations

from fractions import Fraction

import pytest

import shufflecert as sc

M = sc.Mechanism.binary_rr(eps0="1")


def certified_eps(n, delta):
    return sc.epsilon(M, n=n, k=0, delta=delta).eps


def test_pairs_dicts_and_triples():
    eps = certified_eps(1000, "1e-5")
    above, below = eps.hi * 2, eps.lo / 2
    pairs = sc.audit(M, [(above, "1e-5"), (below, "1e-5")], n=1000, source="mine")
    assert pairs.verdicts == ["sound", "unsound"]
    assert pairs.failure == "audit: 1 of 2 claims are unsound"
    assert pairs.unsound[0].witness is not None and pairs.claims[0].source == "mine"
    dicts = sc.audit(M, [{"n": 1000, "eps": above, "delta": "1e-5"}])
    assert dicts.verdicts == ["sound"] and dicts.failure is None
    triples = sc.audit(M, [(1000, below, Fraction(1, 100000))])
    assert triples.verdicts == ["unsound"]


def test_a_callable_sampled_on_a_grid():
    # A one-directional "accountant": the qp direction alone, which the mechanism-wide ε exceeds.
    def eps_for_delta(delta, n):
        return sc.epsilon(M, n=n, k=0, delta=delta).eps_qp.hi

    report = sc.audit(M, eps_for_delta, n=[500, 1000], deltas=["1e-5", "1e-6"], source="qp only")
    assert len(report.verdicts) == 4 and set(report.verdicts) == {"unsound"}

    def delta_for_eps(eps):
        return "0.5"

    loose = sc.audit(M, delta_for_eps, n=1000, eps=["0.1", "0.2"])
    assert loose.verdicts == ["sound", "sound"]


def test_claims_builder_and_bad_rows():
    claims = sc.Claims.from_pairs([("0.5", "1e-5")], n=1000)
    assert len(claims) == 1 and sc.audit(M, claims).verdicts == ["sound"]
    with pytest.raises(ValueError, match="unknown column epsilon"):
        sc.Claims([{"n": 1, "epsilon": 1, "delta": 0}])
    with pytest.raises(ValueError, match="needs n="):
        sc.audit(M, [("0.5", "1e-5")])
    with pytest.raises(ValueError, match=r"claims\[0\]: column n"):
        sc.audit(M, [{"n": "many", "eps": "0.5", "delta": "1e-5"}])
    with pytest.raises(ValueError, match="deltas="):
        sc.audit(M, lambda d: 0.5, n=1000)


def test_a_dataframe():
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"n": [1000, 1000], "eps": [0.5, 0.001], "delta": [1e-5, 1e-5]})
    assert sc.audit(M, frame).verdicts == ["sound", "unsound"]
