"""The commands, as functions: keyword arguments are the command line's options.

Each function runs the engine in process (``shufflecert._core.run``) with the options its
keywords name and ``--json``, and returns the report: one engine, one validation, the same
messages.  Numbers may be strings (read exactly), ints, :class:`fractions.Fraction` or
:class:`decimal.Decimal`; a float is read as the shortest decimal that rounds to it (what
Python prints, ``0.1`` for ``0.1``), which the report echoes.  Lists become the comma-separated
lists the options take.
"""

from __future__ import annotations

import json
import os
import sys
from decimal import Decimal
from fractions import Fraction
from typing import Any, Callable, Iterable, Optional, Sequence, Union

from . import _core
from ._mechanism import Mechanism, scratch_path
from ._report import (
    REPORTS,
    BerryEsseenReport,
    BoundsReport,
    CheckReport,
    CompareMessagesReport,
    CompareReport,
    ConstantsReport,
    DeltaReport,
    DivergencesReport,
    EpsilonReport,
    GoldenReport,
    LimitReport,
    MergeReport,
    ProfileReport,
    Report,
    VerifyReport,
)

Number = Union[str, int, float, Fraction, Decimal]
Numbers = Union[Number, Sequence[Number]]
MechanismLike = Union[Mechanism, str, "os.PathLike[str]"]
#: ``True`` for a bar on stderr (tqdm when installed), or a callable
#: ``progress(kind, payload)``: ``("note", text)`` and
#: ``("stages", [(name, unit, done, total), …])``, outermost stage first.
Progress = Union[bool, Callable[[str, Any], None], None]

#: Options every certified pair, profile, bounds, audit and compare command takes.
COMMON = (
    "backend",
    "precision",
    "engine",
    "no_reduce",
    "no_truncation",
    "rel_width",
    "no_escalate",
    "max_memory_gib",
    "max_seconds",
    "certificate",
    "messages",
    "bundled",
)


#: Options that are switches (``True`` or ``False``); every other option takes a value.
SWITCHES = frozenset(
    {
        "no_reduce",
        "no_truncation",
        "no_escalate",
        "no_prune",
        "with_ends",
        "eps_ranges",
        "bundled",
        "profile",
    }
)


def plain(value: Any) -> Any:
    """A numpy (or other array library's) scalar as the Python number it holds."""
    item = getattr(value, "item", None)
    if callable(item) and not isinstance(value, (str, bytes, int, float, Fraction, Decimal)):
        try:
            return item()
        except (TypeError, ValueError):
            return value
    return value


def number_text(value: Any, field: str) -> str:
    """One number as the command line reads it."""
    value = plain(value)
    if isinstance(value, bool):
        raise ValueError(f"{field}: must be a number, got {value!r}")
    if isinstance(value, float):
        return float.__repr__(value)
    if isinstance(value, (int, Fraction, Decimal)):
        return str(value)
    if isinstance(value, str):
        return value
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    raise ValueError(f"{field}: must be a number (a string, int, Fraction or float), got {value!r}")


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _options(values: dict[str, Any]) -> list[str]:
    """``--name value`` for each keyword given (``True`` alone for a switch, lists joined with
    commas, ``None`` and ``False`` left out)."""
    argv: list[str] = []
    for name, value in values.items():
        flag = _flag(name)
        if name in SWITCHES:
            if not isinstance(value, bool) and value is not None:
                raise ValueError(f"{flag}: a switch, True or False; got {value!r}")
            if value:
                argv.append(flag)
            continue
        if value is None:
            continue
        if isinstance(value, bool):
            raise ValueError(f"{flag}: must be a value, got {value!r}")
        elif name == "slice" and isinstance(value, (list, tuple)):
            if len(value) != 2:
                raise ValueError(f"{flag}: must be (I, N) or 'I/N', got {value!r}")
            argv += [flag, f"{number_text(value[0], flag)}/{number_text(value[1], flag)}"]
        elif isinstance(value, (list, tuple)) and name not in ("k_range", "pi_range"):
            argv += [flag, ",".join(number_text(v, flag) for v in value)]
        elif isinstance(value, (list, tuple)):
            if len(value) != 2:
                raise ValueError(f"{flag}: must be (A, B) or 'A..B', got {value!r}")
            argv += [flag, f"{number_text(value[0], flag)}..{number_text(value[1], flag)}"]
        else:
            argv += [flag, number_text(value, flag)]
    return argv


