"""The engine, in process (Rust, PyO3).  Use the functions of ``shufflecert`` instead."""

from typing import Any, Callable, Optional

class ShufflecertError(Exception):
    """An internal error of shufflecert (a bug: no result was produced)."""

def run(
    argv: list[str], progress: Optional[Callable[[str, Any], None]] = None
) -> tuple[str, Optional[str]]:
    """Runs ``shufflecert ARGV…``; returns ``(stdout, failure)``."""

def describe(spec: str) -> str:
    """The randomizer ``spec`` names, validated, as JSON."""

def standard_mechanisms() -> list[tuple[str, str, Optional[str], str]]:
    """The standard mechanisms: ``(name, spec, file text or None, about)``."""

def version() -> str:
    """The engine's version."""
