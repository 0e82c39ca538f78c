"""Cases a review of the package found: each once answered wrongly or crashed."""

from __future__ import annotations

import math
import sys
from fractions import Fraction

import pytest

import shufflecert as sc
import shufflecert.testing as sct


class Float64(float):
    """A float whose repr is numpy 2's (np.float64(0.2)), without needing numpy."""

    def __repr__(self):
        return f"np.float64({float.__repr__(self)})"

    def item(self):
        return float(self)


def test_floats_round_outward_past_the_largest_double():
    huge = sc.Enclosure("1e400", "2e400")
    assert huge.floats() == (sys.float_info.max, math.inf)
    negative = sc.Enclosure("-1e400", "0")
    assert negative.floats() == (-math.inf, 0.0)
    assert sc.Enclosure("-2e400", "-1e400").float_hi() == -sys.float_info.max
    assert huge.mid() == math.inf
    chi2 = sc.divergences("fixtures/mechanisms/underflow.toml", n=2000, k=0).chi2_qp
    lo, hi = chi2.floats()
    assert lo <= hi and hi == math.inf


def test_enclosures_with_a_display_double_are_enclosures():
    r = sc.constants("binary-rr:eps0=1", pi="1/3")
    assert isinstance(r.i_pi, sc.Enclosure) and isinstance(r.i_pi.lo, Fraction)


def test_array_scalars_are_read_as_the_numbers_they_hold():
    m = sc.Mechanism.binary_rr(eps0="1")
    a = sc.epsilon(m, n=100, k=0, delta=Float64(1e-5))
    assert a.to_dict()["delta"] == "0.00001"
    report = sc.audit(m, [{"n": 1000, "eps": Float64(0.2), "delta": 1e-5}])
    assert report.verdicts == ["sound"]
    assert sc.Enclosure("0.1", "0.1").contains(0.1)


def test_booleans_are_not_numbers_and_switches_take_only_booleans():
    with pytest.raises(ValueError, match="--k: must be a value"):
        sc.check("fixtures/mechanisms/ternary.toml", n=100, k=False, eps="1")
    with pytest.raises(ValueError, match="--eps: must be a value"):
        sc.delta("binary-rr:eps0=1", n=10, k=0, eps=True)
    with pytest.raises(ValueError, match="--no-prune: a switch"):
        sc.profile("binary-rr:eps0=1", n=10, delta="1e-5", no_prune="yes")


def test_audit_keywords_are_used_or_refused():
    m = sc.Mechanism.binary_rr(eps0="1")
    r = sc.audit(m, [{"n": 1000, "eps": "0.5", "delta": "1e-5"}], source="mine")
    assert r.claims[0].source == "mine"
    assert sc.audit(m, {"n": 1000, "eps": "0.5", "delta": "1e-5"}).verdicts == ["sound"]
    with pytest.raises(ValueError, match="deltas= and eps="):
        sc.audit(m, [("0.2", "1e-5")], n=1000, deltas=["1e-9"])
    with pytest.raises(ValueError, match="source"):
        sc.audit(m, "fixtures/claims/published-binary-rr.csv", source="x")


def test_merge_takes_one_path_and_paths_must_be_paths(tmp_path):
    cert = tmp_path / "whole.json"
    sc.profile("binary-rr:eps0=1", n=20, delta="1e-3", k_range=(0, 19), certificate=str(cert))
    # One path is one shard (not a string of one-letter paths).
    assert not sc.merge(str(cert)).to_dict()["partial"]
    with pytest.raises(ValueError, match="certificate: expected a file path"):
        sc.verify(42)


def test_mechanism_arguments_are_checked():
    with pytest.raises(ValueError, match="k: must be a whole number"):
        sc.Mechanism.k_rr(k="4,inputs=2", eps0="1")
    with pytest.raises(ValueError, match="w0: must be a list of entries"):
        sc.Mechanism(w0="0.5", w1="0.5")
    with pytest.raises(ValueError) as caught:
        sc.Mechanism(w0=["1/2", "1/3"], w1=["1/2", "1/2"])
    assert "shufflecert-" not in str(caught.value) and "w0" in str(caught.value)


def test_loose_uses_the_ratio_of_what_the_accountant_returns():
    one_sided = sct.standard_mechanisms()["one-sided"]

    def delta_accountant(m, n, eps):
        return sc.profile(m, n=n, eps=eps).to_dict()["results"][0]["delta_profile"]["hi"]

    report = sct.check_accountant(delta_accountant, mechanisms=[one_sided], ns=[50], eps=["0.5"])
    assert [p.verdict for p in report.points] == ["sound"]
    assert report.loose("1.001") == []