def _common(options: dict[str, Any], allowed: Iterable[str] = COMMON) -> dict[str, Any]:
    allowed = tuple(allowed)
    unknown = sorted(set(options) - set(allowed))
    if unknown:
        raise TypeError(
            f"unexpected keyword argument{'s' if len(unknown) > 1 else ''} "
            f"{', '.join(unknown)}; this command also takes: {', '.join(allowed)}"
        )
    return options


def path_text(value: Any, field: str) -> str:
    """A file path given as ``str`` or ``os.PathLike``."""
    if isinstance(value, (str, os.PathLike)):
        return os.fspath(value)
    raise ValueError(f"{field}: expected a file path, got {value!r}")


def _spec(mechanism: MechanismLike) -> str:
    if isinstance(mechanism, Mechanism):
        return mechanism.spec
    if isinstance(mechanism, (str, os.PathLike)):
        return os.fspath(mechanism)
    raise ValueError(f"--mechanism: expected a Mechanism, a family string or a file, got {mechanism!r}")


class _Bar:
    """The default progress display: tqdm when installed, else one line on stderr."""

    def __init__(self) -> None:
        try:
            from tqdm.auto import tqdm  # type: ignore[import-not-found]
        except ImportError:
            tqdm = None
        self._tqdm = tqdm
        self._bar: Any = None
        self._key: Any = None

    def __call__(self, kind: str, payload: Any) -> None:
        if kind == "note":
            (self._bar.write if self._bar is not None else _print_err)(str(payload))
            return
        if not payload:
            self.close()
            return
        name, unit, done, total = payload[0]
        path = " › ".join(s[0] for s in payload)
        inner = payload[-1]
        if self._tqdm is None:
            sys.stderr.write(f"\r{path}: {inner[2]}/{inner[3]} {inner[1]}   ")
            sys.stderr.flush()
            self._key = True
            return
        if self._key != (name, total):
            self.close()
            self._bar = self._tqdm(total=total, desc=name, unit=" " + unit)
            self._key = (name, total)
        self._bar.set_postfix_str(path if len(payload) > 1 else "", refresh=False)
        self._bar.update(done - self._bar.n)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
        elif self._key is True:
            sys.stderr.write("\n")
        self._key = None


def _print_err(text: str) -> None:
    print(text, file=sys.stderr)


def run(command: str, argv: list[str], progress: Progress = None) -> Report:
    """Runs ``shufflecert COMMAND ARGV… --json`` in process and returns its report.

    Bad input raises :class:`ValueError` with the command line's message (its exit code 2),
    unreadable or unwritable files :class:`OSError`, a bug :class:`ShufflecertError`.
    ``KeyboardInterrupt`` stops the computation at its next step.
    """
    callback: Optional[Callable[[str, Any], None]]
    bar: Optional[_Bar] = None
    if progress is True:
        bar = _Bar()
        callback = bar
    elif progress is None or progress is False:
        callback = None
    elif callable(progress):
        callback = progress
    else:
        raise ValueError(f"progress: True, False or a callable, got {progress!r}")
    try:
        stdout, failure = _core.run(
            [command, *argv, "--json", "--progress", "none"], progress=callback
        )
    finally:
        if bar is not None:
            bar.close()
    return REPORTS[command](stdout, failure)


