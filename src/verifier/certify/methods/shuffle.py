"""The shuffle model (``Shuffle``: n users, one report each, replace-one neighbours) as certification
methods: UPPER bounds from Feldman, McMillan & Talwar 2021 for ε0-DP local randomizers, and the exact
LOWER bound of shuffled randomized response through the count of reports.

- "shuffle-clones": the clone reduction (FMT Thm 3.2), its pair's δ(ε) summed in ball arithmetic
  (:mod:`verifier.shuffle.clones`), with clone share 2/(e^ε0 + 1) for randomized response (any k;
  proofs/shuffle_binary.py) and FMT's e^{−ε0} otherwise, for ε0-DP randomizers (randomized response, ``approx_dp`` with
  δ0 = 0, Laplace, a finite pair with finite losses; no condition on ε0), and through Thm 3.8's
  coupling for (ε0, δ0)-DP ones (Gaussian, ``approx_dp``; :mod:`verifier.shuffle.approx`), which
  declines, naming the condition, when the coupling term n·δ0 leaves no room below δ.
- "shuffle-clone-sum": the Laplace randomizer, the clone reduction keeping the clones' reports (the
  law of the sum of likelihood ratios spread to a grid, convolved in ball arithmetic;
  :mod:`verifier.shuffle.clone_sum`, proofs/shuffle_clone_sum.py): UPPER, below "shuffle-clones".
- "shuffle-gaussian-blanket": the Gaussian randomizer with one-dimensional reports (``Shuffle.dimension`` = 1):
  the privacy blanket of Balle, Bell, Gascón & Nissim 2019, the victim's report among the blanket
  draws computed rigorously (:mod:`verifier.shuffle.gaussian_blanket`, proofs/shuffle_gaussian_blanket.py): UPPER. With
  no dimension declared it declines (no blanket bound holds for every d), and for d > 1 too.
- "shuffle-fmt-closed": FMT Thm 3.1, which holds only for ε0 <= ln(n/(16 ln(4/δ))); outside it the
  method declines with that condition and its values (NotApplicable), so it decides nothing there.
- "shuffle-rr-count": binary or k-ary randomized response on the datasets (1, 0, …, 0) against
  (0, …, 0), seen through the number of reports equal to 1 (:mod:`verifier.shuffle.count`): the
  exact δ of that pair, a LOWER bound on the shuffle model's δ in each orientation.
- "shuffle-rr-blanket": k-ary randomized response (k >= 3), every report uniform with probability
  k/(e^ε0 + k − 1): revealing the others that are not leaves the victim's report among N uniform ones
  (:mod:`verifier.shuffle.blanket`, proofs/shuffle_blanket.py): UPPER for every n.
- "shuffle-rr-one-symbol": k-ary randomized response (k >= 3) on the datasets where every other user
  holds one symbol (a third one, or the changed user's), both orders, exact
  (:mod:`verifier.shuffle.one_symbol`), and for small n (:data:`~verifier.shuffle.histogram.THREE_SYMBOL_LIMIT`)
  every background on at most three symbols (:class:`~verifier.shuffle.histogram.ThreeSymbolBackgrounds`): LOWER.
- "shuffle-rr-exact": randomized response, the worst case over every dataset pair (every
  background, both orders of the changed input) computed exactly: binary by a scan of the count of
  ones (:mod:`verifier.shuffle.binary`, n <= :data:`~verifier.shuffle.binary.SCAN_LIMIT`; beyond, up to
  :data:`~verifier.shuffle.ranges.RANGE_LIMIT`, exact backgrounds near the worst one and a proven bound
  over ranges of the others, :mod:`verifier.shuffle.ranges`), k >= 3 by
  the histogram of reports (:mod:`verifier.shuffle.histogram`, small n) and past it, n <=
  :data:`~verifier.shuffle.kary_search.SEARCH_USERS_LIMIT`, by a search over the backgrounds that bounds
  families of them by a partial blanket (:mod:`verifier.shuffle.kary_search`). Replace-one neighbours: the
  worst case over all ordered pairs of datasets is the same in both directions.
"""

