"""The contract every bound-producing method fulfils to take part in certification.

A method wraps one way of answering "how large is δ(ε) (or ε(δ)) for this scheme, in this
direction?" (an exact closed form, the PLD engine, an RDP accountant, an analytic theorem, Monte
Carlo). Methods are registered in :mod:`verifier.certify.registry`; the portfolio picks the
applicable ones by asking :meth:`Method.supports`, cheapest first, never by an if/elif over schemes.
"""

from __future__ import annotations

import abc
from typing import ClassVar, Sequence

from verifier._budget import Cost, refusal
from verifier._types import Bound, Direction, Estimate, Quantity, Side
from verifier.errors import NotApplicable
from verifier.schemes import Composed, Scheme
from verifier.schemes import Sequence as SchemeSequence

__all__ = ["Method", "EstimateMethod", "Guarantee", "QuantityMethod", "step_pairs", "unwrap_composed"]


def unwrap_composed(scheme: Scheme) -> tuple[Scheme, int]:
    """(inner scheme, m): ``scheme`` is the m-fold composition of the inner one (m = 1 if not Composed)."""
    times = 1
    while isinstance(scheme, Composed):
        times *= scheme.times
        scheme = scheme.scheme
    return scheme, times


def step_pairs(scheme: Scheme) -> list:
    """The dominating pairs of the steps a scheme is built from (one per phase of a Sequence)."""
    while isinstance(scheme, Composed):
        scheme = scheme.scheme
    if isinstance(scheme, SchemeSequence):
        return [pair for phase in scheme.phases for pair in step_pairs(phase)]
    pair = getattr(scheme, "pair", None)
    return [] if pair is None else [pair]


class Guarantee:
    """What a method returns: rigorous UPPER and/or LOWER bounds, EXACT brackets (both), or ESTIMATE."""

    UPPER = "upper"
    LOWER = "lower"
    EXACT = "exact"
    ESTIMATE = "estimate"


