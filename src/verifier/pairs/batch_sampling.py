"""One step of a Gaussian sum over a randomly drawn batch, for two batch laws dp_accounting names:
truncated Poisson sampling (``TruncatedSubsampledGaussianDpEvent``; Ganesh 2025, arXiv 2508.15089)
and sampling with replacement (``SampledWithReplacementDpEvent``). Each gives a DOMINATING pair (a
labelled mixture: a label the sampler draws independently of the data is revealed, which only adds
information) and an ATTAINED pair (the output laws of an actual pair of neighbouring datasets, a
LOWER bound). The proofs are in proofs/batch_sampling.py; the laws are computed in ball arithmetic
and checked there against brute-force enumeration.

Truncated Poisson (n records, each kept with probability q, then a uniform B-subset of the kept
ones when more than B are; records of norm <= C; M ~ Bin(n − 1, q) counts the other records'
coins, b its law, A the set of other records drawn). For M <= B − 1 nothing is truncated on the
record's account: the batch is A plus the record with probability q. For M >= B both datasets keep
a uniform B-subset W of A, except that the record replaces a uniform member r of W with
probability λ_M = qB/(M + 1) (proofs/batch_sampling.py checks this coupling by enumeration). Given
M >= B, W is uniform among all B-subsets of the other records whatever M is
(C(n−1, m)·C(m, B) = C(n−1, B)·C(n−1−B, m−B)), and r is uniform in W: so (W, r) is independent of
M given M >= B, and given (M >= B, W, r) the record is in the batch with the averaged probability
q_c = E[λ_M | M >= B] = (B/n)·P(Bin(n, q) > B)/P(M >= B) (the identity
q·Σ_{m>=B} b(m)·B/(m + 1) = (B/n)·P(Bin(n, q) > B)). Reveal the label (A if M <= B − 1; the event
M >= B with W and r otherwise): its law is the same on both datasets, and given it the two output
laws differ only in the record's component.

- replace-one (n fixed, the record's value x changes to x'): given A the pair is
  ((1 − q)N(s) + qN(s + x), (1 − q)N(s) + qN(s + x')), dominated by the antipodal pair A(C, q)
  (records +C and −C; proofs/antipodal_dominance.py); given (M >= B, W, r) it is
  ((1 − q_c)N(s − v_r) + q_cN(s − v_r + x), …x'…) translated by v_r: the same family with
  ‖x − v_r‖, ‖x' − v_r‖ <= 2C, dominated by A(2C, q_c). DOMINATING: P(M <= B − 1)[·] ⊗ A(C, q) +
  P(M >= B)[·] ⊗ A(2C, q_c). ATTAINED: every other record 0, the record +C against −C: A(C, q')
  with q' = P(record kept) = q·P(M <= B − 1) + (B/n)·P(Bin(n, q) > B). (Revealing instead the
  other records' part S of the truncated batch, j = |S|, is also valid —
  :func:`truncated_replace_one_laws` — but where truncation binds the label j = B − 1 carries the
  record with probability up to ~0.7 and loses the amplification: 4.14 against 1.50 for n = 1000,
  q = 0.05, B = 40, σ = 2, 10 steps.)
- add/remove (the dataset holding the record has n records, the other n − 1; both directions):
  given A the pair is ((1 − q)N(s) + qN(s + x), N(s)); given (M >= B, W, r) it is
  ((1 − q_c)N(0) + q_c N(x − v_r), N(0)) up to translation, a shift of at most 2C, which is the
  Gaussian of shift 2C post-processed (y ↦ (‖d‖/2C)y + noise). DOMINATING: the same two labels with
  the Poisson-subsampled Gaussians of sensitivity C at rate q and 2C at rate q_c. ATTAINED: every
  other record 0: the Poisson-subsampled Gaussian at rate q'. With the record first (REMOVE) and
  ε >= 0, :class:`~verifier.pairs.truncated_edge.TruncatedEdge` also merges M = B − 1 with M >= B
  (only the first B − 1 other records drawn are revealed) and keeps the smaller bound.

Before issue 42 the labels M = m >= B were revealed one by one (rates λ_m, bucketed); δ is convex in
the rate, so the averaged label is smaller (n = 1000, q = 0.05, B = 40, σ = 2, 10 steps, remove:
ε(1e-5) <= 1.3450 against 1.4282), and it is dp_accounting's formula for the event.

Sampling with replacement (m uniform draws from n records, replace-one, Δ the replace-one shift of
the sum): the record's multiplicity K ~ Bin(m, 1/n) has the same law on both datasets; given every
multiplicity the step is N(KΔ) against N(0) up to translation: DOMINATING Σ_k P(K = k)[k] ⊗
Gaussian(σ, kΔ) (the labels k > K_max lumped into one release, δ = 1). ATTAINED: the record +Δ/2
against −Δ/2 with every other record −Δ/2: the second dataset's sum is the constant −mΔ/2, the
first's −mΔ/2 + KΔ, so the pair is (Σ_k P(K = k) N(kΔ), N(0)) (a :class:`GaussianMixture`; its
tails P(K >= j) rounded down and the listed k stopped where the tail is negligible: a
stochastically smaller mixture, dominated, so still a LOWER bound). At large ε it lies far above
the pair with every other record 0, the antipodal lattice (Σ P(k)N(kΔ/2), Σ P(k)N(−kΔ/2)) of
:class:`~verifier.pairs.antipodal_lattice.AntipodalLattice`: there the second dataset's sum moves
with K too, here it does not (ε(1e-5) of one step at n = 100, m = 20, σ = 1, Δ = 2: 28.90
against 5.70); at ε = 0 and below the lattice can be the larger (proofs/batch_sampling.py), so both are
kept.

A step with replacement is also bounded with K = 0 hidden from K >= 1 (a sharper UPPER bound than
revealing K; :func:`with_replacement_hidden_empty`; the pair is symmetric, so it lies above every
step in either orientation and composes adaptively: Zhu, Dong & Wang 2022, Thm 10). With η = P(K >= 1), M₀ the output law given
K = 0 (the same on both datasets) and M₁, M₁' the laws given K >= 1, M = (1 − η)M₀ + ηM₁ and
M' = (1 − η)M₀ + ηM₁'. For κ' >= 1, κ = 1 + (κ' − 1)/η and β = κ'/κ <= 1,
H_κ'(M‖M') = η·H_κ(M₁‖(1 − β)M₀ + βM₁') (advanced joint convexity: Balle, Barthe & Gaboardi 2018,
Thm 2) <= η[(1 − β)H_κ(M₁‖M₀) + βH_κ(M₁‖M₁')] (joint convexity). Couple the draws: V_1..V_m the
values the draws take when they miss the record (i.i.d. over the other records, the same law on
both datasets), S the draws that hit it (|S| = K); M₀ is N(ΣV_j), M₁ is N(ΣV_j + Σ_S(x − V_j)) and
M₁' the same with x': given (K = k, S, V) the shifts between any two of them have norm at most
2kC = kΔ, so by joint convexity over (k, S, V) both terms are at most H_κ(L‖L₀), L the labelled
mixture Σ_{k>=1} P(K = k | K >= 1)[k] ⊗ Gaussian(σ, kΔ). Hence H_κ'(M‖M') <= η·H_κ(L‖L₀), the
REMOVE profile of PoissonSubsampled(L, η) at κ', in either orientation (x and x' play the same
role); below κ' = 1 the relation's symmetry gives the dual, so the step is dominated by
SubstitutionSubsampled(L, η) (its module docstring). η is rounded up (δ grows with the rate). Only
the K = 0 label is hidden: n = 100, m = 20, σ = 1, Δ = 2: ε(1e-5) <= 35.92 against 37.63.

The term H_κ(M₁‖M₀) needs no label: given V it is a mixture of Gaussians N(ΣV + μ_S) against
N(ΣV) with ‖μ_S‖ <= |S|Δ, and such a mixture is largest with every mean aligned at its largest
norm (Lemma C of proofs/batch_sampling.py: the likelihood ratio's terms are lognormal, and their
comonotone sum is the largest in convex order), so H_κ(M₁‖M₀) <= H_κ(Σ_{k>=1} P(K = k | K >= 1)
N(kΔ) ‖ N(0)) (:func:`_hidden_multiplicity`, the ``absent`` pair). With it SubstitutionSubsampled
also uses H_κ'(M‖M') <= η·H_{κ−κ'}(M₁‖M₀) (M₁' dropped), the better bound at large ε: n = 100,
m = 20, σ = 1, Δ = 2: ε(1e-5) <= 29.10 (the attained pair gives 28.90); n = 1000, m = 50, σ = 2,
10 steps: 2.4717 against 5.9192 (attained 2.3876). The attained pair is not the worst instance
(proofs/batch_sampling.py's finding: with n = 3, m = 3 the other records at −3/4 lie above it at
ε = 0.3), so the two ends cannot meet at this pair.
"""

