"""UPPER bounds for shuffled batches (``ShuffledBatches``: DataLoader(shuffle=True), replace-one)
through the shuffle model, by the reduction proven in proofs/shuffled_reduction.py.

One epoch reveals, besides the outputs, nothing that would not follow from a sequential shuffle of
t = ⌊n/B⌋ records (the target and one record of every other full batch), each step an adaptive
randomizer that is (ε0, δ0)-DP for every ε0 with δ0 the step pair's δ(ε0) (pure ε0 for Laplace).
So, with (P_t, Q_t) the clone pair of Feldman, McMillan & Talwar 2021 (arXiv:2012.12803, Thm 3.2,
stated for adaptive sequential randomizers; :func:`verifier.shuffle.clones.clone_delta_upper`) and
λ = ⌊n/B⌋B/n, the epoch is dominated, up to total variation λτ on each side, by

    B | n: (P_t, Q_t);   drop_last: λ(P_t, Q_t) + (1 − λ)(⊥, ⊥);
    otherwise: λ[P_t, Q_t] + (1 − λ)[the step pair]   (the label "target in a full batch" revealed),

and E epochs by that pair's E-fold product, up to E·λτ: δ(ε) <= H_{e^ε}(pair^{⊗E}) + E·λ·slack(ε),
slack(ε) = (1 + e^ε)(δ0/(1 + e^ε0) + (t − 1)e^{−ε0}(δ0 + δ0/(1 + e^ε0))), the coupling proved for the
clone reduction in proofs/shuffle_coupling.py (per step and history, so adaptively: the export
``epochs_slack`` of proofs/shuffled_reduction.py; :func:`epoch_coupling`), 0 for pure ε0. It is
below FMT Thm 3.8's (e^ε + 1)(1 + e^{−ε0}/2)·t·δ0 by up to 54x at ε0 = 4.

The epoch pair's privacy profile f(κ) = H_κ is bounded above on the loss grid {j·h}: the clone pair
is symmetric, so f(e^ℓ) = 1 − e^ℓ + e^ℓ·δ_clone(−ℓ) for ℓ < 0 and δ_clone(ℓ) for ℓ >= 0 (0 beyond
ε0); the step pair's profile is the larger of its two directions. The DOMINATING PLD is the
connect-the-dots construction of :func:`verifier.pld.construction.pld_sides_from_profile` on those
upper ends, composed E times by :func:`verifier.pld.power.self_compose`; every value is rounded up.
The ε0 of a Gaussian step is picked from :func:`verifier.shuffle.approx.local_profile` as the
smallest whose coupling slack stays below a share of the δ at stake (:data:`SLACK_SHARE`).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
from flint import arb

from verifier._directed import ARB_PRECISION_BITS, arb_bound, up, with_precision
from verifier._types import Direction, Dominance, Side
from verifier.analytic._search import smallest_passing
from verifier.errors import NotApplicable
from verifier.pld.construction import pld_sides_from_profile
from verifier.pld.distribution import DiscretePLD
from verifier.pld.power import self_compose
from verifier.schemes import ShuffledBatches
from verifier.shuffle.approx import local_profile
from verifier.shuffle.clones import clone_delta_float, clone_delta_upper

__all__ = [
    "EPOCH_CITATION",
    "SLACK_SHARE",
    "PROFILE_POINTS",
    "TOP_DELTA",
    "REFINE_STEPS",
    "SEARCH_TOLERANCE",
    "EpochsBound",
    "epoch_coupling",
    "epoch_profile",
    "shuffled_delta_upper",
    "shuffled_epsilon_upper",
]

EPOCH_CITATION = (
    "shuffled batches reduce to an adaptive sequential shuffle of floor(n/B) records per epoch "
    "(proofs/shuffled_reduction.py); FMT 2021 Thm 3.2 clone pair, composed over the epochs by its PLD, "
    "plus E lambda times the coupling for (eps0, delta0)-DP steps proved in proofs/shuffle_coupling.py: UPPER"
)

#: The coupling slack may use at most this share of the δ at stake (the claim's δ, or the δ found).
SLACK_SHARE = 0.4
#: Profile points per side of zero: the grid step is the power of two that puts about this many
#: grid losses in (0, ℓ_top] (between 2^-10 and 2^-4), ℓ_top the loss beyond which the clone
#: pair's δ is below :data:`TOP_DELTA` (float screening; the profile's last value, rigorous, becomes
#: the PLD's mass at +∞, so any ℓ_top is valid).
PROFILE_POINTS = 128
TOP_DELTA = 1e-30
#: Bisection steps that refine the chosen ε0 below its grid point (the grid's ratio is 1.3).
REFINE_STEPS = 6
#: Absolute width in ε at which the search for the UPPER end of ε(δ) stops (tightness only).
SEARCH_TOLERANCE = 1e-10


def _top_loss(epsilon0: float, users: int) -> float:
    """The smallest loss (to ε0·2^-30, float64: planning only) where the clone pair's δ is below
    TOP_DELTA, or ε0 (also where the δ at loss 0 is already below it)."""
    if clone_delta_float(epsilon0, users, 0.0) <= TOP_DELTA:
        return epsilon0

    def below(loss: float) -> bool:
        return clone_delta_float(epsilon0, users, loss) <= TOP_DELTA

    return min(epsilon0, smallest_passing(below, 0.0, epsilon0, tolerance=epsilon0 * 2.0**-30)[1])


def _grid(epsilon0: float, users: int) -> tuple[float, int]:
    """(step, top index): the loss grid of the epoch profile."""
    top_loss = _top_loss(epsilon0, users)
    k = min(10, max(4, math.ceil(math.log2(PROFILE_POINTS / top_loss))))
    step = 2.0**-k
    return step, min(math.ceil(epsilon0 / step), math.ceil(top_loss / step) + 1)


def _pair_profile_upper(pair: object, loss: float) -> float:
    """An upper end of the step pair's profile at e^loss, the larger direction."""
    return max(float(pair.delta(loss, d).upper) for d in (Direction.REMOVE, Direction.ADD))  # type: ignore[attr-defined]