def _pair_args(
    mechanism: Optional[MechanismLike],
    n: Any,
    k: Any,
    background: Any,
    switch: Any,
    experiment: Any,
) -> list[str]:
    argv: list[str] = []
    if mechanism is not None:
        argv += ["--mechanism", _spec(mechanism)]
    if isinstance(background, dict):
        background = ",".join(f"{x}={c}" for x, c in background.items())
    if isinstance(switch, (tuple, list)):
        switch = ":".join(str(x) for x in switch)
    argv += _options(
        {"n": n, "k": k, "background": background, "switch": switch, "experiment": experiment}
    )
    return argv


def delta(
    mechanism: Optional[MechanismLike] = None,
    *,
    n: Any = None,
    k: Any = None,
    eps: Optional[Numbers] = None,
    exp_eps: Optional[Numbers] = None,
    background: Any = None,
    switch: Any = None,
    experiment: Optional[str] = None,
    tv_ball: Optional[Number] = None,
    plot: Optional[str] = None,
    progress: Progress = None,
    **options: Any,
) -> DeltaReport:
    """δ(ε) of the pair ``(T_{n,k}, T_{n,k+1})`` in both directions at each ε (``shufflecert
    delta``).  ``background={x: count, …}`` and ``switch=(x1, x1')`` give a randomizer's pair."""
    argv = _pair_args(mechanism, n, k, background, switch, experiment)
    argv += _options({"eps": eps, "exp_eps": exp_eps, "tv_ball": tv_ball, "plot": plot})
    argv += _options(_common(options))
    return run("delta", argv, progress)  # type: ignore[return-value]


def epsilon(
    mechanism: Optional[MechanismLike] = None,
    *,
    delta: Number,
    n: Any = None,
    k: Any = None,
    background: Any = None,
    switch: Any = None,
    experiment: Optional[str] = None,
    progress: Progress = None,
    **options: Any,
) -> EpsilonReport:
    """The smallest ε ≥ 0 with δ(ε) ≤ ``delta``, each direction and two-sided (``shufflecert
    epsilon``)."""
    argv = _pair_args(mechanism, n, k, background, switch, experiment)
    argv += _options({"delta": delta}) + _options(_common(options))
    return run("epsilon", argv, progress)  # type: ignore[return-value]


def divergences(
    mechanism: Optional[MechanismLike] = None,
    *,
    n: Any = None,
    k: Any = None,
    renyi_order: Optional[Numbers] = None,
    background: Any = None,
    switch: Any = None,
    experiment: Optional[str] = None,
    progress: Progress = None,
    **options: Any,
) -> DivergencesReport:
    """TV, KL both ways, JSD, χ², squared Hellinger and Rényi divergences of the pair
    (``shufflecert divergences``)."""
    argv = _pair_args(mechanism, n, k, background, switch, experiment)
    argv += _options({"renyi_order": renyi_order}) + _options(_common(options))
    return run("divergences", argv, progress)  # type: ignore[return-value]


def profile(
    mechanism: MechanismLike,
    *,
    n: Any,
    eps: Optional[Numbers] = None,
    exp_eps: Optional[Numbers] = None,
    delta: Optional[Numbers] = None,
    renyi_order: Optional[Numbers] = None,
    k_range: Union[str, Sequence[int], None] = None,
    with_ends: bool = False,
    slice: Union[str, Sequence[int], None] = None,
    threads: Optional[int] = None,
    no_prune: bool = False,
    plot: Optional[str] = None,
    progress: Progress = None,
    **options: Any,
) -> ProfileReport:
    """The mechanism's guarantee: the worst case over every composition k (``shufflecert
    profile``), or for a randomizer on more inputs over every dataset.  ``k_range=(a, b)``
    (both included) or ``"a..b"`` computes one shard of a binary-input profile;
    ``slice=(i, n)`` or ``"i/n"`` one of n slices of a randomizer's compositions."""
    argv = ["--mechanism", _spec(mechanism)]
    argv += _options(
        {
            "n": n,
            "eps": eps,
            "exp_eps": exp_eps,
            "delta": delta,
            "renyi_order": renyi_order,
            "k_range": k_range,
            "with_ends": with_ends,
            "slice": slice,
            "threads": threads,
            "no_prune": no_prune,
            "plot": plot,
        }
    )
    argv += _options(_common(options))
    return run("profile", argv, progress)  # type: ignore[return-value]