from __future__ import annotations

import math

from flint import arb

from verifier._directed import arb_bound, with_precision
from verifier._types import Side
from verifier.pairs.antipodal import AntipodalMixture
from verifier.pairs.base import DominatingPair
from verifier.pairs.finite import DiscretePair
from verifier.pairs.gaussian import Gaussian
from verifier.pairs.antipodal_lattice import AntipodalLattice
from verifier.pairs.labelled import LabelledMixture
from verifier.pairs.mixture import GaussianMixture
from verifier.pairs.subsampled import PoissonSubsampled
from verifier.pairs.substitution import SubstitutionSubsampled
from verifier.pairs.truncated_edge import TruncatedEdge

__all__ = [
    "binomial_pmf", "truncated_replace_one_laws", "truncated_kept_rate", "truncated_labels", "truncated_poisson_step",
    "with_replacement_step", "with_replacement_hidden_empty", "NEGLIGIBLE",
]

#: Precision (bits) of the sampling laws.
_BITS = 256
#: Tail mass of the multiplicity K past which its values are lumped into one release (with replacement).
NEGLIGIBLE = 1e-16

#: (P, Q) = (1, 1): a label under which the step releases nothing about the record.
_NOTHING = DiscretePair((1.0,), (1.0,))
#: (P, Q) = ((1, 0), (0, 1)): a label under which the record is released (δ = 1).
_RELEASE = DiscretePair((1.0, 0.0), (0.0, 1.0))