from __future__ import annotations

import math
from typing import Sequence

from verifier._budget import Cost
from verifier._types import Bound, Direction, Quantity, Side
from verifier.analytic._search import smallest_passing
from verifier.certify.method import Guarantee, Method, QuantityMethod
from verifier.errors import NotApplicable
from verifier.schemes import Scheme, Shuffle
from verifier.shuffle.approx import COUPLING_CITATION, shuffle_delta_upper, shuffle_epsilon_upper
from verifier.shuffle.binary import BINARY_CITATION, SCAN_LIMIT, binary_shuffle
from verifier.shuffle.ranges import RANGE_LIMIT, RANGES_CITATION, BinaryRanges, binary_ranges
from verifier.shuffle.histogram import (
    CELL_LIMIT,
    HISTOGRAM_CITATION,
    THREE_SYMBOL_LIMIT,
    WORK_LIMIT,
    ThreeSymbolBackgrounds,
    histogram_work,
    kary_shuffle,
    three_symbol_backgrounds,
    three_symbol_work,
)
from verifier.shuffle.kary_search import SEARCH_CITATION, SEARCH_USERS_LIMIT, STATE_BYTES, STATE_FLOOR, KarySearch, kary_search
from verifier.shuffle.clones import (
    CLONES_CITATION,
    CLOSED_FORM_CITATION,
    CloneWeight,
    clone_weight,
    closed_form_condition,
    fmt_closed_form,
    local_epsilon0,
)
from verifier.shuffle.clone_sum import CLONE_SUM_CITATION, laplace_shuffle_delta_upper, laplace_shuffle_epsilon_upper
from verifier.shuffle.gaussian_blanket import GAUSSIAN_BLANKET_CITATION, blanket_delta_upper, blanket_epsilon_upper, blanket_mass_dimension
from verifier.shuffle.count import CountPair, rr_count_pair
from verifier.shuffle.worst import WorstCase
from verifier.shuffle.blanket import BLANKET_CITATION, USERS_LIMIT, blanket_bound
from verifier.shuffle.one_symbol import ONE_SYMBOL_CITATION, OneSymbolPair, one_symbol_lower

__all__ = [
    "ShuffleBlanket",
    "ShuffleGaussianBlanket",
    "ShuffleClones",
    "ShuffleCloneSum",
    "ShuffleClosedForm",
    "ShuffleCountLower",
    "ShuffleExact",
    "ShuffleOneSymbol",
    "METHODS",
]


def _epsilon0(scheme: Scheme) -> float | None:
    return local_epsilon0(scheme.pair) if isinstance(scheme, Shuffle) else None


def _require(method: Method, scheme: Scheme) -> tuple[float, int]:
    e0 = _epsilon0(scheme)
    if e0 is None or e0 <= 0:
        raise NotApplicable(f"{method.name} needs a Shuffle of an eps0-DP local randomizer (rr, approx_dp with delta0 = 0, laplace), got {scheme!r}")
    return e0, scheme.users  # type: ignore[union-attr]


def _negative_epsilon(quantity: Quantity, at: float) -> bool:
    """Whether the question is δ(ε) at ε < 0, which these methods answer with no bound."""
    return quantity is Quantity.DELTA and at < 0