class Method(abc.ABC):
    """One way to bound δ(ε) and ε(δ) for the schemes it supports.

    Subclasses set the class attributes and implement :meth:`supports`, :meth:`delta_bounds` and
    :meth:`epsilon_bounds`. Bounds are returned for one direction at a time; a method that cannot
    say anything for a case returns an empty list (and :meth:`supports` should have said so).
    """

    #: Short identifier, e.g. "pld", "rdp", "exact".
    name: ClassVar[str]
    #: Paper and result number the method implements.
    citation: ClassVar[str]
    #: What the method returns (values of :class:`Guarantee`).
    returns: ClassVar[frozenset[str]]
    #: Rough relative cost: 0 (closed form, microseconds) … 3 (seconds or more). Cheap runs first.
    cost: ClassVar[int]
    #: The scheme classes (of :mod:`verifier.schemes`) the method handles for some pairs and
    #: parameters; :meth:`supports` refines it. Checked by tests/certify/test_coverage.py.
    scheme_types: ClassVar[tuple[type, ...]] = ()
    #: Whether the method computes in binary64: it then declines pairs outside the range floats
    #: represent (:meth:`DominatingPair.float_range_issue`). Ball-arithmetic closed forms set False.
    needs_float_range: ClassVar[bool] = True
    #: Whether :meth:`epsilon_bounds` also answers δ = 0 (ε(0), the largest privacy loss: pure DP);
    #: the portfolio asks the others only for δ in (0, 1).
    answers_pure_dp: ClassVar[bool] = False

    def estimate_cost(self, scheme: Scheme) -> Cost | None:
        """The time and memory one call (one direction) will take, from the parameters alone; None
        when it is small whatever the parameters. Methods whose cost grows with t override it."""
        return None

    def declines(self, scheme: Scheme, seconds_left: float | None) -> str | None:
        """Why the method must not start on ``scheme`` now, or None: a pair outside the float range
        (when :attr:`needs_float_range`), or a cost estimate beyond the memory available or the
        ``seconds_left`` of the time budget (None: no time limit). The portfolio lists the reason
        (e.g. "skipped: needs ~40 GB of memory at t = 1e+09") and goes on with the other methods."""
        if self.needs_float_range:
            for pair in step_pairs(scheme):
                issue = pair.float_range_issue()
                if issue:
                    return f"skipped: {issue}"
        cost = self.estimate_cost(scheme)
        return None if cost is None else refusal(cost, seconds_left)

    @abc.abstractmethod
    def supports(self, scheme: Scheme) -> bool:
        """Whether the method applies to this scheme (pair type and parameters included)."""

    @abc.abstractmethod
    def delta_bounds(self, scheme: Scheme, epsilon: float, direction: Direction) -> Sequence[Bound]:
        """Rigorous bounds on δ(ε) in ``direction`` (upper and/or lower)."""

    @abc.abstractmethod
    def epsilon_bounds(self, scheme: Scheme, delta: float, direction: Direction) -> Sequence[Bound]:
        """Rigorous bounds on ε(δ) in ``direction`` (upper and/or lower)."""

    def epsilon_bounds_beside(
        self, scheme: Scheme, delta: float, direction: Direction, beside: tuple[Direction, ...]
    ) -> Sequence[Bound]:
        """:meth:`epsilon_bounds` for a caller that reports the largest ε(δ) over ``direction`` and the
        directions ``beside`` (add-or-remove neighbours). A refining method may stop refining
        ``direction`` once its upper end lies at or below a rigorous lower end of a direction beside
        it: the maximum is then decided there, and the bounds returned stay rigorous (only less
        narrow for ``direction`` alone). By default :meth:`epsilon_bounds`."""
        return self.epsilon_bounds(scheme, delta, direction)

    def quantity_bounds(self, scheme: Scheme, quantity: Quantity, at: float, direction: Direction) -> Sequence[Bound]:
        """:meth:`delta_bounds` for ``quantity`` DELTA (``at`` is ε), :meth:`epsilon_bounds` for EPSILON
        (``at`` is δ): for callers that answer either question the same way."""
        return self.delta_bounds(scheme, at, direction) if quantity is Quantity.DELTA else self.epsilon_bounds(scheme, at, direction)

    def claim_bounds(
        self, scheme: Scheme, epsilon: float, delta: float, direction: Direction
    ) -> tuple[Sequence[Bound], Sequence[Bound]]:
        """Bounds for deciding the claim (``epsilon``, ``delta``) in ``direction``: (bounds on δ at
        ``epsilon``, bounds on ε at ``delta``). A refining method overrides this to stop as soon as
        either of its brackets decides the claim (δ(ε) <= δ ⟺ ε(δ) <= ε, Steinke 2022, Prop 7 and
        §3) and to answer both questions from the one computation; by default :meth:`delta_bounds`
        alone (the certifier then asks :meth:`epsilon_bounds` separately)."""
        return self.delta_bounds(scheme, epsilon, direction), ()

    def delta_curve(self, scheme: Scheme, epsilons: Sequence[float], direction: Direction, focus: float) -> list[Sequence[Bound]]:
        """Rigorous bounds on δ(ε) at every ε of a grid (for plots), tightest near ``focus``; by
        default :meth:`delta_bounds` at each point. Methods that can answer a whole grid from one
        computation override this."""
        return [self.delta_bounds(scheme, float(epsilon), direction) for epsilon in epsilons]

    def delta_estimates(
        self, scheme: Scheme, epsilon: float, direction: Direction, *, seconds: float | None = None
    ) -> Sequence[Estimate]:
        """Statistical estimates of δ(ε) (only ESTIMATE methods override this); ``seconds``, when
        given, is about how long the caller lets them take (None: the method's own default)."""
        return ()

    def rho_bounds(self, scheme: Scheme, direction: Direction) -> Sequence[Bound]:
        """Rigorous bounds on the zCDP parameter ρ* = sup_α D_α/α in ``direction`` (Quantity.RHO);
        only methods that know ρ override this."""
        raise NotApplicable(f"{self.name} gives no bounds on the zCDP parameter rho")

    def tpr_bounds(self, scheme: Scheme, fpr: float, direction: Direction) -> Sequence[Bound]:
        """Rigorous bounds on the membership-inference TPR at false-positive rate ``fpr`` in
        ``direction`` (Quantity.TPR; TPR(α) = inf_ε δ(ε) + e^ε α, proofs/tradeoff_conversion.py);
        only methods that bound the whole δ(ε) curve override this."""
        raise NotApplicable(f"{self.name} gives no bounds on the trade-off curve (TPR at FPR)")

    def tpr_curve(self, scheme: Scheme, fprs: Sequence[float], direction: Direction, focus: float) -> list[Sequence[Bound]]:
        """Rigorous bounds on TPR at every FPR of a grid (for plots and tables), tightest near
        ``focus``; by default :meth:`tpr_bounds` at each point. Methods that can answer the whole
        curve from one computation override this."""
        return [self.tpr_bounds(scheme, float(fpr), direction) for fpr in fprs]

    def sides(self) -> frozenset[Side]:
        """The sides of the rigorous bounds this method can give."""
        out = set()
        if self.returns & {Guarantee.UPPER, Guarantee.EXACT}:
            out.add(Side.UPPER)
        if self.returns & {Guarantee.LOWER, Guarantee.EXACT}:
            out.add(Side.LOWER)
        return frozenset(out)


class QuantityMethod(Method):
    """A method that answers δ(ε) and ε(δ) by one routine: it implements :meth:`quantity_bounds`, and
    :meth:`delta_bounds` and :meth:`epsilon_bounds` call it."""

    @abc.abstractmethod
    def quantity_bounds(self, scheme: Scheme, quantity: Quantity, at: float, direction: Direction) -> Sequence[Bound]:
        """Rigorous bounds on δ(``at``) (``quantity`` DELTA) or ε(``at``) (EPSILON) in ``direction``."""

    def delta_bounds(self, scheme: Scheme, epsilon: float, direction: Direction) -> Sequence[Bound]:
        return self.quantity_bounds(scheme, Quantity.DELTA, epsilon, direction)

    def epsilon_bounds(self, scheme: Scheme, delta: float, direction: Direction) -> Sequence[Bound]:
        return self.quantity_bounds(scheme, Quantity.EPSILON, delta, direction)


class EstimateMethod(Method):
    """A method that gives only statistical evidence (Guarantee.ESTIMATE through
    :meth:`delta_estimates`), never a rigorous bound: it answers every bound query with nothing."""

    returns = frozenset({Guarantee.ESTIMATE})

    def delta_bounds(self, scheme: Scheme, epsilon: float, direction: Direction) -> Sequence[Bound]:
        return []

    def epsilon_bounds(self, scheme: Scheme, delta: float, direction: Direction) -> Sequence[Bound]:
        return []