def bounds(
    mechanism: MechanismLike,
    *,
    n: Any,
    eps: Optional[Numbers] = None,
    exp_eps: Optional[Numbers] = None,
    delta: Optional[Number] = None,
    search: Optional[int] = None,
    ceiling_seconds: Optional[Number] = None,
    progress: Progress = None,
    **options: Any,
) -> BoundsReport:
    """A certified range of δ_M(ε) or ε_M(δ) for a randomizer on any finite input domain
    (``shufflecert bounds``); ``search=N`` raises the lower end by a local search over at most
    N mixed backgrounds; ``ceiling_seconds=S`` lowers the upper end by a branch and bound over
    every dataset within S seconds (each row's ``ceiling``)."""
    argv = ["--mechanism", _spec(mechanism)]
    argv += _options(
        {
            "n": n,
            "eps": eps,
            "exp_eps": exp_eps,
            "delta": delta,
            "search": search,
            "ceiling_seconds": ceiling_seconds,
        }
    )
    argv += _options(_common(options, tuple(c for c in COMMON if c != "engine")))
    return run("bounds", argv, progress)  # type: ignore[return-value]


def compare(
    mechanism: MechanismLike,
    *,
    n: Numbers,
    delta: Number,
    progress: Progress = None,
    **options: Any,
) -> CompareReport:
    """Published amplification bounds beside the certified ε, per n (``shufflecert
    compare``)."""
    argv = ["--mechanism", _spec(mechanism)]
    argv += _options({"n": n, "delta": delta}) + _options(_common(options))
    return run("compare", argv, progress)  # type: ignore[return-value]


def check(
    mechanism: Optional[MechanismLike] = None,
    *,
    n: Any = None,
    k: Any = None,
    t: Optional[Numbers] = None,
    eps: Optional[Numbers] = None,
    n_sweep: Optional[Numbers] = None,
    fail_on: Optional[str] = None,
    plot: Optional[str] = None,
    progress: Progress = None,
    **options: Any,
) -> CheckReport:
    """Every asymptotic prediction of Part I held against the certified value it approximates
    (``shufflecert check``); predictions stay labelled uncertified."""
    argv = _pair_args(mechanism, n, k, None, None, None)
    argv += _options({"t": t, "eps": eps, "n_sweep": n_sweep, "fail_on": fail_on, "plot": plot})
    argv += _options(_common(options))
    return run("check", argv, progress)  # type: ignore[return-value]


def constants(
    mechanism: MechanismLike,
    *,
    pi: Optional[Number] = None,
    n: Any = None,
    k: Any = None,
    pi_range: Union[str, Sequence[Number], None] = None,
    grid: Optional[int] = None,
    messages: Optional[int] = None,
    bundled: bool = False,
) -> ConstantsReport:
    """The constants of Part I §3 and §6, exactly (``shufflecert constants``); with
    ``messages=M`` (``bundled=True``) the leading scale μ_n of users sending M messages."""
    argv = ["--mechanism", _spec(mechanism)]
    argv += _options(
        {
            "pi": pi,
            "n": n,
            "k": k,
            "pi_range": pi_range,
            "grid": grid,
            "messages": messages,
            "bundled": bundled,
        }
    )
    return run("constants", argv)  # type: ignore[return-value]


def compare_messages(
    mechanism: MechanismLike,
    *,
    n: Any,
    messages: int,
    eps: Optional[Numbers] = None,
    exp_eps: Optional[Numbers] = None,
    k: Any = None,
    profile: bool = False,
    progress: Progress = None,
    **options: Any,
) -> CompareMessagesReport:
    """One message with n and with nM users, M messages unbundled and bundled, side by side
    with certified ratios (``shufflecert compare-messages``); ``profile=True`` adds each model's
    mechanism-wide δ_M."""
    argv = ["--mechanism", _spec(mechanism)]
    argv += _options(
        {
            "n": n,
            "k": k,
            "messages": messages,
            "eps": eps,
            "exp_eps": exp_eps,
            "profile": profile,
        }
    )
    argv += _options(_common(options, tuple(c for c in COMMON if c not in ("messages", "bundled"))))
    return run("compare-messages", argv, progress)  # type: ignore[return-value]


