"""shufflecert: certified privacy curves for the shuffle model of differential privacy.

Every number reported as an :class:`Enclosure` is an interval with exact endpoints proven to
contain the true value.  The functions mirror the command line's commands (``delta``,
``epsilon``, ``divergences``, ``profile``, ``bounds``, ``audit``, ``compare``, ``check``,
``verify``, ``merge``, ``golden``, …) and take its options as keyword arguments; they run the
same engine, in process, and return its ``--json`` report with typed access.

>>> import shufflecert as sc
>>> m = sc.Mechanism.binary_rr(eps0="1")
>>> r = sc.epsilon(m, n=1000, k=0, delta="1e-5")
>>> r.eps.contains("0.1053725861617")
True
"""

from ._core import ShufflecertError, version as _engine_version
from ._enclosure import Enclosure
from ._mechanism import Mechanism, Randomizer
from ._report import (
    AuditReport,
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
    Node,
    ProfileReport,
    Report,
    VerifyReport,
)
from ._commands import (
    berry_esseen,
    bounds,
    check,
    compare,
    compare_messages,
    constants,
    delta,
    divergences,
    epsilon,
    golden,
    limit,
    merge,
    profile,
    verify,
)
from ._audit import Claims, audit

__version__ = _engine_version()

__all__ = [
    "AuditReport",
    "BerryEsseenReport",
    "BoundsReport",
    "CheckReport",
    "Claims",
    "CompareMessagesReport",
    "CompareReport",
    "ConstantsReport",
    "DeltaReport",
    "DivergencesReport",
    "Enclosure",
    "EpsilonReport",
    "GoldenReport",
    "LimitReport",
    "Mechanism",
    "MergeReport",
    "Node",
    "ProfileReport",
    "Randomizer",
    "Report",
    "ShufflecertError",
    "VerifyReport",
    "audit",
    "berry_esseen",
    "bounds",
    "check",
    "compare",
    "compare_messages",
    "constants",
    "delta",
    "divergences",
    "epsilon",
    "golden",
    "limit",
    "merge",
    "profile",
    "verify",
]
