"""Built-in example claims, run by ``verifier demo`` and ``verifier certify --example``.

:data:`EXAMPLES`, one per verdict, need only the exact closed form of the Gaussian pair (Steinke
2022, Cor 8), so each is decided in milliseconds whatever other methods are registered.
:data:`DEMO` holds the claims the demo leads with: a DP-SGD run, balls-in-bins batches and a
refuted textbook calibration.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from verifier._types import Bracket, Quantity, Side
from verifier.certify.claim import Claim, parse_claim
from verifier.certify.verdict import Outcome, Verdict
from verifier.errors import InvalidArgument

__all__ = ["Example", "EXAMPLES", "DEMO", "example"]


@dataclass(frozen=True)
class Example:
    """A named claim, the verdict it must get, and why: ``explain(outcome)`` says it with the
    numbers of the outcome it explains (never numbers written in advance: issue 41)."""

    name: str
    claim: dict
    expected: Verdict
    explain: Callable[[Outcome], str]

    def parsed(self) -> Claim:
        return parse_claim(self.claim)


def _epsilon(outcome: Outcome) -> Bracket:
    """The best rigorous bracket on ε(claimed δ) over the required directions (their maximum)."""
    return outcome.epsilon.combined if outcome.epsilon is not None else Bracket(-math.inf, math.inf)


def _delta(outcome: Outcome) -> Bracket:
    """The best rigorous bracket on δ(claimed ε) over the required directions."""
    return outcome.delta.combined if outcome.delta is not None else Bracket(0.0, 1.0)


def _upper_of(outcome: Outcome, method: str) -> float | None:
    """``method``'s best upper bound on ε(claimed δ), the maximum over the required directions;
    None when it did not bound every one of them."""
    bounds = [b for b in (outcome.epsilon.bounds if outcome.epsilon else ()) if b.rigorous and b.side is Side.UPPER and b.method == method]
    per = [min((b.value for b in bounds if b.direction is d), default=None) for d in outcome.claim.directions]
    return None if not per or None in per else max(per)  # type: ignore[type-var]


def _width(bracket: Bracket) -> str:
    return f"{(bracket.upper - bracket.lower) / bracket.upper:.2%}" if bracket.upper > 0 and math.isfinite(bracket.upper) else "unbounded"


def _holds(outcome: Outcome) -> str:
    return {Verdict.CERTIFIED: "holds", Verdict.VIOLATED: "fails", Verdict.INCONCLUSIVE: "is undecided"}[outcome.verdict]


def _exact_gaussian(o: Outcome) -> str:
    e, d = _epsilon(o), _delta(o)
    return (
        f"ε({o.claim.delta:g}) lies in [{e.lower:.12g}, {e.upper:.12g}], so δ({o.claim.epsilon:g}) lies in [{d.lower:.6g}, {d.upper:.6g}]: "
        f"the claim {_holds(o)}"
    )


def _replace_one(o: Outcome) -> str:
    d = _delta(o)
    return f"a replacement moves the sum by 2Δ, so the mechanism is the Gaussian with σ/Δ halved: δ({o.claim.epsilon:g}) >= {d.lower:.4g} > {o.claim.delta:g}"


def _at_resolution(o: Outcome) -> str:
    d = _delta(o)
    steps = round((d.upper - d.lower) / math.ulp(o.claim.delta)) if o.claim.delta else 0
    inside = d.lower <= o.claim.delta <= d.upper
    why = "no float64 bound can put the truth on either side of it" if inside and steps <= 2 else "the methods that ran did not resolve it further"
    return (
        f"the best bracket on δ({o.claim.epsilon:g}) is [{d.lower!r}, {d.upper!r}], {steps} float64 step{'' if steps == 1 else 's'} wide, "
        f"and {'holds' if inside else 'misses'} the claimed δ: {why}"
    )


def _dp_sgd(o: Outcome) -> str:
    e, rdp = _epsilon(o), _upper_of(o, "rdp")
    where = (o.claim.epsilon - e.upper) / e.upper
    text = (
        f"the certified bracket on ε({o.claim.delta:g}) is [{e.lower:.5g}, {e.upper:.5g}], {_width(e)} wide (refined only until it decided), "
        f"and the claimed ε = {o.claim.epsilon:g} lies {abs(where):.2%} {'above its upper end' if where >= 0 else 'below its upper end'}"
    )
    return text + (f"; the classic RDP accountant alone certifies only ε <= {rdp:.4g}" if rdp is not None else "")


def _balls_in_bins(o: Outcome) -> str:
    e = _epsilon(o)
    return (
        f"random allocation (Feldman & Shenfeld) has its own rigorous PLD bracket, ε({o.claim.delta:g}) in [{e.lower:.4g}, {e.upper:.4g}]: "
        f"the Poisson number ε = {o.claim.epsilon:g} {_holds(o)} for these batches"
    )


def _textbook(o: Outcome) -> str:
    e = _epsilon(o)
    sigma = o.claim.mechanism["sigma"] if o.claim.mechanism else math.nan
    return (
        f"the exact ε({o.claim.delta:g}) of σ = {sigma:.5g} lies in [{e.lower:.5g}, {e.upper:.5g}] (Balle & Wang 2018, Thm 8), "
        f"{'above' if e.lower > o.claim.epsilon else 'not above'} the claimed ε = {o.claim.epsilon:g}: the textbook formula {_holds(o)} outside its range"
    )


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
        _exact_gaussian,
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
        _replace_one,
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
        _at_resolution,
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
        _dp_sgd,
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
        _balls_in_bins,
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
        _textbook,
    ),
)


def example(name: str) -> Example:
    """The built-in example (or demo claim) called ``name``."""
    for item in EXAMPLES + DEMO:
        if item.name == name:
            return item
    raise InvalidArgument("example", name, f"must be one of {', '.join(e.name for e in EXAMPLES + DEMO)}")
