"""Frozen, validated descriptions of how a mechanism step is sampled and composed.

A scheme never changes meaning once built; methods (PLD, RDP, analytic, Monte Carlo) read it and
return bounds. Dispatch over schemes goes through the method registry in :mod:`verifier.certify`,
never through an if/elif here.
"""

from __future__ import annotations

import math
import typing
from dataclasses import dataclass
from typing import Union

from verifier._validation import check_integer, check_nonnegative, check_positive, check_rate, check_real
from verifier.errors import InvalidArgument
from verifier.matrix.strategy import Strategy
from verifier.pairs import DominatingPair, Gaussian

__all__ = ["Scheme", "Single", "Composed", "Poisson", "Allocation", "Sequence", "Shuffle", "CheckIn", "MatrixMechanism", "WithoutReplacement", "PoissonReplaceOne", "ShuffledBatches", "BandedPoisson", "ZCDP", "Selection", "SELECTION_RULES", "SampledZCDP", "RepeatAndSelect", "MatrixPoisson", "TruncatedPoisson", "WithReplacement", "AGGREGATIONS", "base_pair", "holds_node"]


def _check_pair(pair: object) -> DominatingPair:
    if not isinstance(pair, DominatingPair):
        raise InvalidArgument("pair", pair, "must be a DominatingPair (e.g. Gaussian(sigma=1.0))")
    return pair


def _check_rate_steps(scheme: "Poisson | PoissonReplaceOne") -> None:
    """Validate and store the pair, inclusion rate and step count of a Poisson-sampled scheme."""
    _check_pair(scheme.pair)
    object.__setattr__(scheme, "rate", check_rate("rate", scheme.rate))
    object.__setattr__(scheme, "steps", check_integer("steps", scheme.steps, minimum=1))


def _check_gaussian_strategy(scheme: "MatrixMechanism | BandedPoisson | MatrixPoisson") -> None:
    """A matrix-factorisation scheme adds Gaussian noise to C·X: check the pair and the strategy."""
    if not isinstance(scheme.pair, Gaussian):
        raise InvalidArgument("pair", scheme.pair, "a matrix mechanism adds Gaussian noise: use Gaussian(sigma, sensitivity)")
    if not isinstance(scheme.strategy, Strategy):
        raise InvalidArgument("strategy", scheme.strategy, "must be a verifier.matrix.Strategy (e.g. verifier.matrix.bsr(N, 4))")


def _check_part_of_whole(scheme: object, part: str, whole: str, symbol: str, reason: str) -> None:
    """Validate the pair and the counts ``part`` <= ``whole`` (both >= 1) of ``scheme``, and store
    the checked counts; ``symbol`` names ``whole`` in the error and ``reason`` says why."""
    _check_pair(getattr(scheme, "pair"))
    total = check_integer(whole, getattr(scheme, whole), minimum=1)
    count = check_integer(part, getattr(scheme, part), minimum=1)
    if count > total:
        raise InvalidArgument(part, count, f"must be <= {whole} ({symbol}={total}): {reason}")
    object.__setattr__(scheme, whole, total)
    object.__setattr__(scheme, part, count)


@dataclass(frozen=True)
class Single:
    """One run of the mechanism step on the full data."""

    pair: DominatingPair

    def __post_init__(self) -> None:
        _check_pair(self.pair)


@dataclass(frozen=True)
class Composed:
    """``times``-fold independent (adaptive) composition of ``scheme`` with itself."""

    scheme: "Scheme"
    times: int

    def __post_init__(self) -> None:
        if not isinstance(self.scheme, typing.get_args(Scheme)):
            names = ", ".join(t.__name__ for t in typing.get_args(Scheme))
            raise InvalidArgument("scheme", self.scheme, f"must be a scheme ({names})")
        object.__setattr__(self, "times", check_integer("times", self.times, minimum=1))


@dataclass(frozen=True)
class Poisson:
    """``steps`` steps, each including every element independently with probability ``rate``
    (add/remove adjacency; Steinke 2022, §6.2)."""

    pair: DominatingPair
    rate: float
    steps: int = 1

    def __post_init__(self) -> None:
        _check_rate_steps(self)


