"""The enclosure: an interval with exact endpoints, proven to contain the true value."""

from __future__ import annotations

import math
import sys
from fractions import Fraction
from typing import Any, Mapping, Union

#: An endpoint: an exact rational, or ``math.inf`` / ``-math.inf`` for an unbounded end.
Endpoint = Union[Fraction, float]


def _endpoint(text: str) -> Endpoint:
    """An endpoint as the reports print it: a decimal, a fraction ``p/q``, or ``inf``."""
    if text in ("inf", "+inf"):
        return math.inf
    if text == "-inf":
        return -math.inf
    return Fraction(text)


def _nearest(x: Endpoint) -> float:
    """A double near ``x``; ``±inf`` beyond the largest double."""
    if isinstance(x, float):
        return x
    try:
        return float(x)
    except OverflowError:
        return math.inf if x > 0 else -math.inf


def _round_down(x: Endpoint) -> float:
    """The largest double ≤ x (``-inf`` below the most negative double)."""
    f = _nearest(x)
    if math.isinf(f):
        return f if f < 0 or isinstance(x, float) else sys.float_info.max
    return math.nextafter(f, -math.inf) if Fraction(f) > x else f


def _round_up(x: Endpoint) -> float:
    """The smallest double ≥ x (``inf`` above the largest double)."""
    f = _nearest(x)
    if math.isinf(f):
        return f if f > 0 or isinstance(x, float) else -sys.float_info.max
    return math.nextafter(f, math.inf) if Fraction(f) < x else f


class Enclosure:
    """A closed interval ``[lo, hi]`` proven to contain the true value.

    ``lo`` and ``hi`` are exact :class:`fractions.Fraction` (or ``±math.inf`` for an unbounded
    end), read from the report's decimal strings, which the engine rounds outward: the
    interval printed is the interval certified.

    >>> e = Enclosure("0.25", "0.375")
    >>> e.contains("0.3"), e.width
    (True, Fraction(1, 8))
    """

    __slots__ = ("lo", "hi", "_resolved", "_text")

    def __init__(
        self,
        lo: Union[str, Fraction, int],
        hi: Union[str, Fraction, int],
        resolved: Union[bool, None] = None,
    ) -> None:
        self.lo: Endpoint = _endpoint(lo) if isinstance(lo, str) else Fraction(lo)
        self.hi: Endpoint = _endpoint(hi) if isinstance(hi, str) else Fraction(hi)
        if self.lo > self.hi:
            raise ValueError(f"an enclosure needs lo ≤ hi, got [{lo}, {hi}]")
        self._resolved = resolved
        # The endpoints as given (the report's exact decimals), for repr.
        self._text = (str(lo).strip(), str(hi).strip())

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> "Enclosure":
        """The enclosure of a report's ``{"lo": …, "hi": …[, "resolved": …]}`` object."""
        return cls(str(value["lo"]), str(value["hi"]), value.get("resolved"))

    @property
    def width(self) -> Endpoint:
        """``hi − lo``, exactly (``math.inf`` when an end is unbounded)."""
        if isinstance(self.lo, float) or isinstance(self.hi, float):
            return math.inf
        return self.hi - self.lo

    @property
    def resolved(self) -> Union[bool, None]:
        """Whether the engine resolved this value to the relative width asked for
        (``rel_width``); ``None`` where the report does not say."""
        return self._resolved

    def contains(self, x: Union[str, int, Fraction, float, "Enclosure"]) -> bool:
        """True when ``x`` (a number, read exactly; a float as the decimal Python prints for
        it) or a whole enclosure lies inside."""
        if isinstance(x, Enclosure):
            return self.lo <= x.lo and x.hi <= self.hi
        if isinstance(x, float) and not math.isfinite(x):
            return self.lo <= x <= self.hi
        # A float means the decimal Python prints for it, as everywhere in the package.
        v = Fraction(float.__repr__(x)) if isinstance(x, float) else Fraction(x)
        return self.lo <= v <= self.hi

    __contains__ = contains

    def is_point(self) -> bool:
        """True when the value is known exactly (``lo == hi``)."""
        return self.lo == self.hi

    def float_lo(self) -> float:
        """``lo`` rounded down to a double: still a lower bound."""
        return _round_down(self.lo)

    def float_hi(self) -> float:
        """``hi`` rounded up to a double: still an upper bound."""
        return _round_up(self.hi)

    def floats(self) -> tuple[float, float]:
        """``(float_lo(), float_hi())``: the enclosure in doubles, rounded outward."""
        return (self.float_lo(), self.float_hi())

    def mid(self) -> float:
        """The midpoint as a double: for display only, not certified."""
        if isinstance(self.lo, float) or isinstance(self.hi, float):
            return float(self.lo + self.hi) / 2 if self.lo != -self.hi else 0.0
        return _nearest((self.lo + self.hi) / 2)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Enclosure) and (self.lo, self.hi) == (other.lo, other.hi)

    def __hash__(self) -> int:
        return hash((self.lo, self.hi))

    def __repr__(self) -> str:
        """``Enclosure('lo', 'hi')`` with the exact endpoints as the report printed them."""
        return f"Enclosure({self._text[0]!r}, {self._text[1]!r})"

    def __str__(self) -> str:
        """``[lo, hi]`` with the endpoints as the report printed them."""
        return f"[{self._text[0]}, {self._text[1]}]"
