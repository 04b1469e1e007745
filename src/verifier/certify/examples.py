"""Built-in example claims, run by ``verifier demo`` and ``verifier certify --example``.

:data:`EXAMPLES`, one per verdict, need only the exact closed form of the Gaussian pair (Steinke
2022, Cor 8), so each is decided in milliseconds whatever other methods are registered.
:data:`DEMO` holds the claims the demo leads with: a DP-SGD run, balls-in-bins batches and a
refuted textbook calibration.
"""

from __future__ import annotations

from dataclasses import dataclass

from verifier.certify.claim import Claim, parse_claim
from verifier.certify.verdict import Verdict
from verifier.errors import InvalidArgument

__all__ = ["Example", "EXAMPLES", "DEMO", "example"]


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


#: The claims ``verifier demo`` leads with: what users bring (decided in about a second each).
DEMO: tuple[Example, ...] = (
    Example(
        "dp-sgd-opacus",
        {
            "mechanism": {"name": "gaussian", "sigma": 1.1, "sensitivity": 1.0},
            "scheme": {"name": "poisson", "rate": 256 / 60000, "steps": 2344},
            "neighboring": "add_or_remove",
            "epsilon": 0.92,
            "delta": 1e-5,
            "source": "DP-SGD, Opacus-style run: batch 256 of 60000 Poisson-sampled, σ=1.1, 2344 steps (10 epochs); "
            "ε from prv_accountant's estimate 0.91897 (its interval [0.9089, 0.9290]) rounded up to 0.92",
        },
        Verdict.CERTIFIED,
        "the certified bracket on ε(1e-5) is [0.91872, 0.91901], 0.03% wide: a claim 0.1% above the true ε is decided; "
        "the classic RDP accountant can only certify ε <= 1.097",
    ),
    Example(
        "balls-in-bins",
        {
            "mechanism": {"name": "gaussian", "sigma": 1.1, "sensitivity": 1.0},
            "scheme": {"name": "allocation", "steps": 234, "k": 1, "epochs": 10},
            "neighboring": "add_or_remove",
            "epsilon": 0.92,
            "delta": 1e-5,
            "source": "the same run with balls-in-bins batches (each example in one of 234 batches per epoch, 10 epochs), "
            "reporting the Poisson ε",
        },
        Verdict.CERTIFIED,
        "random allocation (Feldman & Shenfeld) has its own rigorous PLD bracket, ε(1e-5) <= 0.8836: the Poisson number holds for these batches",
    ),
    Example(
        "classical-gaussian-outside-range",
        {
            "mechanism": {"name": "gaussian", "sigma": 0.4844805262605389, "sensitivity": 1.0},
            "scheme": {"name": "single"},
            "neighboring": "add_or_remove",
            "epsilon": 10.0,
            "delta": 1e-5,
            "source": "σ = √(2 ln(1.25/δ))/ε, the classical Gaussian calibration (Dwork & Roth 2014, Thm A.1, proven only "
            "for ε < 1), used at ε = 10",
        },
        Verdict.VIOLATED,
        "the exact ε(1e-5) of σ = 0.48448 is 10.394 (Balle & Wang 2018, Thm 8): the textbook formula fails outside its range",
    ),
)


def example(name: str) -> Example:
    """The built-in example (or demo claim) called ``name``."""
    for item in EXAMPLES + DEMO:
        if item.name == name:
            return item
    raise InvalidArgument("example", name, f"must be one of {', '.join(e.name for e in EXAMPLES + DEMO)}")