@dataclass(frozen=True)
class Allocation:
    """k-out-of-t random allocation ("balls and bins"): each element is used in exactly ``k`` of the
    ``steps`` = t steps, chosen uniformly, repeated for ``epochs`` epochs (Feldman & Shenfeld, §2.1)."""

    pair: DominatingPair
    steps: int
    k: int = 1
    epochs: int = 1

    def __post_init__(self) -> None:
        _check_part_of_whole(self, "k", "steps", "t", "an element cannot be in more steps than exist")
        object.__setattr__(self, "epochs", check_integer("epochs", self.epochs, minimum=1))


@dataclass(frozen=True)
class Sequence:
    """A heterogeneous run: the ``phases`` (each any other scheme, e.g. 1000 Poisson steps at σ = 1.1
    then 500 at σ = 0.9) run one after another on the same data, each on independent randomness, so
    the run is their adaptive composition (Steinke 2022, Thm 9 for PLDs, Lemma 31 for RDP, Thm 13 for
    zCDP). A list of phases is stored as a tuple; a phase may not itself be a Sequence (list its
    phases instead)."""

    phases: tuple["Scheme", ...]

    def __post_init__(self) -> None:
        phases = self.phases
        if not isinstance(phases, (list, tuple)):
            raise InvalidArgument("phases", phases, "must be a list of schemes")
        phases = tuple(phases)
        if not phases:
            raise InvalidArgument("phases", [], "must hold at least one phase (a sequence of nothing releases nothing)")
        allowed = tuple(t for t in typing.get_args(Scheme) if t is not Sequence)
        for index, phase in enumerate(phases):
            if isinstance(phase, Sequence):
                raise InvalidArgument(f"phases[{index}]", phase, "must not be a Sequence", fix="list its phases in the outer sequence")
            if not isinstance(phase, allowed):
                names = ", ".join(t.__name__ for t in allowed)
                raise InvalidArgument(f"phases[{index}]", phase, f"must be a scheme ({names})")
        object.__setattr__(self, "phases", phases)


@dataclass(frozen=True)
class Shuffle:
    """The shuffle model with ``users`` = n reports (Liew, Hasegawa & Takahashi, Thm 3): every user
    applies the step to its record and a trusted shuffler releases the reports in random order.
    Neighbours are replace-one: one user's report law changes from Q to P (the pair (P, Q) is the
    step on the two records). Only the divergence of one specific pair of datasets is known
    (D' = that user at P, everyone else at Q), which bounds the shuffle model's privacy from BELOW;
    the worst case over datasets is an open problem (the paper's §6) in general, and computed
    exactly for binary randomized response (:mod:`verifier.shuffle.binary`). At least two users: one
    report alone is not shuffled (use ``Single``).

    ``dimension`` is the number of coordinates d of an additive-noise report (records of norm <= the
    radius, noise N(0, σ²I_d)); None (the default, "any") promises nothing about it. Only bounds that
    hold for every d use the pair alone; the privacy blanket of a Gaussian report needs d
    (:mod:`verifier.shuffle.gaussian_blanket`: its mass falls like exp(−Δ√d/σ))."""

    pair: DominatingPair
    users: int
    dimension: int | None = None

    def __post_init__(self) -> None:
        _check_pair(self.pair)
        object.__setattr__(self, "users", check_integer("users", self.users, minimum=2))
        if self.dimension is not None:
            object.__setattr__(self, "dimension", check_integer("dimension", self.dimension, minimum=1))


#: Aggregations of shuffled check-in: the shuffled multiset of reports, or only their (secure) sum.
AGGREGATIONS = ("shuffle", "sum")


@dataclass(frozen=True)
class CheckIn:
    """Shuffled check-in (Liew, Hasegawa & Takahashi, Eq. (3)): in each of ``rounds`` rounds every
    one of ``users`` = n users checks in independently with probability ``rate`` = γ, applies the
    step to its record, and the reports of those who checked in are released shuffled
    (``aggregation="shuffle"``) or only summed by secure aggregation (``"sum"``, the distributed
    check-in of the paper's §5; additive-noise pairs only). The number k of check-ins is observed.
    Neighbours are replace-one (the paper's footnote 2): one user's report law changes from Q to P."""

    pair: DominatingPair
    users: int
    rate: float
    rounds: int = 1
    aggregation: str = "shuffle"

    def __post_init__(self) -> None:
        _check_pair(self.pair)
        object.__setattr__(self, "users", check_integer("users", self.users, minimum=1))
        object.__setattr__(self, "rate", check_rate("rate", self.rate))
        object.__setattr__(self, "rounds", check_integer("rounds", self.rounds, minimum=1))
        if self.aggregation not in AGGREGATIONS:
            raise InvalidArgument("aggregation", self.aggregation, f"must be one of {', '.join(AGGREGATIONS)}")