def limit(
    family: Union[str, "os.PathLike[str]"],
    *,
    n: Numbers,
    eps: Optional[Numbers] = None,
    exp_eps: Optional[Numbers] = None,
    k_rule: Optional[str] = None,
    certificate: Optional[str] = None,
    progress: Progress = None,
) -> LimitReport:
    """A mechanism sequence against its Part III limit (``shufflecert limit``)."""
    argv = _options(
        {
            "family": path_text(family, "--family"),
            "n": n,
            "eps": eps,
            "exp_eps": exp_eps,
            "k_rule": k_rule,
            "certificate": certificate,
        }
    )
    return run("limit", argv, progress)  # type: ignore[return-value]


def berry_esseen(
    *,
    lambda_: Numbers,
    eps: Optional[Numbers] = None,
    t: Optional[Numbers] = None,
    pi: Optional[Number] = None,
    precision: Optional[int] = None,
    certificate: Optional[str] = None,
) -> BerryEsseenReport:
    """Part III §8's Poisson-shift curve against the Gaussian shift (``shufflecert
    berry-esseen``; ``lambda_`` is ``--lambda``)."""
    argv = _options({"lambda": lambda_, "eps": eps, "t": t, "pi": pi, "precision": precision})
    argv += _options({"certificate": certificate})
    return run("berry-esseen", argv)  # type: ignore[return-value]


def verify(
    certificate: Union[str, "os.PathLike[str]"],
    *,
    html: Optional[str] = None,
    max_memory_gib: Optional[Number] = None,
    progress: Progress = None,
) -> VerifyReport:
    """Re-derives a certificate by independent routes (``shufflecert verify``); the report's
    ``valid`` says whether it holds and ``problems`` what failed."""
    argv = [path_text(certificate, "certificate")]
    argv += _options({"html": html, "max_memory_gib": max_memory_gib})
    return run("verify", argv, progress)  # type: ignore[return-value]


def merge(
    shards: Sequence[Union[str, "os.PathLike[str]"]],
    *,
    certificate: Optional[str] = None,
) -> MergeReport:
    """Combines profile shards (``profile(k_range=…, certificate=…)``) into the
    mechanism-wide profile (``shufflecert merge``)."""
    if isinstance(shards, (str, os.PathLike)):
        shards = [shards]
    argv = [path_text(s, "shards") for s in shards] + _options({"certificate": certificate})
    return run("merge", argv)  # type: ignore[return-value]


def golden(out: Union[str, "os.PathLike[str]"], *, progress: Progress = None) -> GoldenReport:
    """Writes the golden fixture corpus into the folder ``out`` (new or empty) (``shufflecert
    golden --out DIR``): exact enclosures for the standard mechanisms over a fixed grid as JSON
    Lines, one certificate per case family, and a manifest with SHA-256s."""
    # Absolute, so that the report still finds its cases after a change of directory.
    folder = path_text(out, "out")
    if folder.strip():
        folder = os.path.abspath(folder)
    return run("golden", ["--out", folder], progress)  # type: ignore[return-value]


def write_claims(claims: Iterable[dict[str, Any]], name: str = "claims") -> str:
    """Writes claims (dicts with the claims-file columns) as a JSON Lines file the engine reads,
    in this process's scratch folder, and returns its path."""
    rows = []
    for i, claim in enumerate(claims):
        row: dict[str, Any] = {}
        for key, value in claim.items():
            if value is None:
                continue
            if key in ("source", "note", "kind"):
                row[key] = str(value)
            else:
                row[key] = number_text(value, f"claims[{i}].{key}")
        rows.append(row)
    path = scratch_path(name, "jsonl")
    with open(path, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row) + "\n")
    return path
