import math
from fractions import Fraction

import pytest

from shufflecert import Enclosure


def test_endpoints_are_exact_fractions_read_from_decimal_text():
    e = Enclosure("0.1", "0.30000000000000004")
    assert e.lo == Fraction(1, 10)
    assert e.hi == Fraction(30000000000000004, 10**17)
    assert e.width == e.hi - e.lo


def test_float_helpers_round_outward():
    e = Enclosure("0.1", "0.1")
    lo, hi = e.floats()
    # 0.1 is not a double: the nearest double below and above it.
    assert Fraction(lo) < Fraction(1, 10) < Fraction(hi)
    assert math.nextafter(lo, 1) == hi
    exact = Enclosure("0.5", "0.75")
    assert exact.floats() == (0.5, 0.75)


def test_contains_reads_numbers_exactly():
    e = Enclosure("1/3", "1/2")
    assert e.contains("1/3") and e.contains(Fraction(1, 2)) and "0.4" in e
    assert not e.contains("0.3333333333")
    assert e.contains(Enclosure("0.34", "0.35"))
    assert not e.contains(Enclosure("0.34", "0.6"))


def test_unbounded_ends():
    e = Enclosure("1.5", "inf")
    assert e.hi == math.inf and e.width == math.inf and e.contains(10**100)
    assert e.float_hi() == math.inf


def test_repr_and_points():
    assert repr(Enclosure("3/8", "3/8")) == "Enclosure('3/8', '3/8')"
    assert Enclosure("3/8", "3/8").is_point()
    assert repr(Enclosure("0.25", "inf")) == "Enclosure('0.25', 'inf')"
    assert repr(Enclosure(Fraction(1, 3), 1)) == "Enclosure('1/3', '1')"
    e = Enclosure("0.1", "0.30000000000000004")
    assert eval(repr(e)) == e


def test_an_inverted_interval_is_refused():
    with pytest.raises(ValueError, match="lo ≤ hi"):
        Enclosure("1", "0")