@dataclass(frozen=True)
class MatrixMechanism:
    """A matrix-factorisation mechanism (release C·X + Z, Z ~ N(0, σ²)) trained with random
    allocation: ``epochs`` k passes over ``batches`` b batches, each element in one batch, the same
    slot every epoch (Schuchardt & Kalinin, Def 2.7 and Lemma 2.8). ``pair`` is the Gaussian step
    (σ = noise multiplier times the clipping norm Δ = ``pair.sensitivity``); ``strategy`` is C with
    N = k·b rows. Negative entries of C are accounted through |C| (Lemma 2.8)."""

    pair: DominatingPair
    strategy: Strategy
    batches: int
    epochs: int = 1

    def __post_init__(self) -> None:
        _check_gaussian_strategy(self)
        b = check_integer("batches", self.batches, minimum=1)
        k = check_integer("epochs", self.epochs, minimum=1)
        if self.strategy.size != b * k:
            raise InvalidArgument("batches", b, f"epochs·batches = {k * b} must equal the strategy's size N = {self.strategy.size}")
        object.__setattr__(self, "batches", b)
        object.__setattr__(self, "epochs", k)


@dataclass(frozen=True)
class WithoutReplacement:
    """``steps`` steps, each on a batch of ``batch_size`` = B elements drawn uniformly without
    replacement from the ``dataset_size`` = n elements (fixed-size batches, drawn afresh each step),
    under replace-one neighbours: fixed-size sampling needs the replacement relation (Steinke 2022,
    §6.1 after Thm 29 and §6.2; the chapter defines no add/remove version). ``pair`` is the
    replace-one dominating pair of one step on its batch, e.g. Gaussian(σ, 2C) for a sum of
    gradients clipped at norm C (a replacement moves the sum by at most 2C)."""

    pair: DominatingPair
    dataset_size: int
    batch_size: int
    steps: int = 1

    def __post_init__(self) -> None:
        _check_part_of_whole(self, "batch_size", "dataset_size", "n", "a batch drawn without replacement cannot exceed the data")
        object.__setattr__(self, "steps", check_integer("steps", self.steps, minimum=1))

    @property
    def rate(self) -> float:
        """The probability B/n that a given element is in a step's batch."""
        return self.batch_size / self.dataset_size


@dataclass(frozen=True)
class PoissonReplaceOne:
    """``steps`` Poisson-sampled steps (each element included with probability ``rate``) under
    replace-one neighbours: the element keeps its inclusion coin and changes its record. ``pair``
    is the step's add/remove pair of one record (e.g. Gaussian(σ, C) for records clipped at C);
    a replacement is then the substitution pair with sensitivity 2C inside the same mixture
    (verifier.pairs.SubstitutionSubsampled with ``absent=pair``)."""

    pair: DominatingPair
    rate: float
    steps: int = 1

    def __post_init__(self) -> None:
        _check_rate_steps(self)


