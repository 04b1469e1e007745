"""Rigorous LOWER bounds for shuffled check-in and the shuffle model, as a certification method
("checkin-lower"): they refute (ε, δ) claims; the UPPER bounds of shuffled check-in come from the
"rdp" method (Liew et al. Eq. (5) with Wang–Balle–Kasiviswanathan per-k bounds,
:mod:`verifier.rdp.checkin`).

- CheckIn (either aggregation; Gaussian or two-outcome pairs): the DOMINATED PLD of one specific
  pair of datasets, mixed over the observed number of check-ins and composed over the rounds
  (:mod:`verifier.pld.checkin`).
- Shuffle: the same specific pair as Liew et al. Thm 3, whose release is 1-out-of-n random
  allocation's remove pair, in both orders (the larger bound is kept: the reverse order is the
  stronger for Laplace reports, ε(10⁻⁶) >= 0.2596 against 0.2240 at scale 1 and n = 1000, and for
  randomized response, 0.4049 against 0.3261 for k = 3, ε0 = 1, n = 100); its lower side (δ(ε), ε(δ) and TPR at FPR) from the random-allocation
  PLD engine (:class:`verifier.certify.methods.allocation_pld.AllocationPLD`). The UPPER side comes
  from Feldman, McMillan & Talwar (:mod:`verifier.certify.methods.shuffle`; for the Gaussian
  through their Thm 3.8 coupling); the worst case over datasets of the shuffled Gaussian remains
  open (the paper's §6), so its bracket is not tight.

"checkin-fmt" gives UPPER bounds for one round of an (ε0, δ0)-DP randomizer (``approx_dp``,
randomized response, Laplace, or a Gaussian at an ε0 chosen on its profile) under check-in: the
exact δ(ε) of a finite pair that dominates the round (Feldman–McMillan–Talwar's clone bound per k,
with Thm 3.8's coupling for δ0 > 0, (ε0, δ0) where that is smaller, then Balle et al. 2018 Thm 9;
:func:`verifier.pld.checkin.checkin_fmt_pair`), with FMT's δ1 = the claimed δ / 2. Several rounds
are not built (the rdp method covers them).

Replace-one neighbours are symmetric: the specific pair in either order is a pair of neighbours, so
each direction's lower bound for shuffled check-in uses the pair in that orientation, and the shuffle
model's (each direction the worst case over every ordered pair, as its upper bounds are) the larger
of the two orders.
"""

from __future__ import annotations

from typing import Sequence

from verifier._types import Bound, Direction, Quantity, Side
from verifier.certify.method import Guarantee, Method
from verifier.certify.methods.allocation_pld import AllocationPLD
from verifier.errors import NotApplicable
from verifier.pairs import Gaussian
from verifier.pairs.finite import FinitePair
from verifier.pairs import ApproxDP
from verifier.pld.checkin import MASS_SLACK, checkin_delta_lower, checkin_epsilon_lower, checkin_fmt_pair, checkin_lower_pld
from verifier.pld.tradeoff import pld_tpr
from verifier.certify.methods.pld import TPR_NOTE
from verifier.schemes import Allocation, CheckIn, Scheme, Shuffle

__all__ = ["CheckInLower", "CheckInFMT", "METHODS"]

_CHECKIN_CITATION = (
    "Liew et al. Eq. (3)/(5): one specific pair, mixed over the observed k, DOMINATED PLD (Lemma A.4 of the "
    "random-allocation PLD paper for the subsampled loss), composed over the rounds: LOWER"
)
_SHUFFLE_CITATION = (
    "Liew et al. Thm 3's pair = 1-out-of-n allocation remove pair, in either order (replace-one neighbours), the larger; "
    "DOMINATED side of the allocation PLD: LOWER"
)
_NO_UPPER = (
    "upper bounds: FMT 2021 (shuffle-clones; (eps0, delta0)-DP randomizers such as the Gaussian through Thm 3.8's coupling); "
    "the worst case over datasets is open in general (Liew et al. Sec. 6)"
)
#: Both orders of Liew et al.'s pair: the allocation's remove pair is H(mixture ‖ Q^n), its add pair
#: H(Q^n ‖ mixture); either is an ordered pair of replace-one neighbours of the shuffle model.
_ORDERS = (Direction.REMOVE, Direction.ADD)


def _checkin_pair_supported(scheme: CheckIn) -> bool:
    pair = scheme.pair
    return isinstance(pair, Gaussian) or (isinstance(pair, FinitePair) and pair._masses()[0].size == 2)