def binomial_pmf(trials: int, p: arb, stop: int | None = None) -> list[arb]:
    """P(Bin(trials, p) = k) for k = 0..min(trials, stop) as balls (the recurrence
    b(k + 1) = b(k)·(trials − k)/(k + 1)·p/(1 − p) from b(0) = (1 − p)^trials)."""
    last = trials if stop is None else min(trials, stop)
    if p == 1:
        return [arb(1) if k == trials else arb(0) for k in range(last + 1)]
    keep = 1 - p
    out, term = [], keep**trials
    for k in range(last + 1):
        out.append(term)
        term = term * (trials - k) / (k + 1) * p / keep
    return out


def _sf(trials: int, p: arb, k: int) -> arb:
    """P(Bin(trials, p) > k) = 1 − P(Bin <= k)."""
    return arb(0) if k >= trials else 1 - sum(binomial_pmf(trials, p, k), arb(0))


def truncated_replace_one_laws(n: int, q: float, batch: int) -> list[tuple[arb, arb]]:
    """[(P(j), q_j)] for j <= B − 2 (merged: one rate q), j = B − 1 and j = B, j the number of other
    records in the truncated batch and q_j the probability that the record is in it given j (module
    docstring), labels of probability 0 left out."""
    with with_precision(_BITS):
        rate = arb(q)
        others = binomial_pmf(n - 1, rate, batch)
        below = sum(others[: max(batch - 1, 0)], arb(0))
        edge = others[batch - 1] if batch - 1 <= n - 1 else arb(0)
        swapped_in = arb(batch) / n * _sf(n, rate, batch)  # q·Σ_{m>=B} b(m)·B/(m + 1)
        full = _sf(n - 1, rate, batch - 1)  # P(M >= B)
        laws = [(below, rate), (edge + swapped_in, (rate * edge + swapped_in) / (edge + swapped_in)), (full - swapped_in, arb(0))]
        return [(w, r) for w, r in laws if w != 0]


def truncated_kept_rate(n: int, q: float, batch: int) -> arb:
    """q' = P(the record is in the truncated batch) = q·P(M <= B − 1) + (B/n)·P(Bin(n, q) > B)."""
    with with_precision(_BITS):
        return sum((w * r for w, r in truncated_replace_one_laws(n, q, batch)), arb(0))


def truncated_labels(n: int, q: float, batch: int) -> list[tuple[arb, arb, float]]:
    """[(weight, rate, shift factor)] of the two labels of the DOMINATING mixture (module docstring):
    M <= B − 1 at rate q with shift C, and M >= B at the averaged rate
    q_c = E[qB/(M + 1) | M >= B] = (B/n)·P(Bin(n, q) > B)/P(M >= B) with shift 2C; labels of
    probability 0 left out."""
    with with_precision(_BITS):
        rate = arb(q)
        below = sum(binomial_pmf(n - 1, rate, batch - 1), arb(0))
        full = 1 - below  # P(M >= B)
        laws = [(below, rate, 1.0)]
        if full != 0:
            laws.append((full, arb(batch) / n * _sf(n, rate, batch) / full, 2.0))
        return [(w, r, f) for w, r, f in laws if w != 0]