@dataclass(frozen=True)
class ShuffledBatches:
    """Shuffled batches, the data loader of most DP-SGD runs (PyTorch ``DataLoader(shuffle=True)``,
    Opacus with ``poisson_sampling=False``): each of ``epochs`` epochs draws one uniform permutation
    of the ``dataset_size`` = n elements and cuts it into consecutive batches of ``batch_size`` = B;
    the last n mod B elements form a smaller batch (``drop_last=False``, PyTorch's default) or are
    not used that epoch (``drop_last=True``). Neighbours are replace-one (n is public). ``pair`` is
    the replace-one pair of one batch step, e.g. Gaussian(σ, 2C) for a sum of gradients clipped at C.

    Bounds (:mod:`verifier.certify.methods.shuffled`): LOWER from the attained pair of datasets
    (every other record v, the target v or −v), which over the ⌊n/B⌋ full batches is 1-out-of-⌊n/B⌋
    random allocation of the pair, mixed with "not used" at weight 1 − λ (:attr:`rate`); UPPER from
    the step pair once per epoch (no amplification: Chua et al., ICML 2024, §3) and, where smaller,
    from FMT's clone pair for ⌊n/B⌋ shuffled users per epoch (:mod:`verifier.shuffle.batches`,
    proofs/shuffled_reduction.py). Add/remove
    neighbours change n and with it the batch layout; no bound is proven for them."""

    pair: DominatingPair
    dataset_size: int
    batch_size: int
    epochs: int = 1
    drop_last: bool = False

    def __post_init__(self) -> None:
        _check_part_of_whole(self, "batch_size", "dataset_size", "n", "a batch cannot hold more elements than the data")
        object.__setattr__(self, "epochs", check_integer("epochs", self.epochs, minimum=1))
        if not isinstance(self.drop_last, bool):
            raise InvalidArgument("drop_last", self.drop_last, "must be true or false")

    @property
    def full_batches(self) -> int:
        """⌊n/B⌋, the batches of exactly B elements in each epoch."""
        return self.dataset_size // self.batch_size

    @property
    def batches(self) -> int:
        """Steps per epoch: ⌊n/B⌋ with ``drop_last``, ⌈n/B⌉ without."""
        return self.full_batches + (0 if self.drop_last or self.dataset_size % self.batch_size == 0 else 1)

    @property
    def rate(self) -> float:
        """λ = ⌊n/B⌋·B/n, the probability that a given element is in one of the full batches."""
        return self.full_batches * self.batch_size / self.dataset_size


@dataclass(frozen=True)
class BandedPoisson:
    """A banded matrix-factorisation mechanism (release C·X + Z, Z ~ N(0, σ²)) with cyclic Poisson
    sampling, the amplified BandMF of Choquette-Choo et al. 2023 ("Amplified banded matrix
    factorization", NeurIPS 2023, §4; jax_privacy's ``amplified_bandmf_event``): the records are split
    into ``groups`` = b groups, step i (0-based) of the N = ``strategy.size`` steps uses group i mod b,
    each of its records independently with probability ``rate``. ``pair`` is the Gaussian step
    (σ and the clipping norm Δ = ``pair.sensitivity``); C must be lower-triangular with bandwidth
    <= b (``strategy.width`` <= ``groups``), so that one record's participations, b steps apart,
    move disjoint rows of C·X. The bounds reduce the run to Poisson-subsampled Gaussian steps with
    sensitivities Δ·‖C e_i‖ (:mod:`verifier.certify.methods.banded_poisson`)."""

    pair: DominatingPair
    strategy: Strategy
    groups: int
    rate: float

    def __post_init__(self) -> None:
        _check_gaussian_strategy(self)
        b = check_integer("groups", self.groups, minimum=1)
        if b > self.strategy.size:
            raise InvalidArgument("groups", b, f"must be <= the number of steps N = {self.strategy.size}: a group that is never sampled releases nothing")
        if self.strategy.width > b:
            raise InvalidArgument(
                "groups", b, f"must be >= the strategy's bandwidth {self.strategy.width}: cyclic Poisson sampling is analysed for a C "
                "that is b-banded (a record's participations b steps apart must move disjoint rows of C·X)"
            )
        object.__setattr__(self, "groups", b)
        object.__setattr__(self, "rate", check_rate("rate", self.rate))


@dataclass(frozen=True)
class ZCDP:
    """One step of a mechanism known only to be (ξ, ρ)-zCDP: D_α(M(x)‖M(x')) <= ξ + ρα at every order
    α > 1, for every pair of neighbours in both orders (Bun & Steinke 2016, Def 1.1; ξ = 0: ρ-zCDP,
    Steinke 2022, Def 11; dp_accounting's ``ZCDpEvent``). A claim about it is a claim about the worst
    mechanism of that class. UPPER bounds come from the class's Rényi curve ξ + ρα (the supremum of
    D_α over the class, :mod:`verifier.rdp`); LOWER bounds from a member, :attr:`stand_in`."""

    rho: float
    xi: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "rho", check_positive("rho", self.rho))
        object.__setattr__(self, "xi", check_nonnegative("xi", self.xi))

    @property
    def stand_in(self) -> Gaussian:
        """The Gaussian step with Δ/σ = μ <= √(2ρ) (μ rounded down, so μ²/2 <= ρ exactly): its D_α is
        αμ²/2 <= ξ + ρα at every order (Steinke 2022, Lemma 33.4), so it is a member of the class and
        its δ(ε) is a rigorous LOWER bound on the worst member's (equal to it up to rounding for ξ = 0:
        μ = √(2ρ) makes the Gaussian exactly ρ-zCDP, Lemma 12)."""
        from flint import arb

        mu = math.sqrt(2.0 * self.rho)
        while mu > 0.0 and not arb(mu) * arb(mu) <= 2 * arb(self.rho):  # exact: floats are exact balls
            mu = math.nextafter(mu, 0.0)
        return Gaussian(1.0, mu)


