"""The Python examples of README.md and docs/python.md (```pycon blocks) run as doctests."""

from __future__ import annotations

import doctest
import re

from conftest import ROOT


import pytest


@pytest.mark.parametrize("page", ["README.md", "docs/python.md"])
def test_the_python_examples_print_what_they_say(page):
    text = (ROOT / page).read_text(encoding="utf-8")
    blocks = re.findall(r"```pycon\n(.*?)```", text, flags=re.S)
    assert blocks, f"{page} has Python examples"
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    # One namespace per page: its examples build on each other.
    names: dict = {}
    for i, block in enumerate(blocks):
        test = parser.get_doctest(block, names, f"{page} python example {i + 1}", page, 0)
        runner.run(test, clear_globs=False)
        names.update(test.globs)
    results = runner.summarize(verbose=False)
    assert results.failed == 0, f"{results.failed} {page} example lines differ (see above)"
