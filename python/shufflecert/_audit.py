"""Claims from the accountants users already run, and ``audit``."""

from __future__ import annotations

import os
import re
from typing import Any, Callable, Iterable, Optional, Sequence, Union

from ._commands import (
    MechanismLike,
    Number,
    Progress,
    _common,
    _options,
    plain,
    _spec,
    run,
    write_claims,
)
from ._report import AuditReport

#: The claims-file columns (``fixtures/claims``, README "Auditing other accountants").
COLUMNS = ("n", "eps", "delta", "kind", "alpha", "k", "source", "note")


def _ns(n: Union[int, Sequence[int]]) -> tuple[list[Any], bool]:
    """The grid of n, and whether a grid (not one n) was given."""
    if isinstance(n, (list, tuple, range)):
        return list(n), True
    return [n], False


def _sampled(
    accountant: Callable[..., Any],
    n: Union[int, Sequence[int]],
    grid: Sequence[Any],
    given: str,
    answered: str,
    source: Optional[str],
) -> list[dict[str, Any]]:
    """One claim per (n, x): ``given`` is x, ``answered`` what ``accountant`` returns for it
    (called with ``x`` at one n, with ``(x, n)`` over a grid of n)."""
    ns, many = _ns(n)
    return [
        {"n": m, given: x, answered: accountant(x, m) if many else accountant(x), "source": source}
        for m in ns
        for x in grid
    ]


