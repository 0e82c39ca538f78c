"""Helpers for other accountants' test suites: hold an accountant against certified values.

>>> import shufflecert as sc, shufflecert.testing as sct
>>> def my_accountant(mechanism, n, delta):      # the accountant under test: ε for δ
...     return sc.profile(mechanism, n=n, delta=delta).eps_profile.float_hi()
>>> report = sct.check_accountant(my_accountant, mechanisms=[sc.Mechanism.binary_rr(eps0="1")],
...                               ns=[200], deltas=["1e-5"])
>>> report.unsound
[]
>>> _ = sct.assert_sound(my_accountant, mechanisms=[sc.Mechanism.binary_rr(eps0="1")],
...                      ns=[200], deltas=["1e-5"])

Both work directly inside pytest; ``assert_sound`` raises :class:`AssertionError` listing every
unsound point with its witness.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any, Callable, Optional, Sequence, Union

from ._audit import Claims, audit
from ._commands import Number
from ._enclosure import Enclosure
from . import _core
from ._mechanism import Mechanism, scratch_path


def standard_mechanisms() -> dict[str, Mechanism]:
    """The fixture set accountants are tested on, by name, the set ``shufflecert golden``
    writes its corpus for: binary randomized response at ε0 = 0.5, 1 and 2, 4-ary randomized
    response (e^ε0 = 3) on 4 inputs and its binary-input restriction, the Part I ternary channel
    (§8.3), a mechanism with a zero entry (one-sided: W1 never reports the third output), and a
    near-identical pair.

    >>> sorted(standard_mechanisms())[:3]
    ['binary-rr-eps0.5', 'binary-rr-eps1', 'binary-rr-eps2']
    """
    found: dict[str, Mechanism] = {}
    for name, spec, text, _about in _core.standard_mechanisms():
        if text is None:
            found[name] = Mechanism.from_spec(spec)
        else:
            path = scratch_path(name, "toml")
            with open(path, "w", encoding="utf-8") as f:
                f.write(text)
            found[name] = Mechanism.from_file(path)
    return found


@dataclass
class Point:
    """One point of the grid: what the accountant claimed and what audit found."""

    mechanism: str
    n: int
    eps: str
    delta: str
    verdict: str
    """``sound``, ``unsound`` or ``undecided``."""
    witness: Optional[dict[str, Any]] = None
    """For an unsound claim: the pair (direction, k) and its certified value that refute it."""
    eps_ratio: Optional[Enclosure] = None
    """Claimed ε over the certified ε (how loose a sound claim is; 1 is tight)."""
    delta_ratio: Optional[Enclosure] = None

    def __str__(self) -> str:
        text = f"{self.mechanism}, n = {self.n}: claimed (ε, δ) = ({self.eps}, {self.delta}) is {self.verdict}"
        if self.witness:
            w = self.witness
            where = f"k = {w['k']}" if w.get("k") is not None else "a pair"
            value = w.get("value") or {}
            text += (
                f"\n    witness: {w.get('direction', '')} at {where},"
                f" certified δ in [{value.get('lo')}, {value.get('hi')}]"
            )
        if self.verdict == "sound":
            for name, ratio in (("ε", self.eps_ratio), ("δ", self.delta_ratio)):
                if ratio is not None and ratio.float_lo() < float("inf"):
                    text += f"; claimed {name} / certified {name} ≥ {ratio.float_lo():.4g}"
        return text


@dataclass
class AccountantReport:
    """Every point of the grid with its verdict."""

    points: list[Point] = field(default_factory=list)
    answers: str = "eps"
    """What the accountant returned: ``"eps"`` (ε for each δ) or ``"delta"`` (δ for each ε)."""

    @property
    def unsound(self) -> list[Point]:
        """Points where the accountant claimed less than the mechanism's certified guarantee."""
        return [p for p in self.points if p.verdict == "unsound"]

    @property
    def undecided(self) -> list[Point]:
        return [p for p in self.points if p.verdict == "undecided"]

    @property
    def sound(self) -> list[Point]:
        return [p for p in self.points if p.verdict == "sound"]

    def loose(self, factor: Union[Number, Fraction] = "1.1") -> list[Point]:
        """Sound points whose answer exceeds the certified value by more than ``factor``
        (certainly: the ratio's lower end), loosest first: the claimed ε over the certified ε
        for an accountant of ε, the claimed δ over the certified δ for one of δ."""
        f = Fraction(str(factor))

        def ratio(p: Point) -> Optional[Enclosure]:
            return p.eps_ratio if self.answers == "eps" else p.delta_ratio

        found = [p for p in self.sound if ratio(p) is not None and ratio(p).lo > f]  # type: ignore[union-attr]
        return sorted(found, key=lambda p: ratio(p).lo, reverse=True)  # type: ignore[union-attr]

    def __str__(self) -> str:
        lines = [
            f"{len(self.points)} points: {len(self.sound)} sound, {len(self.unsound)} unsound, "
            f"{len(self.undecided)} undecided"
        ]
        lines += [f"  UNSOUND {p}" for p in self.unsound]
        return "\n".join(lines)