class ShuffleClones(QuantityMethod):
    name = "shuffle-clones"
    citation = CLONES_CITATION
    returns = frozenset({Guarantee.UPPER})
    cost = 1
    scheme_types = (Shuffle,)

    def supports(self, scheme: Scheme) -> bool:
        return isinstance(scheme, Shuffle)

    def quantity_bounds(self, scheme: Scheme, quantity: Quantity, at: float, direction: Direction) -> Sequence[Bound]:
        if not isinstance(scheme, Shuffle) or _negative_epsilon(quantity, at):
            return []
        bound = shuffle_delta_upper if quantity is Quantity.DELTA else shuffle_epsilon_upper
        value, e0, d0 = bound(scheme.pair, scheme.users, at)
        if e0 == float("inf"):
            citation = "post-processing of the changed user's report: the step pair's own bound (smaller than FMT's here): UPPER"
            return [Bound(value, Side.UPPER, direction, quantity, at, self.name, citation)]
        citation = self.citation if d0 == 0 else f"{self.citation}; {COUPLING_CITATION}"
        share = clone_weight(scheme.pair) if d0 == 0 else CloneWeight.ANY
        note = f"eps0 = {e0:g}, delta0 = {d0:.3g}, clone share {share.value}"
        return [Bound(value, Side.UPPER, direction, quantity, at, self.name, citation, note=note)]


class ShuffleCloneSum(QuantityMethod):
    name = "shuffle-clone-sum"
    citation = CLONE_SUM_CITATION
    returns = frozenset({Guarantee.UPPER})
    cost = 2
    scheme_types = (Shuffle,)

    def supports(self, scheme: Scheme) -> bool:
        from verifier.pairs import Laplace

        return isinstance(scheme, Shuffle) and isinstance(scheme.pair, Laplace)

    def estimate_cost(self, scheme: Scheme) -> Cost | None:
        """Ball DFTs of up to ~80·√(n·w) points for ~20 buckets of C and up to 5 ranges of the inputs'
        distance: measured 1.0 s of CPU at n = 10³, 2.2 s at 10⁴, 7.3 s at 10⁵, 15.7 s at 10⁶ (ε(δ),
        ε0 = 1, δ = 1e-6; benchmarks/shuffle.md)."""
        if not self.supports(scheme):
            return None
        n = scheme.users  # type: ignore[union-attr]
        return Cost(seconds=0.6 + 0.02 * math.sqrt(n), bytes=400.0 * (80 * math.sqrt(n) + 1024), what=f"n = {n}")

    def quantity_bounds(self, scheme: Scheme, quantity: Quantity, at: float, direction: Direction) -> Sequence[Bound]:
        if not self.supports(scheme) or _negative_epsilon(quantity, at):
            return []
        e0, n = _require(self, scheme)
        bound = laplace_shuffle_delta_upper if quantity is Quantity.DELTA else laplace_shuffle_epsilon_upper
        return [Bound(bound(e0, n, at), Side.UPPER, direction, quantity, at, self.name, self.citation, note=f"eps0 = {e0:g}")]


#: Largest exponent 2Δ(Δ + 8.5σ)/σ² of the blanket's likelihood ratio the lattice is built for: beyond,
#: the single report alone is far smaller than anything the lattice could certify.
GAUSSIAN_BLANKET_EXPONENT_LIMIT = 40.0


