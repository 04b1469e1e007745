"""The Gaussian blanket where it is tightest: σ = Δ (records in [−1, 1], σ = 1), n = 10³, δ = 10⁻⁶, whose
ε is 4.2104 (4.3045 before the R-mass cut could take a tenth of δ) against the attained pair's 4.1060. References, independent of
the code under test:

- the attained pair (victim +1 against −1, every other user at −1) is 1-out-of-n random allocation of
  (N(1, 1), N(−1, 1)), and its δ(ε) = E[(1 − nκ/(e^{2z₁} + S))_+] (z₁ ~ N(1, 1), S = Σ_{j>=2} e^{2z_j},
  z_j ~ N(−1, 1)) is computed stratified on M = max_j z_j (Gauss-Legendre over M's density, the other
  n − 2 sampled below M) with z₁ integrated by Gauss-Legendre. Stratifying matters: a Monte Carlo that
  samples S plainly misses the rare z_j ~ 6 that push the ratio over κ by themselves and lands 0.75%
  low, below checkin-lower's (correct) LOWER end;
- the reduced pair of the blanket's corner cell, the victim among N blanket draws, by importance
  sampling of the victim's report (W not cut at z_max: the bound's cut part is its R-mass, added).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from scipy import special

from verifier._types import Direction, Side
from verifier.certify.methods.checkin import CheckInLower
from verifier.pairs import Gaussian
from verifier.schemes import Shuffle
from verifier.shuffle import gaussian_blanket as blanket

USERS = 1000
#: The blanket's ε(10⁻⁶) at σ = Δ = 1, n = 10³ (blanket_epsilon_upper, ~50 s of CPU: not recomputed here), and
#: its value before 6de2473 (R-mass cut at 1e-4·δ, lattice step 16).
EPS = 4.210409798588444
EPS_STEP_16 = 4.30450439453125
Z_SCORE = 5.0


def attained_delta(users: int, eps: float, per_node: int = 300, seed: int = 0) -> tuple[float, float]:
    """(estimate, standard error) of δ(ε) of the attained pair (module docstring)."""
    rng = np.random.default_rng(seed)
    big = users * math.exp(eps)
    nodes, weights = np.polynomial.legendre.leggauss(200)
    total, variance = 0.0, 0.0
    for low, high, count in ((-1.5, 1.0, 40), (1.0, 3.0, 60), (3.0, 5.0, 60), (5.0, 7.0, 60), (7.0, 10.0, 40)):
        xm, wm = np.polynomial.legendre.leggauss(count)
        for m, w in zip((high - low) / 2 * xm + (high + low) / 2, (high - low) / 2 * wm):
            density = math.exp(math.log(users - 1) - 0.5 * (m + 1) ** 2 - 0.5 * math.log(2 * math.pi) + (users - 2) * float(special.log_ndtr(m + 1)))
            others = -1 + special.ndtri(rng.random((per_node, users - 2)) * special.ndtr(m + 1))
            s = np.exp(2 * others).sum(axis=1) + math.exp(2 * m)
            room = big - s  # the victim's e^{2 z1} must exceed it
            a = np.where(room > 0, 0.5 * np.log(np.maximum(room, 1e-300)), -14.0)[:, None]
            b = np.where(room > 0, a[:, 0] + 14.0, 16.0)[:, None]
            z = (b - a) / 2 * nodes[None, :] + (b + a) / 2
            f = np.maximum(1 - big / (np.exp(2 * z) + s[:, None]), 0.0) * np.exp(-0.5 * (z - 1) ** 2) / math.sqrt(2 * math.pi)
            g = (b - a)[:, 0] / 2 * (f * weights[None, :]).sum(axis=1)
            total += w * density * g.mean()
            variance += (w * density) ** 2 * g.var() / per_node
    return total, math.sqrt(variance)


def reduced_corner_h(draws: int, eps: float, samples: int = 50_000, tilt: float = 4.6, seed: int = 2) -> tuple[float, float]:
    """(estimate, standard error) of H_N = E[(1 − κ/LR)_+] for the victim's report from N(1, 1) (records
    +1 against −1) among ``draws`` − 1 blanket draws (|z| + 1 ~ N(0, 1) conditioned on > 1, a random sign):
    LR = Σ e^{2 max(z, 0)}/Σ e^{2 max(−z, 0)}; the victim's report drawn from N(1 + tilt, 1) and reweighted."""
    rng = np.random.default_rng(seed)
    z = (-special.ndtri(rng.random((samples, draws - 1)) * special.ndtr(-1.0)) - 1.0) * rng.choice([-1.0, 1.0], size=(samples, draws - 1))
    victim = rng.normal(1.0 + tilt, 1.0, samples)
    log_weight = -tilt * (victim - 1.0) + tilt * tilt / 2
    every = np.concatenate([victim[:, None], z], axis=1)
    log_ratio = special.logsumexp(2 * np.maximum(every, 0), axis=1) - special.logsumexp(2 * np.maximum(-every, 0), axis=1)
    sample = np.where(log_ratio > eps, -np.expm1(eps - np.minimum(log_ratio, 700)), 0.0) * np.exp(log_weight)
    return float(sample.mean()), float(sample.std() / math.sqrt(samples))


