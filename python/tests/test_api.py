"""The package against the command line: the same JSON, the same messages, exact endpoints."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest

import shufflecert as sc

BINARY_RR = "fixtures/mechanisms/binary-rr-eps1.toml"
TERNARY = "fixtures/mechanisms/ternary.toml"
ONE_SIDED = "fixtures/mechanisms/one-sided.toml"

# (function, keyword arguments, the same question on the command line)
CASES = [
    (
        sc.delta,
        dict(mechanism=sc.Mechanism.from_file(TERNARY), n=30, k=7, eps=["0.25", "1"]),
        ["delta", "-m", TERNARY, "--n", "30", "--k", "7", "--eps", "0.25,1"],
    ),
    (
        sc.epsilon,
        dict(mechanism=sc.Mechanism.from_file(BINARY_RR), n=10000, k=0, delta="1e-5"),
        ["epsilon", "-m", BINARY_RR, "--n", "10000", "--k", "0", "--delta", "1e-5"],
    ),
    (
        sc.divergences,
        dict(mechanism=sc.Mechanism.from_file(ONE_SIDED), n=12, k=3, renyi_order=["2", "3/2"]),
        ["divergences", "-m", ONE_SIDED, "--n", "12", "--k", "3", "--renyi-order", "2,3/2"],
    ),
    (
        sc.profile,
        dict(mechanism=sc.Mechanism.binary_rr(eps0=1), n=500, delta="1e-6"),
        ["profile", "-m", "binary-rr:eps0=1", "--n", "500", "--delta", "1e-6"],
    ),
    (
        sc.bounds,
        dict(mechanism=sc.Mechanism.k_rr(k=4, exp_eps0=3), n=20, delta="1e-3"),
        ["bounds", "-m", "k-rr:k=4,exp_eps0=3", "--n", "20", "--delta", "1e-3"],
    ),
    (
        sc.compare,
        dict(mechanism="binary-rr:eps0=1", n=[1000, 10000], delta="1e-5"),
        ["compare", "-m", "binary-rr:eps0=1", "--n", "1000,10000", "--delta", "1e-5"],
    ),
    (
        sc.check,
        dict(mechanism=BINARY_RR, n=2000, k=0, eps=["0.1"]),
        ["check", "-m", BINARY_RR, "--n", "2000", "--k", "0", "--eps", "0.1"],
    ),
    (
        sc.constants,
        dict(mechanism=TERNARY, pi="1/4"),
        ["constants", "-m", TERNARY, "--pi", "1/4"],
    ),
    (
        sc.delta,
        dict(mechanism="binary-rr:exp_eps0=3", n=20, k=2, eps="1", messages=3, bundled=True),
        ["delta", "-m", "binary-rr:exp_eps0=3", "--n", "20", "--k", "2", "--eps", "1"]
        + ["--messages", "3", "--bundled"],
    ),
    (
        sc.compare_messages,
        dict(mechanism="binary-rr:exp_eps0=3", n=20, messages=2, eps=["0.5", "1"], profile=True),
        ["compare-messages", "-m", "binary-rr:exp_eps0=3", "--n", "20", "--messages", "2"]
        + ["--eps", "0.5,1", "--profile"],
    ),
    (
        sc.constants,
        dict(mechanism="binary-rr:exp_eps0=3", n=200, k=0, messages=3),
        ["constants", "-m", "binary-rr:exp_eps0=3", "--n", "200", "--k", "0", "--messages", "3"],
    ),
    (
        sc.audit,
        dict(mechanism="binary-rr:eps0=1", claims="fixtures/claims/published-binary-rr.csv"),
        ["audit", "-m", "binary-rr:eps0=1", "--claims", "fixtures/claims/published-binary-rr.csv"],
    ),
]


@pytest.mark.parametrize("function, kwargs, argv", CASES, ids=[c[2][0] for c in CASES])
def test_reports_equal_the_command_lines_json(cli, function, kwargs, argv):
    report = function(**kwargs)
    out = cli.run(*argv, "--json", code=None)
    assert out.returncode in (0, 1), out.stderr
    assert report.to_dict() == json.loads(out.stdout)
    assert report.to_json() == out.stdout
    assert report.command == argv[0]


def test_enclosures_are_typed_and_exact():
    r = sc.epsilon(sc.Mechanism.binary_rr(eps0="1"), n=10000, k=0, delta="1e-5")
    assert isinstance(r.eps, sc.Enclosure)
    assert isinstance(r.eps_qp.lo, Fraction) and isinstance(r.eps_qp.hi, Fraction)
    assert r.eps == r.eps_two_sided
    # The two-sided ε is the larger of the two directions'.
    assert r.eps.hi >= max(r.eps_qp.lo, r.eps_pq.lo) and r.eps.lo <= max(r.eps_qp.hi, r.eps_pq.hi)
    assert r.eps.resolved and r.eps.width < Fraction(1, 10**9) * r.eps.hi
    assert r.certified and r.input_domain.count == 2


def _convolve(a, b):
    out = {}
    for x, p in a.items():
        for y, q in b.items():
            key = tuple(i + j for i, j in zip(x, y))
            out[key] = out.get(key, 0) + p * q
    return out


def _law(w0, w1, n, k):
    d = len(w0)
    law = {tuple([0] * d): Fraction(1)}
    for row in [w0] * (n - k) + [w1] * k:
        law = _convolve(law, {tuple(int(i == y) for i in range(d)): p for y, p in enumerate(row)})
    return law


def test_exact_backend_gives_the_exact_rational_delta():
    """δ_{Q‖P}(ε) at e^ε = 3/2 is a rational; the exact backend prints it exactly, and it
    equals a sum over the two laws computed here from scratch."""
    w0 = [Fraction(7, 10), Fraction(2, 10), Fraction(1, 10)]
    w1 = [Fraction(15, 100), Fraction(55, 100), Fraction(3, 10)]
    n, k, c = 6, 2, Fraction(3, 2)
    m = sc.Mechanism(w0=w0, w1=w1, name="ternary")
    r = sc.delta(m, n=n, k=k, exp_eps=[c], backend="exact", engine="general")
    p, q = _law(w0, w1, n, k), _law(w0, w1, n, k + 1)
    expected = sum(max(Fraction(0), q.get(x, 0) - c * p.get(x, 0)) for x in set(p) | set(q))
    got = r.rows[0].delta_qp
    assert got.is_point() and got.lo == expected


def test_a_bare_float_entry_is_refused_with_the_files_message(cli, tmp_path):
    with pytest.raises(ValueError, match=r'w0\[0\]: write the number 0.7 as a string'):
        sc.Mechanism(w0=[0.7, "0.3"], w1=["0.5", "0.5"])
    path = tmp_path / "float.toml"
    path.write_text('w0 = [0.7, "0.3"]\nw1 = ["0.5", "0.5"]\n')
    out = cli.run("delta", "-m", str(path), "--n", "3", "--k", "0", "--eps", "1", code=2)
    assert "w0[0]: write the number 0.7 as a string" in out.stderr


@pytest.mark.parametrize(
    "call, argv",
    [
        (lambda: sc.delta(BINARY_RR, n=-3, k=0, eps=1), ["delta", "-m", BINARY_RR, "--n", "-3", "--k", "0", "--eps", "1"]),
        (lambda: sc.epsilon(BINARY_RR, n=10, k=10, delta="1e-5"), ["epsilon", "-m", BINARY_RR, "--n", "10", "--k", "10", "--delta", "1e-5"]),
        (lambda: sc.profile(BINARY_RR, n=10, delta="2"), ["profile", "-m", BINARY_RR, "--n", "10", "--delta", "2"]),
        (lambda: sc.delta("k-rr:k=4,exp_eps0=3", n=5, k=0, eps=1), ["delta", "-m", "k-rr:k=4,exp_eps0=3", "--n", "5", "--k", "0", "--eps", "1"]),
        (lambda: sc.delta(BINARY_RR, n=5, k=0, eps=1, backend="nope"), ["delta", "-m", BINARY_RR, "--n", "5", "--k", "0", "--eps", "1", "--backend", "nope"]),
    ],
    ids=["negative-n", "k-too-large", "delta-above-one", "many-inputs", "unknown-backend"],
)
def test_bad_input_raises_value_error_with_the_command_lines_message(cli, call, argv):
    out = cli.run(*argv, code=2)
    first = out.stderr.splitlines()[0].removeprefix("shufflecert: error: ")
    with pytest.raises(ValueError) as caught:
        call()
    assert str(caught.value) == first


def test_unknown_keywords_and_missing_files():
    with pytest.raises(TypeError, match="unexpected keyword argument bogus"):
        sc.delta(BINARY_RR, n=3, k=0, eps=1, bogus=1)
    with pytest.raises(FileNotFoundError):
        sc.Mechanism.from_file("no/such/file.toml")
    with pytest.raises(OSError, match="no-such-claims.csv"):
        sc.audit(BINARY_RR, "no-such-claims.csv")
    with pytest.raises(ValueError, match="exactly one of eps0"):
        sc.Mechanism.binary_rr()


def test_families_and_randomizers_describe_themselves():
    k4 = sc.Mechanism.k_rr(k=4, exp_eps0=3)
    assert k4.spec == "k-rr:k=4,exp_eps0=3" and k4.inputs == ["0", "1", "2", "3"]
    assert sc.Mechanism.k_rr(k=4, exp_eps0=3, inputs=2).inputs == ["0", "1"]
    r = sc.Randomizer(
        rows=[["1/2", "1/4", "1/4"], ["1/4", "1/2", "1/4"], [Fraction(1, 4), "1/4", "1/2"]],
        inputs=["a", "b", "c"],
        name="3-RR",
    )
    assert [Fraction(x) for x in r.rows[2]] == [Fraction(1, 4), Fraction(1, 4), Fraction(1, 2)]
    assert r.name == "3-RR"
    b = sc.bounds(r, n=6, eps=["0.5"])
    assert b.input_domain.count == 3
    with pytest.raises(ValueError, match="sum"):
        sc.Randomizer(rows=[["1/2", "1/4"], ["1/4", "3/4"]])


def test_certificates_are_written_and_verified(tmp_path):
    path = tmp_path / "eps.json"
    r = sc.epsilon(BINARY_RR, n=1000, k=0, delta="1e-5", certificate=str(path))
    assert path.exists()
    v = sc.verify(path)
    assert v.valid and v.problems == []
    assert v.certificate_command == "epsilon"
    cert = json.loads(path.read_text())
    assert cert["report"]["eps_two_sided"]["lo"] and r.eps.contains(sc.Enclosure(*[Fraction(cert["report"]["eps_two_sided"][e]) for e in ("lo", "hi")]))


def test_profile_shards_merge_into_the_profile(tmp_path):
    m = sc.Mechanism.binary_rr(eps0="1")
    whole = sc.profile(m, n=200, delta="1e-6")
    shards = []
    for i, k_range in enumerate([(0, 99), "100..199"]):
        shards.append(tmp_path / f"shard{i}.json")
        sc.profile(m, n=200, delta="1e-6", k_range=k_range, certificate=str(shards[-1]))
    merged = sc.merge(shards, certificate=str(tmp_path / "merged.json"))
    a, b = merged.eps_profile, whole.eps_profile
    assert a.lo <= b.hi and b.lo <= a.hi
    assert sc.verify(tmp_path / "merged.json").valid


def test_slices_of_a_randomizer_profile_merge_into_it(tmp_path):
    k4 = sc.Mechanism.k_rr(k=4, exp_eps0=3)
    whole = sc.profile(k4, n=10, delta="1e-3", certificate=str(tmp_path / "whole.json"))
    assert sc.verify(tmp_path / "whole.json").valid
    slices = []
    for i, slice in enumerate([(0, 2), "1/2"]):
        slices.append(tmp_path / f"slice{i}.json")
        sc.profile(k4, n=10, delta="1e-3", slice=slice, certificate=str(slices[-1]))
    merged = sc.merge(slices, certificate=str(tmp_path / "merged.json"))
    assert merged.eps_profile == whole.eps_profile
    assert sc.verify(tmp_path / "merged.json").valid
    with pytest.raises(ValueError, match="--slice"):
        sc.profile(k4, n=10, delta="1e-3", slice=(2, 2))


def test_bounds_search_raises_the_lower_end():
    k4 = sc.Mechanism.k_rr(k=4, exp_eps0=3)
    plain = sc.bounds(k4, n=10, delta="1e-3")
    searched = sc.bounds(k4, n=10, delta="1e-3", search=50)
    assert searched.to_dict()["results"][0]["lower"]["others"] == {"0": 8, "2": 1}
    assert searched.to_dict()["search"]["evaluated"] >= 1
    lower = lambda r: Fraction(r.to_dict()["results"][0]["lower"]["value"]["lo"])
    assert lower(searched) > lower(plain)


def test_bounds_ceiling_lowers_the_upper_end(tmp_path):
    k4 = sc.Mechanism.k_rr(k=4, exp_eps0=3)
    path = tmp_path / "ceiling.json"
    r = sc.bounds(k4, n=10, delta="1e-3", ceiling_seconds=10, certificate=str(path))
    row = r.to_dict()["results"][0]
    assert Fraction(row["ceiling"]["hi"]) < Fraction(row["upper"]["value"]["lo"])
    assert Fraction(row["ceiling"]["hi"]) >= Fraction(row["lower"]["value"]["lo"])
    assert sc.verify(path).valid
    with pytest.raises(ValueError, match="--ceiling-seconds"):
        sc.bounds(k4, n=10, delta="1e-3", ceiling_seconds=0)


def test_a_bad_certificate_is_reported_invalid(tmp_path):
    path = tmp_path / "eps.json"
    sc.epsilon(BINARY_RR, n=100, k=0, delta="1e-5", certificate=str(path))
    cert = json.loads(path.read_text())
    cert["report"]["eps_two_sided"] = {"lo": "0.5", "hi": "0.5"}
    path.write_text(json.dumps(cert))
    v = sc.verify(path)
    assert not v.valid and v.problems