#: The selection rules :class:`Selection` describes: the exponential mechanism and permute-and-flip.
SELECTION_RULES = ("exponential", "permute_and_flip")


@dataclass(frozen=True)
class Selection:
    """One run of an ε-DP selection rule on score vectors whose entries each move by at most Δ between
    neighbours, for every score function: the exponential mechanism (weights e^{ε u/(2Δ)}) or
    permute-and-flip (McKenna & Sheldon 2020, arXiv 2010.12603: coins e^{ε (u − u*)/(2Δ)}; dp_accounting's
    ``ExponentialMechanismDpEvent`` and ``PermuteAndFlipDpEvent``). A claim about it is a claim about
    the worst score instance (proofs/selection_mechanisms.py). Three pairs describe the class:

    - :attr:`dominating` dominates every instance (UPPER bounds of any composition): the ε-BR class's
      tight pair :class:`~verifier.pairs.bounded_range.BoundedRange` for the exponential mechanism
      (ε-bounded range, Durfee & Rogers 2019); the Laplace pair with Δ/b = ε for permute-and-flip
      (report-noisy-max with exponential noise, Ding et al. 2021, whose every output set is a
      threshold of a Laplace output: proofs/permute_and_flip.py);
    - :attr:`supremum` has, at every ε', the largest δ(ε') over the instances (LOWER bounds of one run):
      BoundedRange(ε) again (each ε' attained by a two-candidate instance), Laplace with Δ/b = ε for
      permute-and-flip (two candidates release the Laplace mechanism's output thresholded, and every
      threshold is an instance); for both rules it equals :attr:`dominating`, so one run's bracket is
      exact;
    - :attr:`member` is one instance's pair (LOWER bounds of compositions): the two candidates with
      scores (−Δ, 0) against (0, −Δ) for the exponential mechanism, RR(ε/2); scores gap ±Δ' for
      permute-and-flip, RR(ln(2e^{εΔ'/(2Δ)} − 1)) with Δ' <= Δ so that the value is rounded down.
    """

    rule: str
    epsilon: float

    def __post_init__(self) -> None:
        if self.rule not in SELECTION_RULES:
            raise InvalidArgument("rule", self.rule, f"must be one of {', '.join(SELECTION_RULES)}")
        object.__setattr__(self, "epsilon", check_positive("epsilon", self.epsilon))

    @property
    def dominating(self) -> DominatingPair:
        from verifier.pairs import Laplace
        from verifier.pairs.bounded_range import BoundedRange

        return BoundedRange(self.epsilon) if self.rule == "exponential" else Laplace(1.0, self.epsilon)

    @property
    def supremum(self) -> DominatingPair:
        from verifier.pairs import Laplace
        from verifier.pairs.bounded_range import BoundedRange

        return BoundedRange(self.epsilon) if self.rule == "exponential" else Laplace(1.0, self.epsilon)

    @property
    def member(self) -> DominatingPair:
        from flint import arb

        from verifier._directed import arb_bound, with_precision
        from verifier._types import Side
        from verifier.pairs import RandomizedResponse

        if self.rule == "exponential":
            return RandomizedResponse(self.epsilon / 2)
        with with_precision():  # ln(2e^x − 1) = x + log1p(1 − e^{−x}), x = ε/2: positive and finite for every ε > 0
            half = arb(self.epsilon) / 2
            epsilon0 = arb_bound(half + (-(-half).expm1()).log1p(), Side.LOWER)
        return RandomizedResponse(epsilon0)


