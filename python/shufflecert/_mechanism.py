"""Mechanisms and randomizers, as the command line's ``-m SPEC`` reads them."""

from __future__ import annotations

import atexit
import itertools
import json
import os
import re
import shutil
import tempfile
from decimal import Decimal
from fractions import Fraction
from pathlib import Path
from typing import Any, Optional, Sequence, Union

from . import _core

#: A number read exactly: a string (``"0.7"``, ``"7/10"``), an int, a Fraction or a Decimal.
Exact = Union[str, int, Fraction, Decimal]


def exact_text(value: Any, field: str) -> str:
    """``value`` as the exact text the engine reads; a bare float is refused, as in files."""
    if isinstance(value, bool):
        raise ValueError(f"{field}: must be a number, got {value!r}")
    if isinstance(value, float):
        raise ValueError(
            f'{field}: write the number {value!r} as a string ("{value!r}") or a Fraction so '
            "that it is read exactly, not rounded to a double"
        )
    if isinstance(value, int):
        return str(value)
    if isinstance(value, Fraction):
        return str(value)
    if isinstance(value, Decimal):
        return str(value)
    if isinstance(value, str):
        return value.strip()
    raise ValueError(
        f"{field}: must be a number written as a string, e.g. \"0.7\" or \"7/10\", "
        f"or a Fraction; got {type(value).__name__}"
    )


_files_dir: Optional[str] = None
_counter = itertools.count()


def scratch_path(name: str, extension: str) -> str:
    """A new file name in this process's scratch folder (removed at exit)."""
    global _files_dir
    if _files_dir is None:
        _files_dir = tempfile.mkdtemp(prefix="shufflecert-")
        atexit.register(shutil.rmtree, _files_dir, True)
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-.") or "mechanism"
    return os.path.join(_files_dir, f"{next(_counter)}-{stem}.{extension}")


