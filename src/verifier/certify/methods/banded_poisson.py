"""Banded matrix factorisation with cyclic Poisson sampling (:class:`~verifier.schemes.BandedPoisson`,
amplified BandMF) as a certification method ("banded-poisson"): an exact reduction to
Poisson-subsampled Gaussian steps, bounded on both sides by the registered methods for those steps.

The reduction (Choquette-Choo et al. 2023, "Amplified banded matrix factorization", NeurIPS 2023,
§4, for b-banded C under cyclic Poisson sampling). Take a record of group r. It can enter the sums
x_i of steps i ≡ r (mod b) only, each independently with probability q, with a clipped gradient
g_i (‖g_i‖ <= Δ, chosen adaptively). Row j of the release C·X + Z is released at step j and reads
x_{j−w+1}, …, x_j (w <= b the bandwidth), so the record's step i moves rows i, …, i + b − 1 only, by
C e_i·g_i, and its next step i + b moves the next, disjoint block. Given what was released before
row j, the other records' part of row j is known to the adversary; subtracting it is a bijection,
after which the block of step i is (C e_i)·g_i·B_i + N(0, σ²) in b rows, B_i ~ Bernoulli(q), whose
sufficient statistic is the projection on C e_i: a Poisson-subsampled Gaussian step of sensitivity
‖C e_i‖·‖g_i‖ <= ‖C e_i‖·Δ, attained with g_i = Δ·e₁ and every other record 0. The run is the
adaptive composition of these steps (Zhu, Dong & Wang 2022, Thm 10), so for group r

    δ_r(ε) = δ of ⊗_{i ≡ r (mod b)} PoissonGaussian(q, σ, Δ‖C e_i‖),

both directions, and the claim must hold for the worst group: δ(ε) = max_r δ_r(ε).

UPPER: a subsampled Gaussian step is monotone in its sensitivity (a larger shift is dominating:
the smaller one is its post-processing by scaling toward 0), and adding steps only adds loss, so
every group is dominated by the profile u_k = max_r (k-th largest norm of group r), composed; norms
are rounded up in ball arithmetic. LOWER: any one group's composition is attained; we take the
group whose sorted norms are largest (for banded Toeplitz strategies such as BSR with b | N this is
group 0, whose profile is u itself, so both sides compose the same steps and the bracket is the
engine's own width). Signs of C do not matter: only column norms enter.
"""

from __future__ import annotations

import math
from typing import Sequence

from flint import arb

from verifier._directed import ARB_PRECISION_BITS, arb_bound, with_precision
from verifier._types import Bound, Direction, Quantity, Side
from verifier.certify.method import Guarantee, QuantityMethod
from verifier.errors import NotApplicable
from verifier.pairs import Gaussian
from verifier.schemes import BandedPoisson, Poisson, Scheme
from verifier.schemes import Sequence as SchemeSequence

__all__ = ["BandedPoissonMethod", "METHODS", "column_norms", "group_norms", "poisson_run", "reduction", "run_bound"]

_CITATION = (
    "amplified BandMF: cyclic Poisson sampling of a b-banded strategy reduces exactly to Poisson-subsampled "
    "Gaussian steps of sensitivity Delta*||C e_i|| (Choquette-Choo et al. 2023, NeurIPS, Sec. 4; "
    "Zhu, Dong & Wang 2022, Thm 10), composed per group"
)


def column_norms(scheme: BandedPoisson, side: Side) -> list[float]:
    """‖C e_i‖ for i = 0 … N − 1, each rounded toward ``side`` (ball arithmetic on |C|'s bands)."""
    bands = scheme.strategy.bands
    size, width = bands.shape
    norms = []
    with with_precision(ARB_PRECISION_BITS):
        for i in range(size):
            entries = [bands[i + d, d] for d in range(width) if i + d < size]
            total = sum((arb(float(v)) ** 2 for v in entries), arb(0))
            norms.append(arb_bound(total.sqrt(), side))
    return norms