class Claims:
    """Claims to audit: one dict per claim with the claims-file columns (``n``, ``eps``,
    ``delta``, and optionally ``kind``, ``alpha``, ``k``, ``source``, ``note``).

    Numbers are read exactly: strings, ints and Fractions as they are, a float as the
    shortest decimal that rounds to it (what Python prints).
    """

    def __init__(self, rows: Iterable[dict[str, Any]]) -> None:
        self.rows: list[dict[str, Any]] = []
        for i, row in enumerate(rows):
            unknown = sorted(set(row) - set(COLUMNS))
            if unknown:
                raise ValueError(
                    f"claims[{i}]: unknown column{'s' if len(unknown) > 1 else ''} "
                    f"{', '.join(unknown)}; columns: {', '.join(COLUMNS)}"
                )
            self.rows.append(dict(row))

    @classmethod
    def from_pairs(
        cls,
        pairs: Iterable[Sequence[Any]],
        *,
        n: Optional[int] = None,
        source: Optional[str] = None,
    ) -> "Claims":
        """``(eps, delta)`` pairs at one ``n``, or ``(n, eps, delta)`` triples."""
        rows = []
        for i, pair in enumerate(pairs):
            if len(pair) == 3:
                row = dict(zip(("n", "eps", "delta"), pair))
            elif len(pair) == 2:
                if n is None:
                    raise ValueError(f"claims[{i}]: an (eps, delta) pair needs n=")
                row = {"n": n, "eps": pair[0], "delta": pair[1]}
            else:
                raise ValueError(f"claims[{i}]: expected (eps, delta) or (n, eps, delta), got {pair!r}")
            if source is not None:
                row["source"] = source
            rows.append(row)
        return cls(rows)

    @classmethod
    def from_eps_for_delta(
        cls,
        eps_for_delta: Callable[..., Any],
        *,
        n: Union[int, Sequence[int]],
        deltas: Sequence[Number],
        source: Optional[str] = None,
    ) -> "Claims":
        """An accountant's ε for each δ of ``deltas``: ``eps_for_delta(delta)`` at one ``n``,
        or ``eps_for_delta(delta, n)`` over a grid of n."""
        return cls(_sampled(eps_for_delta, n, deltas, "delta", "eps", source))

    @classmethod
    def from_delta_for_eps(
        cls,
        delta_for_eps: Callable[..., Any],
        *,
        n: Union[int, Sequence[int]],
        eps: Sequence[Number],
        source: Optional[str] = None,
    ) -> "Claims":
        """An accountant's δ for each ε of ``eps``: ``delta_for_eps(eps)`` at one ``n``, or
        ``delta_for_eps(eps, n)`` over a grid of n."""
        return cls(_sampled(delta_for_eps, n, eps, "eps", "delta", source))

    @classmethod
    def from_dataframe(cls, frame: Any) -> "Claims":
        """A pandas DataFrame with the claims-file columns."""
        records = frame.to_dict("records")
        return cls({k: plain(v) for k, v in r.items() if not _missing(v)} for r in records)

    def write(self) -> str:
        """Writes the claims as a JSON Lines claims file and returns its path."""
        return write_claims(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def __repr__(self) -> str:
        return f"<Claims: {len(self.rows)} claims>"


def _missing(value: Any) -> bool:
    try:
        return value is None or value != value  # None, NaN, pandas.NA
    except TypeError:
        return True


ClaimsLike = Union[
    str,
    "os.PathLike[str]",
    Claims,
    Sequence[Sequence[Any]],
    Sequence[dict[str, Any]],
    Callable[..., Any],
    Any,
]


def _claims(
    claims: ClaimsLike,
    n: Any,
    deltas: Optional[Sequence[Number]],
    eps: Optional[Sequence[Number]],
    source: Optional[str],
) -> str:
    """The claims file for the engine."""
    if not callable(claims) and (deltas is not None or eps is not None):
        raise ValueError(
            "claims: deltas= and eps= are the grid a callable accountant is sampled on; "
            "these claims are not a callable"
        )
    if isinstance(claims, (str, os.PathLike)):
        if source is not None:
            raise ValueError("source: a claims file names its own sources (its source column)")
        return os.fspath(claims)
    if isinstance(claims, dict):
        claims = [claims]
    if isinstance(claims, Claims):
        return Claims(_sourced(claims.rows, source)).write()
    if callable(claims):
        if n is None or (deltas is None) == (eps is None):
            raise ValueError(
                "claims: a callable is sampled on a grid: give n= and either deltas= (it is "
                "eps_for_delta) or eps= (it is delta_for_eps)"
            )
        if deltas is not None:
            return Claims.from_eps_for_delta(claims, n=n, deltas=deltas, source=source).write()
        return Claims.from_delta_for_eps(claims, n=n, eps=eps, source=source).write()  # type: ignore[arg-type]
    if hasattr(claims, "to_dict") and hasattr(claims, "columns"):
        return Claims(_sourced(Claims.from_dataframe(claims).rows, source)).write()
    rows = list(claims)
    if rows and all(isinstance(r, dict) for r in rows):
        return Claims(_sourced(rows, source)).write()
    return Claims.from_pairs(rows, n=n, source=source).write()


def _sourced(rows: list[dict[str, Any]], source: Optional[str]) -> list[dict[str, Any]]:
    """``source`` for the rows that do not name their own."""
    if source is None:
        return rows
    return [r if r.get("source") is not None else dict(r, source=source) for r in rows]


def audit(
    mechanism: MechanismLike,
    claims: ClaimsLike,
    *,
    n: Union[int, Sequence[int], None] = None,
    deltas: Optional[Sequence[Number]] = None,
    eps: Optional[Sequence[Number]] = None,
    source: Optional[str] = None,
    eps_ranges: bool = False,
    narrow_seconds: Optional[Number] = None,
    progress: Progress = None,
    **options: Any,
) -> AuditReport:
    """Verdicts on an accountant's claims (``shufflecert audit``): each claim proven sound,
    refuted with a witness, or undecided.

    ``claims`` is a claims file (CSV or JSON Lines), a :class:`Claims`, a list of
    ``(eps, delta)`` pairs (with ``n=``) or ``(n, eps, delta)`` triples, a list of dicts with
    the claims-file columns, a pandas DataFrame, or a callable sampled on a grid:
    ``eps_for_delta`` with ``deltas=``, or ``delta_for_eps`` with ``eps=`` (called with one
    argument at one ``n``, with ``(x, n)`` over a list of n).  ``source`` labels claims built
    here.  The report's ``failure`` names the unsound claims, as the command line's exit
    code 1 does.  For a randomizer on more inputs, ``narrow_seconds`` bounds the exact profile
    that decides claims the certified range leaves undecided (0 skips it).
    """
    path = _claims(claims, n, deltas, eps, source)
    argv = ["--mechanism", _spec(mechanism), "--claims", path]
    argv += _options({"eps_ranges": eps_ranges, "narrow_seconds": narrow_seconds})
    argv += _options(_common(options))
    try:
        return run("audit", argv, progress)  # type: ignore[return-value]
    except ValueError as e:
        given = isinstance(claims, (str, os.PathLike))
        text = str(e)
        if given or not text.startswith(path + ": "):
            raise
        # Claims built here: name the claim (0-based), not the scratch file's line.
        text = text[len(path) + 2 :]
        line = re.match(r"line (\d+)(, )?", text)
        if line:
            text = f"claims[{int(line.group(1)) - 1}]" + (": " if line.group(2) else "") + text[line.end() :]
        raise ValueError(text) from None