class CheckInLower(Method):
    name = "checkin-lower"
    citation = "Liew, Hasegawa & Takahashi (shuffled check-in): specific-pair PLD lower bounds"
    returns = frozenset({Guarantee.LOWER})
    cost = 2
    scheme_types = (CheckIn, Shuffle)

    def supports(self, scheme: Scheme) -> bool:
        return isinstance(scheme, Shuffle) or (isinstance(scheme, CheckIn) and _checkin_pair_supported(scheme))

    def _bound(self, value: float, quantity: Quantity, at: float, direction: Direction, citation: str, note: str = "") -> list[Bound]:
        return [Bound(float(value), Side.LOWER, direction, quantity, at, self.name, citation, note=note)]

    def _shuffle(self, scheme: Shuffle, quantity: Quantity, at: float, direction: Direction) -> list[Bound]:
        allocation, engine = Allocation(scheme.pair, scheme.users), AllocationPLD()
        lower = max(b.value for order in _ORDERS for b in engine.quantity_bounds(allocation, quantity, at, order) if b.side is Side.LOWER)
        return self._bound(lower, quantity, at, direction, _SHUFFLE_CITATION, note=_NO_UPPER)

    def _collect(self, scheme: Scheme, quantity: Quantity, at: float, direction: Direction) -> list[Bound]:
        if isinstance(scheme, Shuffle):
            return self._shuffle(scheme, quantity, at, direction)
        if not (isinstance(scheme, CheckIn) and _checkin_pair_supported(scheme)):
            raise NotApplicable(f"{self.name} needs a CheckIn with a Gaussian or two-outcome pair, or a Shuffle; got {scheme!r}")
        args = (scheme.pair, scheme.users, scheme.rate, scheme.rounds, at, direction)
        value = checkin_delta_lower(*args) if quantity is Quantity.DELTA else checkin_epsilon_lower(*args)
        return self._bound(value, quantity, at, direction, _CHECKIN_CITATION)

    def delta_bounds(self, scheme: Scheme, epsilon: float, direction: Direction) -> Sequence[Bound]:
        return self._collect(scheme, Quantity.DELTA, epsilon, direction)

    def epsilon_bounds(self, scheme: Scheme, delta: float, direction: Direction) -> Sequence[Bound]:
        return self._collect(scheme, Quantity.EPSILON, delta, direction)

    def tpr_bounds(self, scheme: Scheme, fpr: float, direction: Direction) -> Sequence[Bound]:
        """:meth:`tpr_curve` at one FPR."""
        return self.tpr_curve(scheme, [fpr], direction, fpr)[0]

    def tpr_curve(self, scheme: Scheme, fprs: Sequence[float], direction: Direction, focus: float) -> list[Sequence[Bound]]:
        """LOWER bounds on the attacker's TPR at each FPR. Shuffle: the LOWER end of the allocation
        PLD engine's TPR bracket for Liew et al.'s pair (one PLD per order for every FPR; the larger
        of the two orders for either direction, as for δ). Shuffled check-in: the exact infimum of the
        specific pair's DOMINATED PLD (verifier.pld.tradeoff.pld_tpr), less MASS_SLACK (the PLD's δ
        may exceed the pair's by that much at every ε, so its infimum too)."""
        if isinstance(scheme, Shuffle):
            allocation, engine = Allocation(scheme.pair, scheme.users), AllocationPLD()
            found = [engine.tpr_curve(allocation, fprs, order, focus) for order in _ORDERS]
            return [self._bound(max(b.value for got in per_order for b in got if b.side is Side.LOWER), Quantity.TPR, float(fpr), direction,
                                _SHUFFLE_CITATION, note=_NO_UPPER)
                    for fpr, *per_order in zip(fprs, *found)]
        if not (isinstance(scheme, CheckIn) and _checkin_pair_supported(scheme)):
            raise NotApplicable(f"{self.name} bounds the trade-off of a Shuffle, or a CheckIn with a Gaussian or two-outcome pair; got {scheme!r}")
        pld = checkin_lower_pld(scheme.pair, scheme.users, scheme.rate, scheme.rounds, direction, 2.0**-7)
        out = []
        for fpr in fprs:
            alpha = float(fpr)
            value = max(alpha, float(pld_tpr(pld, alpha)) - MASS_SLACK)
            out.append(self._bound(value, Quantity.TPR, alpha, direction, _CHECKIN_CITATION, note=TPR_NOTE))
        return out