def _write_file(name: str, document: dict[str, Any]) -> str:
    """Writes a mechanism file the engine reads, in the scratch folder, and returns its
    path."""
    path = scratch_path(name, "json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(document, f)
    return path


class Mechanism:
    """A local randomizer, as ``-m SPEC`` names it: a binary-input pair of rows ``(w0, w1)``,
    a family (``binary_rr``, ``k_rr``) or a file.

    Entries are exact: strings such as ``"0.7"`` or ``"7/10"``, ints, or
    :class:`fractions.Fraction`; a bare float is refused, because it has already been rounded
    to a double.  The engine validates the mechanism when it is made.

    >>> m = Mechanism(w0=["0.7", "0.2", "0.1"], w1=["0.15", "0.55", "0.30"], name="ternary")
    >>> m.rows[1]
    ['0.15', '0.55', '0.3']
    """

    spec: str
    """What the command line's ``-m`` receives: a family string or a file path."""

    def __init__(
        self,
        w0: Sequence[Exact],
        w1: Sequence[Exact],
        *,
        name: Optional[str] = None,
        outputs: Optional[Sequence[str]] = None,
    ) -> None:
        document: dict[str, Any] = {
            "w0": _row(w0, "w0"),
            "w1": _row(w1, "w1"),
        }
        document["name"] = name or "mechanism"
        if outputs is not None:
            document["outputs"] = [str(o) for o in outputs]
        self._load(_write_file(document["name"], document))

    def _load(self, spec: str) -> None:
        self.spec = spec
        try:
            self._description: dict[str, Any] = json.loads(_core.describe(spec))
        except ValueError as e:
            # Name the mechanism, not the scratch file it was written to.
            if _files_dir is not None and str(e).startswith(_files_dir):
                raise ValueError(str(e).split(": ", 1)[-1]) from None
            raise

    @classmethod
    def from_spec(cls, spec: Union[str, os.PathLike[str]]) -> "Mechanism":
        """A family string (``"binary-rr:eps0=1"``, ``"k-rr:k=4,exp_eps0=3"``) or a TOML/JSON
        file, exactly as ``-m`` takes it."""
        self = cls.__new__(cls)
        self._load(os.fspath(spec))
        return self

    @classmethod
    def from_file(cls, path: Union[str, os.PathLike[str]]) -> "Mechanism":
        """A mechanism or randomizer file (TOML or JSON), as ``-m FILE`` reads it."""
        if not Path(path).is_file():
            raise FileNotFoundError(f"{os.fspath(path)}: no such mechanism file")
        return cls.from_spec(path)

    @classmethod
    def binary_rr(
        cls, *, eps0: Optional[Any] = None, exp_eps0: Optional[Exact] = None
    ) -> "Mechanism":
        """Binary randomized response: ``eps0`` (ε0, a decimal) or ``exp_eps0`` (e^ε0, a
        rational)."""
        return cls.from_spec("binary-rr:" + _local_parameter(eps0, exp_eps0))

    @classmethod
    def k_rr(
        cls,
        *,
        k: int,
        eps0: Optional[Any] = None,
        exp_eps0: Optional[Exact] = None,
        inputs: Optional[int] = None,
    ) -> "Mechanism":
        """K-ary randomized response on K inputs (``inputs=I`` restricts it to inputs
        ``0..I−1``; ``inputs=2`` is its binary-input restriction, which the pair commands
        need)."""
        spec = f"k-rr:k={_whole(k, 'k')}," + _local_parameter(eps0, exp_eps0)
        if inputs is not None:
            spec += f",inputs={_whole(inputs, 'inputs')}"
        return cls.from_spec(spec)

    @property
    def name(self) -> str:
        return str(self._description["name"])

    @property
    def inputs(self) -> list[str]:
        """The input domain's labels."""
        return list(self._description["inputs"])

    @property
    def outputs(self) -> list[str]:
        return list(self._description["outputs"])

    @property
    def rows(self) -> list[list[str]]:
        """One row per input, entries as exact strings."""
        return [list(r) for r in self._description["rows"]]

    def to_dict(self) -> dict[str, Any]:
        """The engine's description: ``name``, ``inputs``, ``outputs``, ``rows``."""
        return json.loads(json.dumps(self._description))

    def __repr__(self) -> str:
        if os.path.dirname(self.spec) != _files_dir:
            return f"{type(self).__name__}.from_spec({self.spec!r})"
        shape = f"{len(self.inputs)} inputs, {len(self.outputs)} outputs"
        return f"<{type(self).__name__} {self.name!r}: {shape}>"


class Randomizer(Mechanism):
    """A randomizer on any finite input domain: one exact row per input.

    >>> r = Randomizer(rows=[["1/2", "1/4", "1/4"], ["1/4", "1/2", "1/4"], ["1/4", "1/4", "1/2"]],
    ...                inputs=["a", "b", "c"])
    >>> r.inputs
    ['a', 'b', 'c']
    """

    def __init__(  # noqa: D107 - documented on the class
        self,
        rows: Sequence[Sequence[Exact]],
        inputs: Optional[Sequence[str]] = None,
        *,
        name: Optional[str] = None,
        outputs: Optional[Sequence[str]] = None,
    ) -> None:
        document: dict[str, Any] = {
            "inputs": [str(x) for x in inputs]
            if inputs is not None
            else [str(i) for i in range(len(rows))],
            "rows": [_row(row, f"rows[{i}]") for i, row in enumerate(rows)],
        }
        document["name"] = name or "randomizer"
        if outputs is not None:
            document["outputs"] = [str(o) for o in outputs]
        self._load(_write_file(document["name"], document))


def _whole(value: Any, field: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, str)) or not str(value).isdigit():
        raise ValueError(f"{field}: must be a whole number, got {value!r}")
    return str(value)


def _row(row: Any, field: str) -> list[str]:
    """A row of exact entries (a sequence, not a string)."""
    if isinstance(row, (str, bytes)) or not hasattr(row, "__iter__"):
        raise ValueError(f"{field}: must be a list of entries, got {row!r}")
    return [exact_text(x, f"{field}[{i}]") for i, x in enumerate(row)]


def _local_parameter(eps0: Optional[Any], exp_eps0: Optional[Exact]) -> str:
    if (eps0 is None) == (exp_eps0 is None):
        raise ValueError("give exactly one of eps0 (ε0, a decimal) and exp_eps0 (e^ε0, a rational)")
    if eps0 is not None:
        return "eps0=" + (repr(eps0) if isinstance(eps0, float) else exact_text(eps0, "eps0"))
    return "exp_eps0=" + exact_text(exp_eps0, "exp_eps0")
