"""Built-in example claims, one per verdict, run by ``verifier demo`` and ``verifier certify --example``.

Each needs only the exact closed form of the Gaussian pair (Steinke 2022, Cor 8), so it is decided
in milliseconds whatever other methods are registered.
"""

from __future__ import annotations

from dataclasses import dataclass

from verifier.certify.claim import Claim, parse_claim
from verifier.certify.verdict import Verdict
from verifier.errors import InvalidArgument

__all__ = ["Example", "EXAMPLES", "example"]


@dataclass(frozen=True)
class Example:
    """A named claim, the verdict it must get, and why."""

    name: str
    claim: dict
    expected: Verdict
    story: str

    def parsed(self) -> Claim:
        return parse_claim(self.claim)


EXAMPLES: tuple[Example, ...] = (
    Example(
        "gaussian-certified",
        {
            "mechanism": {"name": "gaussian", "sigma": 1.0, "sensitivity": 1.0},
            "scheme": {"name": "single"},
            "neighboring": "add_or_remove",
            "epsilon": 4.3772,
            "delta": 1e-5,
            "source": "ε(δ=1e-5) of the Gaussian mechanism rounded up to 4 decimals",
        },
        Verdict.CERTIFIED,
        "the exact ε(1e-5) is 4.37717809568…, so δ(4.3772) = 9.99906e-6 <= 1e-5",
    ),
    Example(
        "gaussian-replace-one-violated",
        {
            "mechanism": {"name": "gaussian", "sigma": 2.0, "sensitivity": 1.0},
            "scheme": {"name": "single"},
            "neighboring": "replace_one",
            "epsilon": 2.166,
            "delta": 1e-5,
            "source": "a library's answer for σ=2 with replace-one neighbours (sensitivity not doubled)",
        },
        Verdict.VIOLATED,
        "a replacement moves the sum by 2Δ, so the mechanism is the Gaussian with σ/Δ = 1: δ(2.166) = 0.0144 > 1e-5",
    ),
    Example(
        "gaussian-at-resolution",
        {
            "mechanism": {"name": "gaussian", "sigma": 1.0, "sensitivity": 1.0},
            "scheme": {"name": "single"},
            "neighboring": "add_or_remove",
            "epsilon": 4.3772,
            "delta": 9.999061715485875e-06,
            "source": "δ(4.3772) reported to the last bit of a float64",
        },
        Verdict.INCONCLUSIVE,
        "the exact δ(4.3772) lies between this float and the next one up: no float64 bound can put it on either side",
    ),
)


def example(name: str) -> Example:
    """The built-in example called ``name``."""
    for item in EXAMPLES:
        if item.name == name:
            return item
    raise InvalidArgument("example", name, f"must be one of {', '.join(e.name for e in EXAMPLES)}")