@dataclass(frozen=True)
class SampledZCDP:
    """``steps`` Poisson-sampled steps (each element included with probability ``rate``, add/remove
    neighbours), each step a mechanism known only to be (ξ, ρ)-zCDP (:class:`ZCDP`; dp_accounting's
    ``PoissonSampledDpEvent(q, ZCDpEvent)``). No amplification by sampling is claimed: UPPER bounds
    use the unsampled curve ξ + ρα per step (sampling never increases D_α for add/remove, by joint
    convexity; :mod:`verifier.rdp.classes`); LOWER bounds come from a member, the Poisson-sampled
    Gaussian with Δ/σ = √(2ρ) rounded down (:mod:`verifier.certify.methods.member`)."""

    step: ZCDP
    rate: float
    steps: int = 1

    def __post_init__(self) -> None:
        if not isinstance(self.step, ZCDP):
            raise InvalidArgument("step", self.step, "must be a ZCDP step")
        object.__setattr__(self, "rate", check_rate("rate", self.rate))
        object.__setattr__(self, "steps", check_integer("steps", self.steps, minimum=1))


@dataclass(frozen=True)
class RepeatAndSelect:
    """Repeat-and-select (Papernot & Steinke 2022, "Hyperparameter tuning with Rényi differential
    privacy", ICLR; dp_accounting's ``RepeatAndSelectDpEvent``): draw K from the truncated negative
    binomial distribution D_{η,γ} on {1, 2, …} (Def 1) with shape η = ``shape`` and mean E[K] =
    ``mean`` (γ follows from the mean), run ``scheme`` K times on the data with fresh randomness and
    release only the best run (by any total order on its outputs). η = 0 is the logarithmic
    distribution, η = 1 the geometric; K >= 1 almost surely. ``shape`` = ∞ (dp_accounting's
    convention) is K ~ Poisson(``mean``), which is 0 with probability e^{−mean} (then nothing is
    released, ⊥). UPPER bounds: Thm 2 (Thm 6 for Poisson K) on the run's Rényi curve
    (:mod:`verifier.rdp.classes`); LOWER bounds: the run itself, mixed with ⊥ at e^{−mean} for
    Poisson K (:mod:`verifier.certify.methods.member`)."""

    scheme: "Scheme"
    mean: float
    shape: float

    def __post_init__(self) -> None:
        if not isinstance(self.scheme, typing.get_args(Scheme)):
            names = ", ".join(t.__name__ for t in typing.get_args(Scheme))
            raise InvalidArgument("scheme", self.scheme, f"must be a scheme ({names})")
        mean = check_real("mean", self.mean)
        if not mean >= 1.0:
            raise InvalidArgument("mean", mean, "must be >= 1 (the number of runs is at least 1)")
        shape = self.shape
        poisson = isinstance(shape, (int, float)) and not isinstance(shape, bool) and shape == math.inf
        object.__setattr__(self, "mean", mean)
        object.__setattr__(self, "shape", math.inf if poisson else check_nonnegative("shape", shape))

    @property
    def poisson(self) -> bool:
        """Whether K ~ Poisson(mean) (shape = ∞; Papernot & Steinke 2022, Thm 6)."""
        return self.shape == math.inf


@dataclass(frozen=True)
class MatrixPoisson:
    """A matrix-factorisation mechanism (release C·X + Z, Z ~ N(0, σ²)) with Poisson sampling and a
    general strategy C (MMCC, Choquette-Choo, Ganesh, Steinke & Thakurta, ICLR 2024): the records are
    split into ``groups`` = b groups (default 1: every record may take part in every step), step i
    (0-based) of the N = ``strategy.size`` steps uses group i mod b, each of its records
    independently with probability ``rate``. Unlike :class:`BandedPoisson`, C may have any bandwidth;
    it must be lower-triangular (every Strategy is) and non-negative, the condition under which
    MMCC's bounds hold (:mod:`verifier.matrix.mmcc`)."""

    pair: DominatingPair
    strategy: Strategy
    rate: float
    groups: int = 1

    def __post_init__(self) -> None:
        _check_gaussian_strategy(self)
        b = check_integer("groups", self.groups, minimum=1)
        if b > self.strategy.size:
            raise InvalidArgument("groups", b, f"must be <= the number of steps N = {self.strategy.size}: a group that is never sampled releases nothing")
        if self.strategy.signed:
            raise InvalidArgument(
                "matrix", self.strategy.label, "must have non-negative entries: MMCC's bounds (the posterior bound and the dominance of the per-step mixtures) need C >= 0"
            )
        object.__setattr__(self, "groups", b)
        object.__setattr__(self, "rate", check_rate("rate", self.rate))