def _mixture(laws: list[tuple[arb, DominatingPair]]) -> LabelledMixture:
    """The labelled mixture of (weight ball, pair), its weights as binary64 values and one radius
    that covers every ball."""
    weights = [max(0.0, float(w.mid())) for w, _ in laws]
    radius = max(arb_bound(abs(w - arb(x)), Side.UPPER) for (w, _), x in zip(laws, weights))
    return LabelledMixture(tuple(weights), tuple(p for _, p in laws), radius)


def _up(rate: arb) -> float:
    """A rate ball's upper end as a binary64 rate (δ grows with the rate)."""
    return min(1.0, arb_bound(rate, Side.UPPER))


def truncated_poisson_step(
    sigma: float, sensitivity: float, n: int, q: float, batch: int, replace_one: bool
) -> tuple[DominatingPair, DominatingPair]:
    """(DOMINATING pair, ATTAINED pair) of one truncated-Poisson Gaussian step with records of norm
    <= ``sensitivity``, under replace-one or add/remove (module docstring): the labelled mixture,
    under add/remove where truncation can bind wrapped in :class:`~verifier.pairs.truncated_edge.TruncatedEdge`
    (the count hidden between B − 1 and B in the REMOVE orientation)."""
    with with_precision(_BITS):
        kept = arb_bound(truncated_kept_rate(n, q, batch), Side.LOWER)
        labels = truncated_labels(n, q, batch)
        if replace_one:
            labelled = _mixture([(w, AntipodalMixture(sigma, s * sensitivity, _up(r))) for w, r, s in labels])
            attained: DominatingPair = AntipodalMixture(sigma, sensitivity, kept)
        else:
            labelled = _mixture([(w, PoissonSubsampled(Gaussian(sigma, s * sensitivity), _up(r))) for w, r, s in labels])
            attained = PoissonSubsampled(Gaussian(sigma, sensitivity), kept)
        if len(labels) < 2:  # truncation never binds
            return labelled, attained
        counts = binomial_pmf(n - 1, arb(q), batch - 1)
        edge = TruncatedEdge(labelled, sigma, sensitivity, q, sum(counts[: batch - 1], arb(0)), counts[batch - 1], labels[1][0], labels[1][1],
                             replace_one=replace_one)
        return edge, attained


def with_replacement_step(
    sigma: float, shift: float, n: int, draws: int
) -> tuple[LabelledMixture, tuple[GaussianMixture, AntipodalLattice]]:
    """(DOMINATING labelled mixture, (ATTAINED Gaussian mixture, ATTAINED antipodal lattice)) of one
    Gaussian step on ``draws`` records drawn uniformly with replacement from ``n``, under replace-one
    with shift Δ = ``shift`` (module docstring). K ~ Bin(draws, 1/n) is listed up to the first k past
    its mean whose tail P(K > k) is below :data:`NEGLIGIBLE`. The Gaussian mixture is in the REMOVE
    orientation (the dataset whose sum moves with K first); it is the larger of the two at large ε,
    the lattice can be larger at ε near 0 and below (proofs/batch_sampling.py)."""
    with with_precision(_BITS):
        p = arb(1) / n
        pmf = binomial_pmf(draws, p)
        listed, total = [], arb(0)
        for k, w in enumerate(pmf):
            listed.append(w)
            total += w
            if k >= 1 and k >= draws / n and 1 - total < NEGLIGIBLE:
                break
        tail = 1 - total
        laws = [(w, _NOTHING if k == 0 else Gaussian(sigma, arb_bound(arb(k) * arb(shift), Side.UPPER))) for k, w in enumerate(listed)]
        if len(listed) < len(pmf):
            laws.append((tail, _RELEASE))
        upper = _mixture([(w, pair) for w, pair in laws if w != 0])
        radius = max(arb_bound(abs(w - arb(float(w.mid()))), Side.UPPER) for w in listed)
        tail_upper = 0.0 if len(listed) == len(pmf) else arb_bound(tail, Side.UPPER)
        centred = AntipodalLattice(sigma, shift / 2, tuple(float(w.mid()) for w in listed), radius, tail_upper)
        return upper, (_attained_multiplicity(sigma, shift, listed), centred)