Accountant = Callable[[Mechanism, int, Any], Any]


def check_accountant(
    accountant: Accountant,
    *,
    mechanisms: Union[Sequence[Mechanism], dict[str, Mechanism], None] = None,
    ns: Sequence[int],
    deltas: Optional[Sequence[Number]] = None,
    eps: Optional[Sequence[Number]] = None,
    **options: Any,
) -> AccountantReport:
    """Evaluates ``accountant`` on a grid and audits every answer.

    ``accountant(mechanism, n, delta)`` returns its ε when ``deltas=`` is given, or
    ``accountant(mechanism, n, eps)`` its δ when ``eps=`` is given.  ``mechanisms`` defaults to
    :func:`standard_mechanisms`.  Each claim is held against the mechanism's certified
    guarantee (``audit``): unsound points carry their witness, sound ones their tightness.
    ``options`` go to ``audit`` (``backend=``, ``max_seconds=``…).
    """
    if (deltas is None) == (eps is None):
        raise ValueError("give deltas= (the accountant returns ε) or eps= (it returns δ)")
    if mechanisms is None:
        mechanisms = standard_mechanisms()
    named = (
        list(mechanisms.items())
        if isinstance(mechanisms, dict)
        else [(m.name, m) for m in mechanisms]
    )
    report = AccountantReport(answers="eps" if deltas is not None else "delta")
    for name, mechanism in named:
        rows = []
        for n in ns:
            for x in deltas if deltas is not None else eps:  # type: ignore[union-attr]
                answer = accountant(mechanism, n, x)
                if deltas is not None and _is_infinite(answer):
                    # ε = ∞ claims nothing: sound, and nothing to audit.
                    report.points.append(
                        Point(mechanism=name, n=n, eps="inf", delta=str(x), verdict="sound")
                    )
                    continue
                rows.append(
                    {"n": n, "eps": answer, "delta": x}
                    if deltas is not None
                    else {"n": n, "eps": x, "delta": answer}
                )
        if not rows:
            continue
        audited = audit(mechanism, Claims(rows), **options)
        for claim in audited.to_dict()["claims"]:
            tightness = claim.get("tightness") or {}
            report.points.append(
                Point(
                    mechanism=name,
                    n=claim["n"],
                    eps=claim["eps"],
                    delta=claim["delta"],
                    verdict=claim["verdict"],
                    witness=claim.get("witness"),
                    eps_ratio=Enclosure.from_json(tightness["eps_ratio"])
                    if tightness.get("eps_ratio")
                    else None,
                    delta_ratio=Enclosure.from_json(tightness["delta_ratio"])
                    if tightness.get("delta_ratio")
                    else None,
                )
            )
    return report


def _is_infinite(x: Any) -> bool:
    try:
        return float(x) == float("inf")
    except (TypeError, ValueError):
        return False


def assert_sound(accountant: Accountant, **grid: Any) -> AccountantReport:
    """:func:`check_accountant`, raising :class:`AssertionError` that lists every unsound
    point (with its witness); returns the report when every point is sound or undecided."""
    report = check_accountant(accountant, **grid)
    if report.unsound:
        raise AssertionError(
            f"{len(report.unsound)} of {len(report.points)} points are unsound "
            "(the accountant claims less than the certified guarantee):\n"
            + "\n".join(f"  {p}" for p in report.unsound)
        )
    return report