def epoch_profile(scheme: ShuffledBatches, epsilon0: float, step: float, top: int) -> tuple[np.ndarray, np.ndarray]:
    """(lower, upper): rigorous float bounds on one epoch's dominating pair's profile f(e^ℓ) at
    ℓ = j·step, j = −top … top (module docstring)."""
    users = scheme.full_batches
    rest = scheme.dataset_size - users * scheme.batch_size
    lower, upper = [], []
    clones = [clone_delta_upper(epsilon0, users, j * step) for j in range(top + 1)]  # the pair is symmetric
    with with_precision(ARB_PRECISION_BITS):
        lam = arb(users * scheme.batch_size) / arb(scheme.dataset_size)
        for j in range(-top, top + 1):
            loss = j * step
            kappa = arb(loss).exp()
            clone = arb(clones[abs(j)])
            f = clone if j >= 0 else 1 - kappa + kappa * clone
            if rest:
                other = (1 - kappa).nonnegative_part() if scheme.drop_last else arb(_pair_profile_upper(scheme.pair, loss))
                f = lam * f + (1 - lam) * other
            upper.append(min(1.0, arb_bound(f, Side.UPPER)))
            lower.append(max(0.0, arb_bound(1 - kappa, Side.LOWER)))
    return np.array(lower), np.array(upper)


@functools.lru_cache(maxsize=32)
def _epochs_pld(scheme: ShuffledBatches, epsilon0: float) -> DiscretePLD:
    step, top = _grid(epsilon0, scheme.full_batches)
    lower, upper = epoch_profile(scheme, epsilon0, step, top)
    (one,) = pld_sides_from_profile(Direction.REMOVE, step, -top, lower, upper, 0.0, sides=(Dominance.DOMINATING,))
    return self_compose(one, scheme.epochs)


@dataclass(frozen=True)
class EpochsBound:
    """The E-epoch bound for one choice of (ε0, δ0): δ(ε) <= PLD δ(ε) + E·λ·coupling(ε)."""

    scheme: ShuffledBatches
    epsilon0: float
    delta0: float

    @property
    def pld(self) -> DiscretePLD:
        """The DOMINATING PLD of the epoch pair's E-fold product (cached)."""
        return _epochs_pld(self.scheme, self.epsilon0)

    def slack(self, epsilon: float) -> float:
        """E·λ·(the epoch's coupling term at ε), rounded up (0 for a pure ε0 step)."""
        if self.delta0 == 0:
            return 0.0
        term = epoch_coupling(self.epsilon0, self.delta0, self.scheme.full_batches, epsilon)
        with with_precision(ARB_PRECISION_BITS):
            weight = arb(self.scheme.epochs * self.scheme.full_batches * self.scheme.batch_size) / arb(self.scheme.dataset_size)
            return arb_bound(weight * arb(term), Side.UPPER)

    def delta(self, epsilon: float) -> float:
        """UPPER bound on δ(ε) of the E epochs (either direction), clipped to 1."""
        return min(1.0, up(float(self.pld.delta(epsilon)) + self.slack(epsilon)))

    def epsilon(self, delta: float, ceiling: float) -> float | None:
        """UPPER bound on ε(δ): the passing end of a :func:`~verifier.analytic._search.smallest_passing`
        search on [0, ``ceiling``], a point where :meth:`delta` <= δ was evaluated; None if it fails at
        ``ceiling`` too."""
        if self.delta(ceiling) > delta:
            return None
        return smallest_passing(lambda e: self.delta(e) <= delta, 0.0, ceiling, tolerance=SEARCH_TOLERANCE)[1]


