"""Shared fixtures: the repository's fixtures and the command line, to hold the package's
reports against."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Optional

import pytest

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures"


def _binary() -> Path:
    given = os.environ.get("SHUFFLECERT_BIN")
    if given:
        return Path(given)
    for profile in ("debug", "release"):
        candidate = ROOT / "target" / profile / "shufflecert"
        if candidate.exists():
            return candidate
    pytest.fail("no shufflecert binary: build it (cargo build) or set SHUFFLECERT_BIN")


class Cli:
    """The command line, run in the repository's root as the README runs it."""

    def __init__(self, binary: Path) -> None:
        self.binary = binary

    def run(self, *args: str, code: Optional[int] = 0) -> subprocess.CompletedProcess[str]:
        out = subprocess.run(
            [str(self.binary), *args], cwd=ROOT, capture_output=True, text=True, check=False
        )
        if code is not None:
            assert out.returncode == code, (args, out.returncode, out.stderr)
        return out


@pytest.fixture(scope="session")
def cli() -> Cli:
    return Cli(_binary())


@pytest.fixture(autouse=True)
def _in_root(monkeypatch: pytest.MonkeyPatch) -> None:
    """Paths in the reports (fixture files) read as the command line's, run from the root."""
    monkeypatch.chdir(ROOT)