def group_norms(scheme: BandedPoisson, side: Side) -> list[list[float]]:
    """The column norms of each group's steps (group r: steps r, r + b, …), largest first."""
    norms = column_norms(scheme, side)
    return [sorted(norms[r:: scheme.groups], reverse=True) for r in range(scheme.groups)]


def _profile(scheme: BandedPoisson, side: Side) -> list[float]:
    """UPPER: the elementwise maximum of the groups' sorted norms; LOWER: the sorted norms of the
    group that is largest in lexicographic order (a real group, so its composition is attained)."""
    groups = group_norms(scheme, side)
    if side is Side.LOWER:
        return max(groups)
    longest = max(len(g) for g in groups)
    return [max(g[k] for g in groups if k < len(g)) for k in range(longest)]


def reduction(scheme: BandedPoisson, side: Side) -> Scheme:
    """The Poisson-subsampled Gaussian run that bounds ``scheme`` on ``side`` (see the module doc)."""
    return poisson_run(scheme.pair, scheme.rate, _profile(scheme, side), side)  # type: ignore[arg-type]


def poisson_run(pair: Gaussian, rate: float, norms: Sequence[float], side: Side) -> Scheme:
    """The adaptive composition of Poisson-subsampled Gaussian steps (rate ``rate``) of sensitivities
    Δ·‖C e_i‖ for the column norms ``norms``, each moved one ulp toward ``side``: one phase per run
    of equal sensitivities, zero columns left out (they release nothing)."""
    phases: list[Poisson] = []
    for norm in norms:
        if norm <= 0.0:
            continue
        sensitivity = pair.sensitivity * norm
        if side is Side.UPPER:
            sensitivity = math.nextafter(sensitivity, math.inf)
        elif side is Side.LOWER:
            sensitivity = math.nextafter(sensitivity, 0.0)
        if phases and phases[-1].pair.sensitivity == sensitivity:
            phases[-1] = Poisson(phases[-1].pair, rate, phases[-1].steps + 1)
        else:
            phases.append(Poisson(Gaussian(pair.sigma, sensitivity), rate, 1))
    if not phases:
        raise NotApplicable("the strategy C is zero: the run releases nothing about any record")
    return phases[0] if len(phases) == 1 else SchemeSequence(tuple(phases))


def run_bound(reduced: Scheme, side: Side, quantity: Quantity, at: float, direction: Direction) -> tuple[Bound, int] | None:
    """The best rigorous bound of ``side`` the registered methods give on the Poisson run
    ``reduced`` (:func:`poisson_run`), with its number of steps; None when none answers."""
    from verifier.certify.registry import side_bounds

    found = [bound for _, bounds in side_bounds(reduced, quantity, at, direction, side) for bound in bounds]
    if not found:
        return None
    pick = min if side is Side.UPPER else max
    return pick(found, key=lambda b: b.value), sum(p.steps for p in getattr(reduced, "phases", (reduced,)))


class BandedPoissonMethod(QuantityMethod):
    name = "banded-poisson"
    citation = _CITATION
    returns = frozenset({Guarantee.UPPER, Guarantee.LOWER})
    cost = 2
    scheme_types = (BandedPoisson,)

    def supports(self, scheme: Scheme) -> bool:
        return isinstance(scheme, BandedPoisson)

    def quantity_bounds(self, scheme: Scheme, quantity: Quantity, at: float, direction: Direction) -> list[Bound]:
        if not isinstance(scheme, BandedPoisson):
            raise NotApplicable(f"{self.name} needs a BandedPoisson scheme, got {type(scheme).__name__}")
        out: list[Bound] = []
        for side in (Side.UPPER, Side.LOWER):
            best = run_bound(reduction(scheme, side), side, quantity, at, direction)
            if best is not None:
                bound, steps = best
                note = f"{bound.method} on {steps} Poisson-subsampled Gaussian steps ({'dominating profile of every group' if side is Side.UPPER else 'one group, attained'})"
                out.append(Bound(bound.value, side, direction, quantity, at, self.name, _CITATION, bound.error_budget, note=note))
        return out


METHODS = [BandedPoissonMethod()]
