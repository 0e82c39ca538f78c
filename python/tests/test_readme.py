"""The README's Python examples (```pycon blocks) run as doctests."""

from __future__ import annotations

import doctest
import re

from conftest import ROOT


def test_the_readmes_python_examples_print_what_it_says():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```pycon\n(.*?)```", text, flags=re.S)
    assert blocks, "the README has Python examples"
    parser = doctest.DocTestParser()
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for i, block in enumerate(blocks):
        test = parser.get_doctest(block, {}, f"README.md python example {i + 1}", "README.md", 0)
        runner.run(test)
    results = runner.summarize(verbose=False)
    assert results.failed == 0, f"{results.failed} README example lines differ (see above)"