def test_attained_pair_is_below_the_blanket_and_above_checkin_lower():
    """At the blanket's ε the attained pair's δ is 7.7262e-7: below δ = 10⁻⁶ (the UPPER end holds for it)
    and at most 0.05% above checkin-lower's LOWER end 7.7247e-7. Mutant caught: a lower end above the
    truth by more than five standard errors (2e-4 relative)."""
    truth, se = attained_delta(USERS, EPS)
    assert truth + Z_SCORE * se < 1e-6
    scheme = Shuffle(Gaussian(1.0, 2.0), USERS, dimension=1)
    lower = max(b.value for d in (Direction.ADD, Direction.REMOVE) for b in CheckInLower().delta_bounds(scheme, EPS, d) if b.side is Side.LOWER)
    assert truth * (1 - 5e-4) <= lower <= truth + Z_SCORE * se


def test_corner_cell_at_large_n_with_a_coarse_lattice():
    """N = 214 blanket draws (the first bucket's left end at n = 10³), κ = e^4.3045: the corner cell's law
    sits on a lattice of step 16 (γ = 0.317); its H is 2.186e-6 against the reduced pair's 1.86e-6.
    Mutant: the composed sums not scaled back by the step falls below."""
    from scipy.special import erfcinv

    z_tail = math.sqrt(2) * float(erfcinv(1e-4 * 1e-6))  # the R-mass cut at 1e-4·δ: the lattice of step 16
    law = blanket._draw_law(1.0, 1.0, blanket._corner(1.0), math.exp(EPS_STEP_16), z_tail)
    assert law.step == 16
    estimate, se = reduced_corner_h(215, EPS_STEP_16)
    bound = blanket._expected_positive(law, 215)
    assert estimate - Z_SCORE * se <= bound <= 1.3 * estimate
    scale = law.step
    unscaled = dataclasses.replace(law, step=law.step / scale, top=law.top / scale)
    assert blanket._expected_positive(unscaled, 215) < estimate - Z_SCORE * se


def test_corner_cell_at_large_n_holds_with_its_cut_mass():
    """N = 500 blanket draws, κ = e^4.2104, the cut z_max that the ε search uses at δ = 10⁻⁶ (R-mass beyond
    it 10⁻⁷, a tenth of δ, so that the law fits a lattice of step 1): the corner cell's H of the cut law
    is 2.539e-7 and with the cut R-mass 3.539e-7, against the reduced pair's 2.72e-7. Mutant: the
    R-mass beyond z_max not added falls below."""
    law = blanket._draw_law(1.0, 1.0, blanket._corner(1.0), math.exp(EPS), blanket._z_tail(1e-6, 1.0, 1.0))
    assert law.step == 1 and law.tail <= 1.01e-7
    estimate, se = reduced_corner_h(501, EPS, samples=60_000, tilt=4.5)
    cut = blanket._expected_positive(law, 501)
    assert estimate - Z_SCORE * se <= cut + law.tail <= 1.4 * estimate
    assert cut < estimate - Z_SCORE * se
