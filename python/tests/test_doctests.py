"""The package's docstring examples."""

import doctest

import pytest

import shufflecert
import shufflecert._enclosure
import shufflecert._mechanism
import shufflecert.testing


@pytest.mark.parametrize(
    "module",
    [shufflecert, shufflecert._enclosure, shufflecert._mechanism, shufflecert.testing],
    ids=lambda m: m.__name__,
)
def test_docstring_examples(module):
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0