class ShuffleGaussianBlanket(QuantityMethod):
    name = "shuffle-gaussian-blanket"
    citation = GAUSSIAN_BLANKET_CITATION
    returns = frozenset({Guarantee.UPPER})
    cost = 3
    scheme_types = (Shuffle,)

    def supports(self, scheme: Scheme) -> bool:
        from verifier.pairs import Gaussian

        return isinstance(scheme, Shuffle) and isinstance(scheme.pair, Gaussian)

    def estimate_cost(self, scheme: Scheme) -> Cost | None:
        """A cover of ~150–400 cells of victim records, each a law of ~500–700 intervals of z in ball
        arithmetic (~0.03 s, once per cell) and one to 15 self-compositions of N + 1 draws (0.01–0.5 s):
        measured for ε(δ) 7 s of CPU at σ = 3, n = 10³, 45 s at 10⁴ and 545 s at 10⁵; at σ = 1, 38–61 s
        for n = 10³ to 10⁵ and 344 s at 10⁶ (benchmarks/shuffle.md): about 10·(n/10³)^0.75 s."""
        if not self.supports(scheme) or scheme.dimension != 1:  # type: ignore[union-attr]
            return None  # declines at once (no dimension, or d > 1)
        n = scheme.users  # type: ignore[union-attr]
        return Cost(seconds=10.0 * (n / 1000) ** 0.75, bytes=8.0 * 16 * (8192 + 40 * math.sqrt(n)), what=f"n = {n}")

    def _check(self, scheme: Scheme) -> tuple[float, float, int]:
        """(σ, sensitivity, n) of a Shuffle of Gaussian reports in one dimension, or NotApplicable."""
        if not self.supports(scheme):
            raise NotApplicable(f"{self.name} needs a Shuffle of Gaussian reports, got {scheme!r}")
        pair, n, d = scheme.pair, scheme.users, scheme.dimension  # type: ignore[union-attr]
        if d is None:
            raise NotApplicable(
                f"{self.name} needs the reports' dimension (--dimension 1): the blanket's mass falls like exp(-Delta*sqrt(d)/sigma) "
                f"(gamma_d = {blanket_mass_dimension(1, pair.sigma, pair.sensitivity / 2):.3g} at d = 1, "
                f"{blanket_mass_dimension(100, pair.sigma, pair.sensitivity / 2):.3g} at d = 100), so no such bound holds for every d"
            )
        if d != 1:
            raise NotApplicable(f"{self.name} is built for one-dimensional reports (dimension = 1), got dimension = {d}")
        half = pair.sensitivity / 2
        exponent = 2 * half * (half + 8.5 * pair.sigma) / pair.sigma**2
        if exponent > GAUSSIAN_BLANKET_EXPONENT_LIMIT:
            raise NotApplicable(
                f"{self.name}: sigma/Delta = {pair.sigma / half:.3g} is too small for its lattice (the likelihood ratio reaches "
                f"e^{exponent:.3g} > e^{GAUSSIAN_BLANKET_EXPONENT_LIMIT:g}); the single report's own bound is far smaller there"
            )
        return pair.sigma, pair.sensitivity, n

    def quantity_bounds(self, scheme: Scheme, quantity: Quantity, at: float, direction: Direction) -> Sequence[Bound]:
        if _negative_epsilon(quantity, at):
            return []
        sigma, sensitivity, n = self._check(scheme)
        bound = blanket_delta_upper if quantity is Quantity.DELTA else blanket_epsilon_upper
        return [Bound(bound(sigma, sensitivity, n, at), Side.UPPER, direction, quantity, at, self.name, self.citation, note="dimension 1")]


class ShuffleClosedForm(Method):
    name = "shuffle-fmt-closed"
    citation = CLOSED_FORM_CITATION
    returns = frozenset({Guarantee.UPPER})
    cost = 0
    scheme_types = (Shuffle,)

    def supports(self, scheme: Scheme) -> bool:
        e0 = _epsilon0(scheme)
        return e0 is not None and e0 > 0

    def epsilon_bounds(self, scheme: Scheme, delta: float, direction: Direction) -> Sequence[Bound]:
        e0, n = _require(self, scheme)
        value = fmt_closed_form(e0, n, delta)  # NotApplicable (condition named) outside Thm 3.1
        return [Bound(value, Side.UPPER, direction, Quantity.EPSILON, delta, self.name, self.citation)]

    def delta_bounds(self, scheme: Scheme, epsilon: float, direction: Direction) -> Sequence[Bound]:
        """The smallest δ (bisection on ln δ) whose closed-form ε is <= ``epsilon``: the mechanism is
        (ε_closed(δ), δ)-DP, hence (ε, δ)-DP, so δ(ε) <= δ."""
        e0, n = _require(self, scheme)

        def fits(d: float) -> bool:
            return closed_form_condition(e0, n, d) is None and fmt_closed_form(e0, n, d) <= epsilon

        if not fits(math.exp(-1e-12)):
            raise NotApplicable(f"FMT Thm 3.1 gives no delta < 1 at eps = {epsilon:g}: {closed_form_condition(e0, n, 0.5) or 'eps too small'}")
        _, hi = smallest_passing(lambda log_delta: fits(math.exp(log_delta)), -690.0, -1e-12, tolerance=0.0, steps=60)
        value = min(1.0, math.nextafter(math.exp(hi), 2.0))
        return [Bound(value, Side.UPPER, direction, Quantity.DELTA, epsilon, self.name, self.citation)]