#: FMT's δ1 candidates when δ(ε) is asked (the claimed δ is then unknown): the one whose float
#: estimate of the round's δ(ε) is smallest is used (each choice gives a valid bound).
_DELTA1_GRID = tuple(10.0**-j for j in range(2, 15))


def _local_dp(scheme: Scheme, delta1: float | None, epsilon: float | None = None) -> tuple[float, float, float] | None:
    """(ε0, δ0, δ1) for checkin-fmt on a one-round CheckIn, or None. The randomizer is (ε0, δ0)-DP
    for every point of :func:`verifier.shuffle.approx.local_profile` (one point for pure and
    ``approx_dp`` pairs, a grid for a Gaussian); the point (and, when ``delta1`` is None, FMT's δ1 from
    :data:`_DELTA1_GRID`) is chosen on a float estimate at k = nγ: the subsampled clone ε with
    Thm 3.8's coupling for ε(δ) queries, or γ(δ1 + coupling) where that ε is <= ``epsilon`` for δ(ε)
    queries. The choice only steers; the bound is computed rigorously afterwards."""
    import math

    from verifier.shuffle.approx import local_profile
    from verifier.shuffle.clones import clone_epsilon_float

    if not isinstance(scheme, CheckIn) or scheme.rounds != 1:
        return None
    profile = local_profile(scheme.pair)
    if isinstance(scheme.pair, ApproxDP) and scheme.pair.epsilon0 > 0:
        profile = [(scheme.pair.epsilon0, scheme.pair.delta0)]
    size = max(1, round(scheme.users * scheme.rate))
    best: tuple[float, float, float, float] | None = None
    for d1 in (_DELTA1_GRID if delta1 is None else (delta1,)):
        for e0, d0 in profile:
            coupled = d1 + (math.exp(e0) + 1) * (1 + math.exp(-e0) / 2) * size * d0
            if delta1 is not None and coupled > 2 * delta1:
                continue
            eps_sub = math.log1p(scheme.rate * math.expm1(clone_epsilon_float(e0, size, d1, steps=20)))
            score = eps_sub if epsilon is None else scheme.rate * coupled + (1.0 if eps_sub > epsilon else 0.0)
            if best is None or score < best[0]:
                best = (score, e0, d0, d1)
    return None if best is None else best[1:]


class CheckInFMT(Method):
    name = "checkin-fmt"
    citation = (
        "Liew et al. Eq. (3)/(5) with per-k Feldman-McMillan-Talwar 2021 Thm 3.2 (clone bound) and Thm 3.8 (coupling "
        "for delta0 > 0), (eps0, delta0) where that is smaller, and Balle-Barthe-Gaboardi 2018 Thm 9, dominating finite pair: UPPER"
    )
    returns = frozenset({Guarantee.UPPER})
    cost = 1
    scheme_types = (CheckIn,)

    def supports(self, scheme: Scheme) -> bool:
        return isinstance(scheme, CheckIn) and scheme.rounds == 1

    def _pair(self, scheme: Scheme, delta1: float | None, epsilon: float | None = None):
        local = _local_dp(scheme, delta1, epsilon)
        if local is None:
            raise NotApplicable(
                f"{self.name} needs one round of an (eps0, delta0)-DP randomizer with (e^eps0 + 1)(1 + e^-eps0/2)·nγ·delta0 "
                f"<= delta1 = {delta1:g} for some eps0 (FMT Thm 3.8); got {scheme!r}"
            )
        e0, d0, d1 = local
        pair, improved = checkin_fmt_pair(e0, d0, scheme.users, scheme.rate, d1)
        return pair, f"eps0 = {e0:g}, delta0 = {d0:.3g}; FMT beat (eps0, delta0) for {improved} values of k (delta1 = {d1:g})"

    def delta_bounds(self, scheme: Scheme, epsilon: float, direction: Direction) -> Sequence[Bound]:
        pair, note = self._pair(scheme, None, epsilon)
        value = min(1.0, float(pair.delta(epsilon, direction).upper) + MASS_SLACK)
        return [Bound(value, Side.UPPER, direction, Quantity.DELTA, epsilon, self.name, self.citation, note=note)]

    def epsilon_bounds(self, scheme: Scheme, delta: float, direction: Direction) -> Sequence[Bound]:
        pair, note = self._pair(scheme, delta / 2)
        value = float(pair.epsilon(max(delta - MASS_SLACK, 1e-300), direction).upper)
        return [Bound(value, Side.UPPER, direction, Quantity.EPSILON, delta, self.name, self.citation, note=note)]


METHODS = [CheckInLower(), CheckInFMT()]