def _check_gaussian_step(scheme: "TruncatedPoisson | WithReplacement", what: str) -> None:
    """A batch-sampled Gaussian sum: the pair must be Gaussian; ``steps`` >= 1 and n >= 1."""
    if not isinstance(scheme.pair, Gaussian):
        raise InvalidArgument("pair", scheme.pair, f"{what} is modelled for a Gaussian sum only (use Gaussian(sigma, sensitivity))")
    object.__setattr__(scheme, "dataset_size", check_integer("dataset_size", scheme.dataset_size, minimum=1))
    object.__setattr__(scheme, "steps", check_integer("steps", scheme.steps, minimum=1))


@dataclass(frozen=True)
class TruncatedPoisson:
    """``steps`` steps of truncated Poisson sampling (dp_accounting's
    ``TruncatedSubsampledGaussianDpEvent``; Ganesh 2025, arXiv 2508.15089): each of the
    ``dataset_size`` = n records is drawn with probability ``rate`` = q, and when more than
    ``max_batch`` = B are drawn a uniform B-subset of them is kept; the step is a Gaussian sum over
    the kept records. ``pair`` = Gaussian(σ, C), C the records' norm bound. ``replace_one``: the
    record's value changes (n fixed); otherwise add/remove, the dataset holding the record having
    n records and the other n − 1 (both directions). Bounds: verifier.pairs.batch_sampling."""

    pair: DominatingPair
    dataset_size: int
    rate: float
    max_batch: int
    steps: int = 1
    replace_one: bool = False

    def __post_init__(self) -> None:
        _check_gaussian_step(self, "truncated Poisson sampling")
        object.__setattr__(self, "rate", check_rate("rate", self.rate))
        object.__setattr__(self, "max_batch", check_integer("max_batch", self.max_batch, minimum=1))
        if not isinstance(self.replace_one, bool):
            raise InvalidArgument("replace_one", self.replace_one, "must be true or false")


@dataclass(frozen=True)
class WithReplacement:
    """``steps`` steps, each on ``sample_size`` = m records drawn uniformly with replacement from the
    ``dataset_size`` = n records (dp_accounting's ``SampledWithReplacementDpEvent``): a record enters
    the Gaussian sum as often as it is drawn. Replace-one neighbours only (n is public); ``pair`` =
    Gaussian(σ, Δ) with Δ the replace-one shift of one copy (2C for records clipped at C). Bounds:
    verifier.pairs.batch_sampling."""

    pair: DominatingPair
    dataset_size: int
    sample_size: int
    steps: int = 1

    def __post_init__(self) -> None:
        _check_gaussian_step(self, "sampling with replacement")
        object.__setattr__(self, "sample_size", check_integer("sample_size", self.sample_size, minimum=1))

    @property
    def rate(self) -> float:
        """m/n, the expected multiplicity of a record in a batch."""
        return self.sample_size / self.dataset_size


Scheme = Union[Single, Composed, Poisson, Allocation, Sequence, Shuffle, CheckIn, MatrixMechanism, WithoutReplacement, PoissonReplaceOne, ShuffledBatches, BandedPoisson, ZCDP, Selection, SampledZCDP, RepeatAndSelect, MatrixPoisson, TruncatedPoisson, WithReplacement]


def base_pair(scheme: Scheme) -> DominatingPair:
    """The dominating pair of the step a scheme is built from (a Sequence has one per phase)."""
    while isinstance(scheme, Composed):
        scheme = scheme.scheme
    if isinstance(scheme, Sequence):
        raise InvalidArgument("scheme", scheme, "a Sequence has no single step pair: ask each of its phases")
    return scheme.pair


def holds_node(scheme: Scheme, kinds: type | tuple[type, ...]) -> bool:
    """Whether ``scheme`` holds a node of ``kinds`` anywhere: itself, inside a composition, or in a
    phase of a sequence (the methods for class and selection nodes claim such schemes whole)."""
    if isinstance(scheme, kinds):
        return True
    if isinstance(scheme, Composed):
        return holds_node(scheme.scheme, kinds)
    if isinstance(scheme, Sequence):
        return any(holds_node(phase, kinds) for phase in scheme.phases)
    return False