def _count_pair(scheme: Scheme, direction: Direction) -> tuple[CountPair, float]:
    """The count pair of shuffled randomized response in ``direction`` and its ε0, or NotApplicable."""
    from verifier.pairs import ApproxDP, RandomizedResponse

    if not isinstance(scheme, Shuffle):
        raise NotApplicable(f"shuffle-rr-count needs a Shuffle, got {scheme!r}")
    pair = scheme.pair
    if isinstance(pair, RandomizedResponse):
        e0, k = pair.epsilon0, pair.k
    elif isinstance(pair, ApproxDP) and pair.delta0 == 0 and pair.epsilon0 > 0:
        e0, k = pair.epsilon0, 2
    else:
        raise NotApplicable(f"shuffle-rr-count needs randomized response (rr, or approx_dp with delta0 = 0), got {pair!r}")
    forward = rr_count_pair(e0, k, scheme.users)
    if direction is Direction.REMOVE:
        return forward, e0
    return CountPair(forward.a0, forward.a1, forward.r, forward.others), e0


class ShuffleCountLower(Method):
    name = "shuffle-rr-count"
    citation = "shuffled randomized response on (1, 0, ..., 0) vs (0, ..., 0) through the count of reports equal to 1, exact: LOWER"
    returns = frozenset({Guarantee.LOWER})
    cost = 1
    scheme_types = (Shuffle,)

    def supports(self, scheme: Scheme) -> bool:
        try:
            _count_pair(scheme, Direction.REMOVE)
        except NotApplicable:
            return False
        return True

    def delta_bounds(self, scheme: Scheme, epsilon: float, direction: Direction) -> Sequence[Bound]:
        pair, _ = _count_pair(scheme, direction)
        if epsilon < 0:
            return []
        value = pair.delta(epsilon).lower
        return [Bound(value, Side.LOWER, direction, Quantity.DELTA, epsilon, self.name, self.citation)]

    def epsilon_bounds(self, scheme: Scheme, delta: float, direction: Direction) -> Sequence[Bound]:
        pair, e0 = _count_pair(scheme, direction)
        value = pair.epsilon_lower(delta, e0)
        return [Bound(value, Side.LOWER, direction, Quantity.EPSILON, delta, self.name, self.citation)]


def _kary(scheme: Scheme) -> tuple[float, int, int] | None:
    """(ε0, k, n) of a Shuffle of k-ary randomized response with k >= 3 and n <= USERS_LIMIT, else None."""
    from verifier.pairs import RandomizedResponse

    if isinstance(scheme, Shuffle) and isinstance(scheme.pair, RandomizedResponse) and scheme.pair.k >= 3 and scheme.users <= USERS_LIMIT:
        return scheme.pair.epsilon0, scheme.pair.k, scheme.users
    return None


class _KaryMethod(QuantityMethod):
    """A bound for shuffled k-ary randomized response (k >= 3) at any n."""

    returns = frozenset({Guarantee.UPPER})
    cost = 1
    scheme_types = (Shuffle,)
    needs_float_range = False  # the windows check their own float range

    def supports(self, scheme: Scheme) -> bool:
        return _kary(scheme) is not None

    def estimate_cost(self, scheme: Scheme) -> Cost | None:
        """One binomial window per value of the others' count on the two symbols (~25·√n of them, each
        ~25·√n long, ~3 kB per user in all): measured at most 1 s of CPU at n <= 10⁴ and 3.6 s at 10⁵
        (benchmarks/shuffle.md)."""
        found = _kary(scheme)
        if found is None:
            return None
        n = found[2]
        return Cost(seconds=0.2 + 4e-5 * n, bytes=3000.0 * n, what=f"n = {n}")

    def _args(self, scheme: Scheme) -> tuple[float, int, int]:
        found = _kary(scheme)
        if found is None:
            raise NotApplicable(f"{self.name} needs a Shuffle of k-ary randomized response with k >= 3 and n <= {USERS_LIMIT}, got {scheme!r}")
        return found


