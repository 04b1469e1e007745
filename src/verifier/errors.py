"""One exception hierarchy for verifier.

Every message says what was wrong (with the value), which rule it broke, and how to fix it.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "VerifierError",
    "InvalidArgument",
    "IncompatibleObjects",
    "NumericalFailure",
    "AccuracyNotReachable",
    "InconsistentBounds",
    "NotApplicable",
    "NotCertified",
]


class VerifierError(Exception):
    """Base class of every error verifier raises on purpose."""


class InvalidArgument(VerifierError, ValueError):
    """A user-supplied value is out of its allowed range or of the wrong type.

    ``InvalidArgument("sigma", -1.0, "must be > 0")`` reads
    ``sigma=-1.0 is invalid: must be > 0``.
    """

    def __init__(self, name: str, value: Any, rule: str, fix: str = "") -> None:
        self.name = name
        self.value = value
        self.rule = rule
        self.fix = fix
        message = f"{name}={value!r} is invalid: {rule}"
        if fix:
            message += f" ({fix})"
        super().__init__(message)


class IncompatibleObjects(VerifierError, ValueError):
    """Two objects that must agree (dominance, grid, direction) do not; both values are named."""

    def __init__(self, what: str, left: Any, right: Any) -> None:
        self.what = what
        super().__init__(
            f"cannot combine objects with different {what}: {left!r} vs {right!r} "
            f"(build both with the same {what})"
        )


class NumericalFailure(VerifierError, ArithmeticError):
    """A computation could not produce a result with the promised guarantee."""


class AccuracyNotReachable(NumericalFailure):
    """The requested accuracy cannot be met within the stated resource limit."""


class InconsistentBounds(VerifierError, AssertionError):
    """A rigorous upper bound came out below a rigorous lower bound: a defect in verifier."""


class NotApplicable(VerifierError):
    """A method's theorem does not apply to the given parameters (its conditions fail)."""


class NotCertified(VerifierError):
    """A claim could not be certified (raised only by APIs that promise a certificate)."""
