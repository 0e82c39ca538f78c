"""The examples run and print what the audit finds (dp_accounting is a test-only dependency)."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from conftest import ROOT

EXAMPLES = ROOT / "python" / "examples"


def run(name: str) -> str:
    out = subprocess.run(
        [sys.executable, str(EXAMPLES / name)], capture_output=True, text=True, check=False
    )
    assert out.returncode == 0, out.stderr
    return out.stdout


def test_the_dp_accounting_example_audits_the_pld_answer():
    pytest.importorskip("dp_accounting")
    text = run("audit_dp_accounting.py")
    eps = re.search(r"eps = ([0-9.e-]+) at delta = 1e-05 for n = 1000", text)
    assert eps, text
    verdicts = re.findall(r"audit against .*: (SOUND|UNSOUND|UNDECIDED)", text)
    assert len(verdicts) == 2, text
    # An unsound verdict names its witness pair.
    assert text.count("witness: the pair k =") == verdicts.count("UNSOUND"), text


def test_the_closed_form_example_audits_a_grid_of_n():
    text = run("audit_closed_form.py")
    rows = re.findall(r"^\s+(\d+)\s+([0-9.]+)\s+(sound|unsound|undecided)\s", text, flags=re.M)
    assert [int(r[0]) for r in rows] == [2000, 5000, 10000, 50000, 100000], text