class ShuffleBlanket(_KaryMethod):
    name = "shuffle-rr-blanket"
    citation = BLANKET_CITATION

    def quantity_bounds(self, scheme: Scheme, quantity: Quantity, at: float, direction: Direction) -> Sequence[Bound]:
        if _negative_epsilon(quantity, at):
            return []
        blanket = blanket_bound(*self._args(scheme))
        value = blanket.delta_upper(at) if quantity is Quantity.DELTA else blanket.epsilon_upper(at)
        return [Bound(value, Side.UPPER, direction, quantity, at, self.name, self.citation)]


class ShuffleOneSymbol(_KaryMethod):
    name = "shuffle-rr-one-symbol"
    citation = ONE_SYMBOL_CITATION
    returns = frozenset({Guarantee.LOWER})

    def _lowers(self, scheme: Scheme) -> list[OneSymbolPair | ThreeSymbolBackgrounds]:
        """The one-symbol pairs, and for small n every background on at most three symbols."""
        e0, k, n = self._args(scheme)
        found: list[OneSymbolPair | ThreeSymbolBackgrounds] = list(one_symbol_lower(e0, k, n))
        if three_symbol_work(n) <= THREE_SYMBOL_LIMIT:
            found.append(three_symbol_backgrounds(e0, k, n))
        return found

    def quantity_bounds(self, scheme: Scheme, quantity: Quantity, at: float, direction: Direction) -> Sequence[Bound]:
        if _negative_epsilon(quantity, at):
            return []
        if quantity is Quantity.DELTA:
            found = [(low.delta_lower(at), low.label) if isinstance(low, OneSymbolPair) else (low.delta(at).lower, low.worst(at))
                     for low in self._lowers(scheme)]
        else:
            found = [(low.epsilon_lower(at), low.label) if isinstance(low, OneSymbolPair) else (low.epsilon(at).lower, "a three-symbol background")
                     for low in self._lowers(scheme)]
        value, label = max(found)
        return [Bound(value, Side.LOWER, direction, quantity, at, self.name, self.citation, note=label)]


