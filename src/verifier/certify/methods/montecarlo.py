"""Monte Carlo estimates of δ(ε) as a certification method (ESTIMATE only: never a bound).

The certifier reports these beside the verdict, as the independent check that catches a wrong
formula in another method (README, "What a number means"). Sample count is chosen so that one call
draws about 2^23 step outputs (between 2^12 and 2^17 samples); when the caller gives a time
allowance (the certifier passes a share of the time its rigorous methods took, so that the evidence
never dominates the run), about DRAWS_PER_SECOND step outputs per second of it, rounded down to a
power of two (between 2^8 and 2^17 samples). The seed is fixed and the count is recorded in each
Estimate, so a certificate is reproducible; confidence 0.99 per (direction, ε).

Replace-one subsampling with additive noise is simulated through the pair of neighbours the PLD
method's LOWER side is attained by, and the estimate is of that pair's δ:
- fixed-size batches (:class:`~verifier.schemes.WithoutReplacement`): every other record equal to the
  target's, so the step's laws are exactly Q and λP + (1 − λ)Q, the target drawn with probability
  λ = B/n independently each step (the Poisson sampler); an adaptive adversary adds at most the gap
  benchmarks/adaptive_orientation.md measures (~7% in δ at the DP-SGD row);
- Poisson sampling (:class:`~verifier.schemes.PoissonReplaceOne`): the target's record at +C on one
  dataset and −C on the other (:class:`~verifier.pairs.AntipodalMixture`) for a Gaussian step — the
  worst case too (proofs/antipodal_dominance.py) —, +C against a record of norm 0 (the add/remove
  mixture) for a Laplace step;
- shuffled batches (:class:`~verifier.schemes.ShuffledBatches`): every other record equal to the
  target's, the target's record moved by 2C on one dataset: per epoch 1-out-of-⌊n/B⌋ allocation,
  mixed with "target not in a full batch" (the sampler of verifier.montecarlo.samplers); with a
  kept partial batch, that batch's release is left out (a post-processing of the attained pair).
Where the simulated pair is not proven to be the worst case, the estimate's ``note`` says so
(ATTAINED_PAIR_NOTE): it is evidence for the lower side of the bracket only.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Sequence

from verifier._budget import Cost
from verifier._types import Direction, Estimate
from verifier.certify.method import EstimateMethod
from verifier.montecarlo import estimate_delta
from verifier.montecarlo.plan import CITATION
from verifier.montecarlo.samplers import BATCH_COORDINATES, allocation_rounds
from verifier.pairs import Gaussian, Laplace, poisson_replace_one_step
from verifier.schemes import Allocation, Composed, Poisson, PoissonReplaceOne, Scheme, ShuffledBatches, Single, WithoutReplacement
from verifier.schemes import Sequence as SchemeSequence

__all__ = ["MonteCarlo", "METHODS", "ATTAINED_PAIR_NOTE", "draws_per_sample", "sample_count", "simulated"]

#: Step outputs drawn per call (a fraction of a second on one core: the portfolio may call this at many ε).
DRAW_BUDGET = 1 << 23
MIN_SAMPLES, MAX_SAMPLES = 1 << 12, 1 << 17

#: Step outputs the samplers draw per second on one core (measured: about 10^7 for the Poisson
#: Gaussian, NumPy normals), used to turn a time allowance into a sample count.
DRAWS_PER_SECOND = 1 << 23

#: Fewest samples under a time allowance: the 99% interval is then still informative (width ~0.02
#: around δ ≈ 0).
MIN_TIMED_SAMPLES = 1 << 8

#: Peak bytes per coordinate of a sampler block (the float64 block and about three temporaries of
#: its size: conditional draws, scaled losses, the log-sum-exp).
BYTES_PER_DRAW = 32
SEED = 0
CONFIDENCE = 0.99


#: What an estimate for replace-one subsampling is of (see the module doc).
ATTAINED_PAIR_NOTE = "of the attained pair of neighbours (the PLD LOWER construction), not of the worst case"

#: Replace-one subsampling schemes, simulated through their attained pair of neighbours.
_REPLACE_ONE = (WithoutReplacement, PoissonReplaceOne, ShuffledBatches)


def simulated(scheme: Scheme) -> tuple[Scheme, bool]:
    """The scheme the samplers draw for ``scheme``, and whether it is a worst case of ``scheme`` (the
    estimate is then of δ(ε) itself): ``scheme`` itself, except replace-one subsampling, which is
    drawn through its attained pair of neighbours, a worst case only for Poisson sampling with a
    Gaussian step (see the module doc)."""
    if isinstance(scheme, WithoutReplacement):
        return Poisson(scheme.pair, scheme.rate, scheme.steps), False
    if isinstance(scheme, ShuffledBatches):
        return scheme, False  # its sampler draws the attained pair
    if isinstance(scheme, PoissonReplaceOne):
        step, worst = poisson_replace_one_step(scheme.pair, scheme.rate)
        # a non-dominating step is the Poisson-subsampled pair itself: drawn by the Poisson sampler
        return (Composed(Single(step), scheme.steps) if worst else Poisson(scheme.pair, scheme.rate, scheme.steps)), worst
    if isinstance(scheme, Composed):
        inner, worst = simulated(scheme.scheme)
        return Composed(inner, scheme.times), worst
    if isinstance(scheme, SchemeSequence):
        phases = [simulated(phase) for phase in scheme.phases]
        return SchemeSequence(tuple(drawn for drawn, _ in phases)), all(worst for _, worst in phases)
    return scheme, True


def draws_per_sample(scheme: Scheme) -> int:
    """Step outputs drawn for one privacy-loss sample of ``scheme`` (the sampler's cost)."""
    if isinstance(scheme, Composed):
        return scheme.times * draws_per_sample(scheme.scheme)
    if isinstance(scheme, ShuffledBatches):
        return scheme.full_batches * scheme.epochs
    if isinstance(scheme, (Poisson, WithoutReplacement, PoissonReplaceOne)):
        return scheme.steps
    if isinstance(scheme, Allocation):
        t, rounds = allocation_rounds(scheme)
        return t * rounds
    if isinstance(scheme, SchemeSequence):
        return sum(draws_per_sample(phase) for phase in scheme.phases)
    return 1


def _largest_round(scheme: Scheme) -> int:
    """Coordinates the samplers hold at once for one sample: t' for an allocation round, else 1."""
    if isinstance(scheme, Composed):
        return _largest_round(scheme.scheme)
    if isinstance(scheme, Allocation):
        return allocation_rounds(scheme)[0]
    if isinstance(scheme, ShuffledBatches):
        return scheme.full_batches
    if isinstance(scheme, SchemeSequence):
        return max(_largest_round(phase) for phase in scheme.phases)
    return 1


def sample_count(scheme: Scheme, seconds: float | None = None) -> int:
    """Samples for one estimate: DRAW_BUDGET step outputs (MIN_SAMPLES..MAX_SAMPLES), or with a time
    allowance ``seconds``, DRAWS_PER_SECOND·seconds of them rounded down to a power of two
    (MIN_TIMED_SAMPLES..MAX_SAMPLES)."""
    draws = draws_per_sample(scheme)
    if seconds is None:
        return max(MIN_SAMPLES, min(MAX_SAMPLES, DRAW_BUDGET // draws))
    allowed = int(max(seconds, 0.0) * DRAWS_PER_SECOND) // draws
    return max(MIN_TIMED_SAMPLES, min(MAX_SAMPLES, 1 << max(allowed, 1).bit_length() - 1))


class MonteCarlo(EstimateMethod):
    name = "montecarlo"
    citation = CITATION
    cost = 3
    scheme_types = (Single, Composed, Poisson, Allocation, SchemeSequence, *_REPLACE_ONE)

    def supports(self, scheme: Scheme) -> bool:
        if isinstance(scheme, SchemeSequence):
            return all(self.supports(phase) for phase in scheme.phases)
        if isinstance(scheme, Composed):  # what it composes must be a mechanism it samples (not a class: ZCDP)
            return self.supports(scheme.scheme)
        if isinstance(scheme, _REPLACE_ONE):  # the attained pair is proven for additive noise
            return isinstance(scheme.pair, (Gaussian, Laplace))
        return isinstance(scheme, self.scheme_types)

    def estimate_cost(self, scheme: Scheme) -> Cost:
        """The smallest run: MIN_TIMED_SAMPLES samples at DRAWS_PER_SECOND step outputs per second;
        peak memory ~BYTES_PER_DRAW per coordinate of the largest block (a batch of at least one
        whole allocation round of t' coordinates)."""
        draws = draws_per_sample(scheme)
        block = _largest_round(scheme)
        return Cost(
            seconds=MIN_TIMED_SAMPLES * draws / DRAWS_PER_SECOND,
            bytes=BYTES_PER_DRAW * max(block, BATCH_COORDINATES),
            what=f"{draws:.3g} step outputs per sample",
        )

    def delta_estimates(
        self, scheme: Scheme, epsilon: float, direction: Direction, *, seconds: float | None = None
    ) -> Sequence[Estimate]:
        """One Estimate of δ(ε) in ``direction`` (:func:`verifier.montecarlo.estimate_delta`), from
        :func:`sample_count` samples."""
        samples = sample_count(scheme, seconds)
        drawn, worst_case = simulated(scheme)
        estimates = estimate_delta(drawn, [epsilon], [direction], samples, seed=SEED, confidence=CONFIDENCE).estimates[direction]
        if worst_case:
            return list(estimates)
        return [replace(e, note=ATTAINED_PAIR_NOTE) for e in estimates]


METHODS = [MonteCarlo()]
