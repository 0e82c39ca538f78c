"""Typed views of the command line's ``--json`` reports."""

from __future__ import annotations

import copy
import json
import os
from typing import Any, Iterator, Optional

from ._enclosure import Enclosure


def _wrap(value: Any) -> Any:
    """A report value for Python: ``{"lo", "hi"}`` objects become :class:`Enclosure`, other
    objects :class:`Node`, lists lists of wrapped values."""
    if isinstance(value, dict):
        # Some reports add a double beside the enclosure (`f64`, for display).
        if "lo" in value and "hi" in value and set(value) <= {"lo", "hi", "resolved", "f64"}:
            return Enclosure.from_json(value)
        return Node(value)
    if isinstance(value, list):
        return [_wrap(v) for v in value]
    return value


class Node:
    """An object of a report: its keys as attributes (``node.delta_qp``) or items
    (``node["delta_qp"]``), enclosures as :class:`Enclosure`."""

    __slots__ = ("_data",)

    def __init__(self, data: dict[str, Any]) -> None:
        self._data = data

    def __getattr__(self, name: str) -> Any:
        try:
            return _wrap(self._data[name])
        except KeyError:
            raise AttributeError(
                f"{type(self).__name__} has no field {name!r}; fields: {', '.join(self._data)}"
            ) from None

    def __getitem__(self, key: str) -> Any:
        return _wrap(self._data[key])

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def keys(self) -> list[str]:
        return list(self._data)

    def get(self, key: str, default: Any = None) -> Any:
        return _wrap(self._data[key]) if key in self._data else default

    def to_dict(self) -> dict[str, Any]:
        """The object as the JSON report holds it (a copy)."""
        return copy.deepcopy(self._data)

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self._data))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(self._data)})"


class Report(Node):
    """A command's report: the command line's ``--json`` output, with typed access.

    ``to_dict()`` is the JSON object and ``to_json()`` its text, as ``--json`` prints it.
    ``failure`` is the line the command line prints with exit code 1 (an audit that found
    unsound claims, a ``check`` gate), or ``None``.
    """

    __slots__ = ("failure", "_text")

    def __init__(self, text: str, failure: Optional[str] = None) -> None:
        super().__init__(json.loads(text))
        self.failure = failure
        self._text = text

    def to_json(self) -> str:
        """The report as the command line's ``--json`` prints it, byte for byte."""
        return self._text

    @property
    def certified(self) -> bool:
        """True when every number of the report is certified."""
        return bool(self._data.get("certified", False))

    def __repr__(self) -> str:
        head = [self._data.get("command", "report")]
        mechanism = self._data.get("mechanism")
        if isinstance(mechanism, dict) and "name" in mechanism:
            head.append(str(mechanism["name"]))
        for key in ("n", "k"):
            if self._data.get(key) is not None:
                head.append(f"{key}={self._data[key]}")
        return f"<{type(self).__name__} {' '.join(head)}>"


class DeltaReport(Report):
    """``delta``: δ in both directions at each ε (``rows``)."""

    @property
    def rows(self) -> list[Node]:
        """One row per ε: ``eps``, ``delta_qp``, ``delta_pq``, ``delta_two_sided``."""
        return _wrap(self._data["results"])


class EpsilonReport(Report):
    """``epsilon``: the smallest ε with δ(ε) ≤ the target, each direction and two-sided."""

    @property
    def eps(self) -> Enclosure:
        """The two-sided ε (``eps_two_sided``)."""
        return Enclosure.from_json(self._data["eps_two_sided"])


class DivergencesReport(Report):
    """``divergences``: TV, KL both ways, JSD, χ², squared Hellinger, Rényi."""


class ProfileReport(Report):
    """``profile``: the worst case over every composition k (``eps_profile`` at each δ,
    ``delta_profile`` at each ε), with the attaining k (``argmax_k``)."""


class BoundsReport(Report):
    """``bounds``: a certified range of the mechanism's δ_M(ε) or ε_M(δ)."""


class AuditReport(Report):
    """``audit``: one verdict per claim (``sound``, ``unsound`` with a witness, ``undecided``)."""

    @property
    def verdicts(self) -> list[str]:
        return [c["verdict"] for c in self._data["claims"]]

    @property
    def unsound(self) -> list[Node]:
        """The claims refuted, each with its witness."""
        return [_wrap(c) for c in self._data["claims"] if c["verdict"] == "unsound"]


class CompareReport(Report):
    """``compare``: published bounds beside the certified ε, per n."""


class CompareMessagesReport(Report):
    """``compare-messages``: one message with n and nM users, M messages unbundled and bundled
    (``models``), with certified ratios and the check unbundled ≤ bundled (``rows``)."""


class CheckReport(Report):
    """``check``: asymptotic predictions (uncertified) held against certified values."""


class ConstantsReport(Report):
    """``constants``: the constants of Part I §3 and §6, exactly."""


class LimitReport(Report):
    """``limit``: a mechanism sequence against its Part III limit."""


class BerryEsseenReport(Report):
    """``berry-esseen``: the Poisson-shift curve against the Gaussian shift."""


class VerifyReport(Report):
    """``verify``: whether a certificate holds, with every check made."""

    @property
    def valid(self) -> bool:
        return bool(self._data.get("valid"))


class MergeReport(Report):
    """``merge``: shards combined into the mechanism-wide profile."""


class GoldenReport(Report):
    """``golden``: the corpus written, its ``manifest`` and ``manifest_sha256``."""

    @property
    def manifest(self) -> dict[str, Any]:
        """The corpus's ``manifest.json``, as a dict."""
        return copy.deepcopy(self._data["manifest"])

    def cases(self, question: Optional[str] = None) -> list[dict[str, Any]]:
        """The cases as written (``cases/QUESTION.jsonl``), of one question (``delta``,
        ``epsilon``, ``divergences``, ``profile``, ``bounds``) or of all."""
        files = self._data["manifest"]["cases"]
        known = [f["path"][len("cases/") : -len(".jsonl")] for f in files]
        if question is not None and question not in known:
            raise ValueError(f"question: {question!r} is not one of {', '.join(known)}")
        found = []
        for f in files:
            if question is None or f["path"] == f"cases/{question}.jsonl":
                path = os.path.join(self._data["out"], f["path"])
                with open(path, encoding="utf-8") as lines:
                    found.extend(json.loads(line) for line in lines)
        return found


REPORTS: dict[str, type[Report]] = {
    "delta": DeltaReport,
    "epsilon": EpsilonReport,
    "divergences": DivergencesReport,
    "profile": ProfileReport,
    "bounds": BoundsReport,
    "audit": AuditReport,
    "compare": CompareReport,
    "compare-messages": CompareMessagesReport,
    "check": CheckReport,
    "constants": ConstantsReport,
    "limit": LimitReport,
    "berry-esseen": BerryEsseenReport,
    "verify": VerifyReport,
    "merge": MergeReport,
    "golden": GoldenReport,
}