class ShuffleExact(QuantityMethod):
    name = "shuffle-rr-exact"
    citation = (f"{BINARY_CITATION}; n > {SCAN_LIMIT}: {RANGES_CITATION}; k >= 3: {HISTOGRAM_CITATION}; "
                f"past it, n <= {SEARCH_USERS_LIMIT}: {SEARCH_CITATION}")
    returns = frozenset({Guarantee.EXACT})
    cost = 2
    scheme_types = (Shuffle,)
    needs_float_range = False  # the modules check their own float range

    def supports(self, scheme: Scheme) -> bool:
        from verifier.pairs import RandomizedResponse

        if not (isinstance(scheme, Shuffle) and isinstance(scheme.pair, RandomizedResponse)):
            return False
        if scheme.pair.k == 2:
            return scheme.users <= RANGE_LIMIT
        work, cells = histogram_work(scheme.pair.k, scheme.users)
        return (work <= WORK_LIMIT and cells <= CELL_LIMIT) or scheme.users <= SEARCH_USERS_LIMIT

    def estimate_cost(self, scheme: Scheme) -> Cost | None:
        """The binary scan: n/2 convolutions of windows of ~28 standard deviations (about 2e-8·n² s of CPU,
        measured 1.5 s at n = 10^4) and two float64 arrays per background; beyond SCAN_LIMIT the ranges
        (measured at δ = 1e-6: 0.05–0.35 s at n = 10^5, 0.3–4.4 s at 10^6, falling with ε0: about
        1.1e-6·n^1.1·e^(−0.75(ε0 − 0.5)) s) and the 65 exact backgrounds' arrays; the k-ary enumeration: its
        multiply-adds (:func:`verifier.shuffle.histogram.histogram_work`) at ~5e8 a second."""
        if not self.supports(scheme):
            return None
        pair, n = scheme.pair, scheme.users  # type: ignore[union-attr]
        if pair.k == 2:
            window = 30 * math.sqrt(n * 0.25) + 40
            if n > SCAN_LIMIT:
                return Cost(seconds=1.1e-6 * n**1.1 * math.exp(-0.75 * (pair.epsilon0 - 0.5)), bytes=8.0 * 4 * 70 * window, what=f"n = {n}")
            return Cost(seconds=2e-8 * n * n, bytes=8.0 * n * window, what=f"n = {n}")
        work, cells = histogram_work(pair.k, n)
        if work > WORK_LIMIT or cells > CELL_LIMIT:  # the background search: its first bracket (the seeds, 0.1 s at
            # n = 20, 0.17 s at 24); it then refines while the deadline allows (exact at k = 10, n = 20, delta = 1e-6 in
            # 0.2 s at eps0 = 4, 1.2-1.4 s at 1-2, 3.1 s at 0.5, 8 s at 0.4, 2-4 min at 0.15-0.3, 0.5 s at 0.1)
            return Cost(seconds=0.1 + 1.2e-5 * n**3, bytes=STATE_BYTES * STATE_FLOOR, what=f"n = {n}, k = {pair.k}, background search")
        return Cost(seconds=work / 5e8, bytes=8.0 * 3 * cells, what=f"n = {n}, k = {pair.k}")

    def _scan(self, scheme: Scheme) -> WorstCase | BinaryRanges | KarySearch:
        if not self.supports(scheme):
            raise NotApplicable(f"{self.name} needs a Shuffle of randomized response with binary n <= {RANGE_LIMIT} or a small "
                                f"k-ary histogram enumeration, got {scheme!r}")
        pair = scheme.pair  # type: ignore[union-attr]
        if pair.k == 2 and scheme.users > SCAN_LIMIT:  # type: ignore[union-attr]
            return binary_ranges(pair.epsilon0, scheme.users)  # type: ignore[union-attr]
        if pair.k == 2:
            return binary_shuffle(pair.epsilon0, scheme.users)  # type: ignore[union-attr]
        work, cells = histogram_work(pair.k, scheme.users)  # type: ignore[union-attr]
        if work > WORK_LIMIT or cells > CELL_LIMIT:
            return kary_search(pair.epsilon0, pair.k, scheme.users)  # type: ignore[union-attr]
        return kary_shuffle(pair.epsilon0, pair.k, scheme.users)  # type: ignore[union-attr]

    def quantity_bounds(self, scheme: Scheme, quantity: Quantity, at: float, direction: Direction) -> Sequence[Bound]:
        if _negative_epsilon(quantity, at):
            return []
        scan = self._scan(scheme)
        found = getattr(scan, {Quantity.DELTA: "delta", Quantity.EPSILON: "epsilon", Quantity.TPR: "tpr"}[quantity])(at)
        return [Bound(found.lower, Side.LOWER, direction, quantity, at, self.name, self.citation),
                Bound(found.upper, Side.UPPER, direction, quantity, at, self.name, self.citation)]

    def tpr_bounds(self, scheme: Scheme, fpr: float, direction: Direction) -> Sequence[Bound]:
        """TPR at FPR of the worst pair of datasets (:meth:`verifier.shuffle.worst.WorstCase.tpr`)."""
        return self.quantity_bounds(scheme, Quantity.TPR, fpr, direction)


METHODS = [ShuffleClosedForm(), ShuffleClones(), ShuffleCloneSum(), ShuffleGaussianBlanket(), ShuffleCountLower(), ShuffleBlanket(), ShuffleOneSymbol(), ShuffleExact()]