def epoch_coupling(epsilon0: float, delta0: float, users: int, epsilon: float) -> float:
    """UPPER bound on one epoch's coupling term (1 + e^ε)(tv_victim + (t − 1)·tv_other),
    tv_victim = δ0/(1 + e^ε0), tv_other = e^{−ε0}(δ0 + tv_victim) (proofs/shuffle_coupling.py,
    steps 1-3; module docstring), in ball arithmetic."""
    if delta0 == 0:
        return 0.0
    with with_precision(ARB_PRECISION_BITS):
        big0, d0 = arb(epsilon0).exp(), arb(delta0)
        victim = d0 / (1 + big0)
        other = (d0 + victim) / big0
        return arb_bound((1 + arb(epsilon).exp()) * (victim + (users - 1) * other), Side.UPPER)


def _bound_for(scheme: ShuffledBatches, epsilon: float, delta: float) -> EpochsBound | None:
    """The bound with the smallest ε0 whose slack at ``epsilon`` is at most SLACK_SHARE·``delta``:
    the first of :func:`local_profile`'s grid that qualifies, then :data:`REFINE_STEPS` bisection
    steps toward the grid point below it (δ0 = the pair's δ(ε0) falls as ε0 grows); None when
    none qualifies."""
    weight = scheme.epochs * scheme.rate

    def fits(e0: float, d0: float) -> bool:
        return d0 == 0 or weight * epoch_coupling(e0, d0, scheme.full_batches, epsilon) <= SLACK_SHARE * delta

    below = 0.0
    for e0, d0 in sorted(local_profile(scheme.pair)):
        if fits(e0, d0):
            if d0 > 0:
                for _ in range(REFINE_STEPS):
                    mid = 0.5 * (below + e0)
                    d_mid = _pair_profile_upper(scheme.pair, mid)
                    if d_mid < 1 and fits(mid, d_mid):
                        e0, d0 = mid, d_mid
                    else:
                        below = mid
            return EpochsBound(scheme, e0, d0)
        below = e0
    return None


def _no_room(scheme: ShuffledBatches, epsilon: float, delta: float) -> NotApplicable:
    return NotApplicable(
        f"the coupling term E*lambda*(1+e^eps)(tv_victim + (t-1) tv_other) exceeds {SLACK_SHARE:g}*delta = {SLACK_SHARE * delta:.3g} "
        f"at eps = {epsilon:.6g} for every eps0 tried (t = {scheme.full_batches}, E = {scheme.epochs})"
    )


def shuffled_epsilon_upper(scheme: ShuffledBatches, delta: float, ceiling: float) -> tuple[float, EpochsBound]:
    """(UPPER bound on ε(δ), the bound used), below ``ceiling`` (the unamplified ε): ε0 chosen at
    the ceiling, then again at the ε found (a smaller ε leaves room for a smaller ε0). NotApplicable,
    with the numbers, when no ε0 gets below the ceiling."""
    best: tuple[float, EpochsBound] | None = None
    at = ceiling
    for _ in range(2):
        bound = _bound_for(scheme, at, delta)
        if bound is None or (best is not None and bound.epsilon0 >= best[1].epsilon0):
            break
        found = bound.epsilon(delta, at)
        if found is None:
            break
        if best is None or found < best[0]:
            best = (found, bound)
        at = found
    if best is None:
        bound = _bound_for(scheme, ceiling, delta)
        if bound is None:
            raise _no_room(scheme, ceiling, delta)
        raise NotApplicable(
            f"the clone bound for t = {scheme.full_batches} users (eps0 = {bound.epsilon0:.4g}, delta0 = {bound.delta0:.3g}) over "
            f"{scheme.epochs} epochs does not get below the unamplified eps = {ceiling:.6g} at delta = {delta:g}"
        )
    return best


def shuffled_delta_upper(scheme: ShuffledBatches, epsilon: float, unamplified: float) -> tuple[float, EpochsBound]:
    """(UPPER bound on δ(ε), the bound used), below ``unamplified`` (the step pair's composed δ):
    ε0 chosen against the unamplified δ, then against the δ found. NotApplicable, with the numbers,
    when no ε0 gets below it."""
    best: tuple[float, EpochsBound] | None = None
    stake = unamplified
    for _ in range(2):
        bound = _bound_for(scheme, epsilon, stake)
        if bound is None or (best is not None and bound.epsilon0 >= best[1].epsilon0):
            break
        found = bound.delta(epsilon)
        if best is None or found < best[0]:
            best = (found, bound)
        stake = found
    if best is None:
        raise _no_room(scheme, epsilon, unamplified)
    if best[0] >= unamplified:
        raise NotApplicable(
            f"the clone bound for t = {scheme.full_batches} users (eps0 = {best[1].epsilon0:.4g}) over {scheme.epochs} epochs gives "
            f"delta = {best[0]:.4g} at eps = {epsilon:g}, not below the unamplified {unamplified:.4g}"
        )
    return best