def _attained_multiplicity(sigma: float, shift: float, listed: list[arb]) -> GaussianMixture:
    """(Σ_k P(K = k) N(kΔ), N(0)) over the listed k (module docstring), every tail P(K >= j) of the
    listed part rounded down and every mean kΔ rounded down: a stochastically smaller mixture than
    the attained one (Schuchardt & Kalinin, Lemma 4.2), so its profile is a LOWER bound."""
    means, tails, above = [0.0], [1.0], arb(0)
    for k in range(len(listed) - 1, 0, -1):
        above += listed[k]
        tails.insert(1, arb_bound(above, Side.LOWER))
        means.insert(1, arb_bound(arb(k) * arb(shift), Side.LOWER))
    tails = [min(tails[: j + 1]) for j in range(len(tails))]  # non-increasing after rounding
    keep = [j for j in range(len(tails)) if tails[j] > 0.0]
    return GaussianMixture(sigma, tuple(means[j] for j in keep), tuple(tails[j] for j in keep))


def with_replacement_hidden_empty(sigma: float, shift: float, n: int, draws: int) -> SubstitutionSubsampled:
    """The DOMINATING pair of one with-replacement step that hides K = 0 from K >= 1 (module
    docstring): SubstitutionSubsampled(L, η, absent=H) with L the labelled Gaussians of shift kΔ
    over k >= 1 (the tail past NEGLIGIBLE lumped into one release, as in
    :func:`with_replacement_step`), H the hidden-multiplicity mixture of
    :func:`_hidden_multiplicity` and η = P(K >= 1) rounded up."""
    with with_precision(_BITS):
        pmf = binomial_pmf(draws, arb(1) / n)
        eta = 1 - pmf[0]
        listed, total = [], arb(0)
        for k in range(1, len(pmf)):
            listed.append(pmf[k] / eta)
            total += pmf[k]
            if k >= draws / n and 1 - pmf[0] - total < NEGLIGIBLE * eta:
                break
        rest = (eta - total) / eta
        laws = [(w, Gaussian(sigma, arb_bound(arb(k) * arb(shift), Side.UPPER))) for k, w in enumerate(listed, start=1)]
        if len(listed) < draws:
            laws.append((rest, _RELEASE))
        labelled = _mixture([(w, pair) for w, pair in laws if w != 0])
        return SubstitutionSubsampled(labelled, _up(eta), _hidden_multiplicity(sigma, shift, draws, listed, rest))


def _hidden_multiplicity(sigma: float, shift: float, draws: int, listed: list[arb], rest: arb) -> GaussianMixture:
    """(Σ_{k>=1} P(K = k | K >= 1) N(kΔ), N(0)), whose REMOVE profile bounds H_κ(M₁‖M₀) (the step
    given K >= 1 against the step given K = 0) for every dataset: given the values V of the draws
    that miss the record, M₀ is N(ΣV) and M₁ the mixture over the hitting set S of N(ΣV + μ_S),
    ‖μ_S‖ <= |S|Δ, and a Gaussian mixture against N(0) is largest with every mean aligned at its
    largest norm (the comonotone sum of the likelihood ratio's terms is the largest in convex
    order: Dhaene, Denuit, Goovaerts, Kaas & Vyncke 2002, Thm 6 and Thm 7; proofs/batch_sampling.py);
    then joint convexity over V. ``listed`` holds P(K = k | K >= 1) for k = 1, 2, …; the ``rest``
    of the law is placed at the largest possible multiplicity ``draws``, means are rounded up and
    tails P(K >= j | K >= 1) rounded up: a stochastically larger mixture (Schuchardt & Kalinin,
    Lemma 4.2), so still DOMINATING."""
    means, tails, above = [], [], rest
    if len(listed) < draws:  # rest > 0: P(K = draws) > 0 is in it (its upper end kept positive)
        means.append(arb_bound(arb(draws) * arb(shift), Side.UPPER))
        tails.append(min(1.0, max(arb_bound(rest, Side.UPPER), math.ulp(0.0))))
    for k in range(len(listed), 1, -1):
        above += listed[k - 1]
        means.insert(0, arb_bound(arb(k) * arb(shift), Side.UPPER))
        tails.insert(0, min(1.0, arb_bound(above, Side.UPPER)))
    means.insert(0, arb_bound(arb(shift), Side.UPPER))
    tails.insert(0, 1.0)
    tails = [max(tails[j:]) for j in range(len(tails))]  # non-increasing after rounding
    return GaussianMixture(sigma, tuple(means), tuple(tails))
