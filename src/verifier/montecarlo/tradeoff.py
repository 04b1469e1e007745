"""Monte Carlo estimate of a membership attacker's best TPR at false-positive rate α, with a
distribution-free confidence interval (an Estimate, never a Bound).

In one direction let W be the output law with the record and O the law without it, L = ln(dW/dO).
The Neyman–Pearson test flags L above a threshold. :func:`sample_loss` draws L under W in a direction
and, in the opposite direction, ln(dO/dW) under O for the same pair (its module docstring: both
directions are the two orientations of one pair), so −(those draws) are L under O.

Interval (joint level ``confidence``, split in four): sort n draws of L under O; the k-th order
statistic X_(k) has O(L > X_(k)) <= 1 − U_(k) and O(L >= X_(k)) >= 1 − U_(k) in distribution with
U_(k) ~ Beta(k, n − k + 1) (quantile coupling; equality for a continuous L), and
P(1 − U_(k) > α) = P(Binomial(n, 1 − α) >= k). Take c₁ = X_(k₁) with that probability <= γ/4 and
c₂ = X_(k₂) with P(1 − U_(k₂) < α) <= γ/4: with probability >= 1 − γ/2, O(L > c₁) <= α <= O(L >= c₂),
so the test "L > c₁" is within the FPR budget and TPR*(α) >= W(L > c₁), while TPR*(α) <= W(L >= c₂)
(TPR* is non-decreasing, and "L >= c₂" is a Neyman–Pearson test at its own level >= α). The two W
probabilities get one-sided KL–Chernoff bounds at γ/4 each from independent draws under W. The point
estimate is W(L > empirical (1 − α)-quantile of L under O).
"""

from __future__ import annotations

import numpy as np

from verifier._types import Direction, Estimate, Quantity
from verifier._validation import check_integer, check_open_unit, check_unit
from verifier.errors import NotApplicable
from verifier.montecarlo.intervals import kl_lower, kl_upper
from verifier.montecarlo.samplers import sample_loss
from verifier.schemes import Scheme

__all__ = ["estimate_tpr", "CITATION"]

CITATION = (
    "Neyman–Pearson test on simulated privacy losses; distribution-free order-statistic thresholds "
    "(Binomial tails) and KL–Chernoff intervals (verifier.montecarlo.tradeoff)"
)


def estimate_tpr(
    scheme: Scheme, fpr: float, direction: Direction, samples: int, seed: int = 0, confidence: float = 0.999, note: str = ""
) -> Estimate:
    """An :class:`Estimate` of TPR at FPR ``fpr`` in ``direction`` from ``samples`` draws under each of
    W and O (module docstring); NotApplicable when ``samples`` is too small for a threshold at that
    FPR (about 1/α draws are needed, a few times that for a narrow interval)."""
    from scipy.stats import binom  # here: scipy.stats costs ~0.5 s of start-up

    alpha = check_unit("fpr", fpr)
    n = check_integer("samples", samples, minimum=2)
    level = check_open_unit("confidence", confidence)
    share = (1.0 - level) / 4.0
    rng = np.random.default_rng(seed)
    with_record = np.asarray(sample_loss(scheme, n, direction, rng), dtype=float)
    without = np.sort(-np.asarray(sample_loss(scheme, n, direction.opposite, rng), dtype=float))
    # k₁: smallest k with P(Bin(n, 1 − α) >= k) <= share; k₂: largest k with P(Bin(n, 1 − α) <= k − 1) <= share
    k1 = int(binom.isf(share, n, 1.0 - alpha)) + 1
    k2 = int(binom.ppf(share, n, 1.0 - alpha))
    while k2 >= 1 and binom.cdf(k2 - 1, n, 1.0 - alpha) > share:
        k2 -= 1
    if not (1 <= k2 and k1 <= n):
        raise NotApplicable(f"{n} samples are too few for a threshold at FPR {alpha:g} (about {int(4 / max(alpha, 1e-300)):d} needed)")
    c1, c2 = without[k1 - 1], without[k2 - 1]
    above = float(np.count_nonzero(with_record > c1))
    at_least = float(np.count_nonzero(with_record >= c2))
    upper = float(np.ravel(kl_upper(at_least / n, n, share))[0])
    lower = float(np.ravel(kl_lower(above / n, n, share))[0])
    centre = without[min(n - 1, max(0, int(np.ceil(n * (1.0 - alpha))) - 1))]
    value = float(np.count_nonzero(with_record > centre)) / n
    value = min(max(value, lower), upper)
    return Estimate(value, lower, upper, level, n, direction, Quantity.TPR, alpha, "montecarlo", CITATION, note)
