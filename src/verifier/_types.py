"""The vocabulary of verifier: which side a bound is on, which adjacency it is for, and the
frozen result types every method returns.

Leaf module: imports nothing from verifier except ``errors``.

A number that leaves verifier is one of
- a :class:`Bound`: a rigorous one-sided statement (``side`` says which) about one quantity in one
  direction, produced by one method, with the citation of the result it implements;
- a :class:`Bracket`: a pair of rigorous bounds ``lower <= truth <= upper``;
- an :class:`Estimate`: a statistical statement (a point value and a confidence interval at a stated
  confidence level), never to be read as a bound.
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field
from typing import Union

import numpy as np
import numpy.typing as npt

from verifier.errors import InconsistentBounds, InvalidArgument

__all__ = [
    "Side",
    "Dominance",
    "Direction",
    "Measure",
    "Quantity",
    "Bracket",
    "Bound",
    "Estimate",
    "directions_for",
    "FloatOrArray",
    "json_number",
]

FloatOrArray = Union[float, npt.NDArray[np.float64]]


class Side(enum.Enum):
    """Which side of the truth a scalar bound lies on."""

    UPPER = "upper"
    LOWER = "lower"

    @property
    def opposite(self) -> "Side":
        return Side.LOWER if self is Side.UPPER else Side.UPPER


class Dominance(enum.Enum):
    """Whether a distribution (a PLD, a pair) over-states (DOMINATING) or under-states (DOMINATED)
    the privacy loss of the mechanism it stands for.

    A DOMINATING object yields only UPPER bounds on δ(ε); a DOMINATED one only LOWER bounds.
    """

    DOMINATING = "dominating"
    DOMINATED = "dominated"

    @property
    def side(self) -> Side:
        """The side of the δ(ε) bounds this object yields."""
        return Side.UPPER if self is Dominance.DOMINATING else Side.LOWER


class Direction(enum.Enum):
    """Adjacency direction for a dominating pair (P, Q) = (R(*), R(⊥)).

    REMOVE bounds H_{e^ε}(P‖Q) (the neighbour lacks the element); ADD bounds H_{e^ε}(Q‖P).
    The standard add-or-remove adjacency is the maximum over both (see :func:`directions_for`).
    """

    ADD = "add"
    REMOVE = "remove"

    @property
    def opposite(self) -> "Direction":
        return Direction.REMOVE if self is Direction.ADD else Direction.ADD


class Measure(enum.Enum):
    """The distribution an output is drawn from when a privacy loss is evaluated."""

    P = "P"
    Q = "Q"


class Quantity(enum.Enum):
    """What a bound is a bound on."""

    DELTA = "delta"  # δ at a given ε
    EPSILON = "epsilon"  # ε at a given δ
    RENYI = "renyi"  # Rényi divergence D_α at a given order α
    RHO = "rho"  # zCDP parameter sup_α D_α/α; ``at`` is the order a lower bound came from (+∞: all orders)
    TPR = "tpr"  # an attacker's best true-positive rate at false-positive rate ``at`` (verifier.pld.tradeoff)


def directions_for(neighboring: str) -> tuple[Direction, ...]:
    """The directions a neighbouring relation requires.

    ``"add"`` and ``"remove"`` are single directions; ``"both"`` and ``"add_or_remove"`` (the
    standard relation) require both, and a guarantee for them is the maximum over the two.
    """
    table = {
        "add": (Direction.ADD,),
        "remove": (Direction.REMOVE,),
        "both": (Direction.ADD, Direction.REMOVE),
        "add_or_remove": (Direction.ADD, Direction.REMOVE),
    }
    try:
        return table[neighboring]
    except (KeyError, TypeError):
        raise InvalidArgument(
            "neighboring", neighboring, "must be one of 'add', 'remove', 'both', 'add_or_remove'"
        ) from None


def _is_nan(x: FloatOrArray) -> bool:
    return bool(np.any(np.isnan(np.asarray(x, dtype=float))))


@dataclass(frozen=True)
class Bracket:
    """A rigorous enclosure ``lower <= truth <= upper`` (scalars or equal-shape arrays).

    Raises :class:`InconsistentBounds` when ``lower > upper`` (a defect upstream, never a state to
    carry on with) and :class:`InvalidArgument` on NaN.
    """

    lower: FloatOrArray
    upper: FloatOrArray

    def __post_init__(self) -> None:
        if _is_nan(self.lower) or _is_nan(self.upper):
            raise InvalidArgument("bracket", (self.lower, self.upper), "bounds must not be NaN")
        lo, hi = np.asarray(self.lower, dtype=float), np.asarray(self.upper, dtype=float)
        if lo.shape != hi.shape:
            raise InvalidArgument("bracket", (lo.shape, hi.shape), "lower and upper must have one shape")
        if np.any(lo > hi):
            bad = int(np.argmax(lo > hi)) if lo.ndim else 0
            raise InconsistentBounds(
                f"lower bound {lo.flat[bad]!r} exceeds upper bound {hi.flat[bad]!r}",
            )

    @property
    def width(self) -> FloatOrArray:
        return np.subtract(self.upper, self.lower)

    @property
    def relative_width(self) -> FloatOrArray:
        """(upper − lower) / upper, 0 where both are 0."""
        hi = np.asarray(self.upper, dtype=float)
        w = np.asarray(self.width, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.where(hi == 0, 0.0, w / np.abs(hi))
        return float(out) if out.ndim == 0 else out

    def contains(self, value: FloatOrArray) -> bool:
        v = np.asarray(value, dtype=float)
        return bool(np.all((np.asarray(self.lower) <= v) & (v <= np.asarray(self.upper))))

    def __getitem__(self, index: int) -> "Bracket":
        """The scalar bracket at one position of an array bracket."""
        return Bracket(float(np.asarray(self.lower)[index]), float(np.asarray(self.upper)[index]))

    def __len__(self) -> int:
        return int(np.size(self.lower))

    def maximum(self, other: "Bracket") -> "Bracket":
        """Bracket of max(x, y) given brackets of x and y (used for "both directions")."""
        return Bracket(np.maximum(self.lower, other.lower), np.maximum(self.upper, other.upper))

    def bound(self, side: Side) -> FloatOrArray:
        return self.upper if side is Side.UPPER else self.lower


@dataclass(frozen=True)
class Bound:
    """A rigorous one-sided bound on one quantity, in one direction, from one method.

    ``at`` is the argument of the quantity (ε for a δ bound, δ for an ε bound, α for a Rényi bound).
    ``error_budget`` records the numerical slack already included on the safe side (discretisation,
    truncated mass, floating-point error). ``rigorous`` is False when the value rests on an
    assumption that verifier cannot check (e.g. a library's documented accuracy); ``note`` says which.
    """

    value: float
    side: Side
    direction: Direction
    quantity: Quantity
    at: float
    method: str
    citation: str
    error_budget: float = 0.0
    rigorous: bool = True
    note: str = ""
    seconds: float = field(default=0.0, compare=False)

    def __post_init__(self) -> None:
        if isinstance(self.value, float) and math.isnan(self.value):
            raise InvalidArgument("value", self.value, f"a bound from {self.method} must not be NaN")

    def to_dict(self) -> dict:
        return {
            "value": json_number(self.value),
            "side": self.side.value,
            "direction": self.direction.value,
            "quantity": self.quantity.value,
            "at": json_number(self.at),
            "method": self.method,
            "citation": self.citation,
            "error_budget": json_number(self.error_budget),
            "rigorous": self.rigorous,
            "note": self.note,
            "seconds": self.seconds,
        }


@dataclass(frozen=True)
class Estimate:
    """A statistical estimate with a confidence interval; never a certificate by itself.

    ``lower`` and ``upper`` are confidence bounds that hold jointly with probability at least
    ``confidence`` over the sampling randomness. ``note`` says what the estimate is of when that is
    not the question's worst case (e.g. one attained pair of neighbours).
    """

    value: float
    lower: float
    upper: float
    confidence: float
    samples: int
    direction: Direction
    quantity: Quantity
    at: float
    method: str
    citation: str = ""
    note: str = ""

    def __post_init__(self) -> None:
        if not (0.0 < self.confidence < 1.0):
            raise InvalidArgument("confidence", self.confidence, "must lie in (0, 1)")
        if not (self.lower <= self.upper):
            raise InconsistentBounds(f"estimate interval [{self.lower}, {self.upper}] is empty")

    def to_dict(self) -> dict:
        return {
            "estimate": self.value,
            "lower": self.lower,
            "upper": self.upper,
            "confidence": self.confidence,
            "samples": self.samples,
            "direction": self.direction.value,
            "quantity": self.quantity.value,
            "at": self.at,
            "method": self.method,
            "citation": self.citation,
            "note": self.note,
        }


def json_number(x: float | None) -> float | str | None:
    """A number as JSON can carry it: ±inf as the strings "inf"/"-inf", and None or NaN (an unknown
    value, e.g. a method that did not apply) as null."""
    if x is None:
        return None
    x = float(x)
    if math.isnan(x):
        return None
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x
