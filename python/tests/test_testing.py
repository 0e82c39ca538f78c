"""shufflecert.testing: an unsound accountant caught, a sound one passed."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import pytest

import shufflecert as sc
import shufflecert.testing as sct

NS = [50, 400]
DELTAS = ["1e-5", "1e-7"]


def one_direction(mechanism, n, delta):
    """A deliberately unsound accountant: the boundary pair's δ_{Q‖P} direction alone (as a
    PLD accountant asked for one direction by default), which misses the reverse one."""
    return sc.epsilon(mechanism, n=n, k=0, delta=delta).eps_qp.float_lo()


def sound(mechanism, n, delta):
    """The certified guarantee's upper end (or the upper end of the certified range for a
    randomizer on more than two inputs), rounded up."""
    if len(mechanism.inputs) > 2:
        return sc.bounds(mechanism, n=n, delta=delta).results[0].upper.value.float_hi()
    return sc.profile(mechanism, n=n, delta=delta).eps_profile.float_hi()


def test_the_standard_mechanisms():
    ms = sct.standard_mechanisms()
    assert {"binary-rr-eps1", "k-rr-4", "ternary", "one-sided", "near-identical"} <= set(ms)
    assert ms["one-sided"].rows[1][2] == "0" and len(ms["k-rr-4"].inputs) == 4


def test_an_unsound_accountant_is_caught_with_witnesses():
    mechanisms = [sct.standard_mechanisms()[m] for m in ("binary-rr-eps1", "ternary")]
    report = sct.check_accountant(one_direction, mechanisms=mechanisms, ns=NS, deltas=DELTAS)
    assert len(report.points) == 8
    assert report.unsound, str(report)
    for p in report.unsound:
        assert p.witness["direction"] in ("qp", "pq") and p.witness["k"] is not None, p
    with pytest.raises(AssertionError, match=r"(?s)unsound.*witness"):
        sct.assert_sound(one_direction, mechanisms=mechanisms, ns=NS, deltas=DELTAS)


def test_a_sound_accountant_passes_on_the_whole_set():
    report = sct.assert_sound(sound, ns=NS, deltas=DELTAS)
    assert len(report.points) == len(sct.standard_mechanisms()) * 4
    assert not report.unsound
    # Its answers are the certified values rounded up: tight, not loose.
    assert not report.loose("1.001")


def test_an_accountant_of_delta():
    def delta_for_eps(mechanism, n, eps):
        return "0.5"

    report = sct.check_accountant(
        delta_for_eps, mechanisms=[sc.Mechanism.binary_rr(eps0="1")], ns=[100], eps=["0.1"]
    )
    assert [p.verdict for p in report.points] == ["sound"]
    with pytest.raises(ValueError, match="deltas="):
        sct.check_accountant(delta_for_eps, ns=[100])


def test_the_standard_mechanisms_are_the_golden_corpus_set(tmp_path):
    ms = sct.standard_mechanisms()
    corpus = sc.golden(tmp_path / "corpus")
    listed = [m["name"] for m in corpus.manifest["mechanisms"]]
    assert listed == list(ms)
    for entry in corpus.manifest["mechanisms"]:
        described = sc.Mechanism.from_spec(
            str(tmp_path / "corpus" / entry["spec"]) if "sha256" in entry else entry["spec"]
        )
        assert described.rows == ms[entry["name"]].rows, entry["name"]


def test_golden_from_python_matches_the_committed_corpus(tmp_path):
    corpus = sc.golden(tmp_path / "corpus")
    committed = Path(__file__).resolve().parents[2] / "fixtures" / "golden"
    assert corpus.manifest_sha256 == (committed / "manifest.json.sha256").read_text().split()[0]
    cases = corpus.cases("delta")
    assert len(cases) == corpus.manifest["cases"][0]["cases"]
    first = cases[0]
    assert Fraction(first["value"]["lo"]) <= Fraction(first["value"]["hi"])
    with pytest.raises(ValueError, match="--out"):
        sc.golden(tmp_path / "corpus")
    with pytest.raises(ValueError, match="question"):
        corpus.cases("deltas")


def test_golden_reads_its_cases_after_a_change_of_directory(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    corpus = sc.golden("corpus")
    monkeypatch.chdir(tmp_path.parent)
    assert len(corpus.cases("bounds")) == corpus.manifest["cases"][-1]["cases"]
    with pytest.raises(ValueError, match="--out"):
        sc.golden("")
