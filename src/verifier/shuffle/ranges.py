"""Shuffled binary randomized response beyond the exact scan: the worst case over every background,
exact where it is attained and bounded over ranges of backgrounds elsewhere (n up to
:data:`RANGE_LIMIT`), as a rigorous bracket whose ends meet where the ranges settle.

The setting and the pair (P_m, Q_m) of background m (the number of ones among the other n − 1 users)
are those of :mod:`verifier.shuffle.binary`, whose scan computes every m ≤ (n − 1)/2 exactly and
costs ~n². Here the backgrounds m < :data:`PRE_SCAN` (and m = ⌊(n − 1)/2⌋) are computed exactly; every
other m lies in a range [a, b] whose hockey-stick divergence is bounded at once
(proofs/shuffle_ranges.py):

    H_E(P_m‖Q_m) <= Σ_j Pr[K ∈ bucket j]·g(k_j) + Pr[K < k_0]   for every m in [a, b], both orders,

with K ~ Bin(b − a, 2/(e^ε0 + 1)), the buckets [k_j, k_{j+1}) covering K's window, and g(k) the exact
hockey-stick divergence of Bern(p) + A + Bin(k, 1/2) against Bern(1 − p) + A + Bin(k, 1/2),
A = Bin(a, p) + Bin(n − 1 − b, 1 − p) (the a ones and n − 1 − b zeros every background of the range
shares). Why: each of the b − a other users reports a fair coin with probability 2/(e^ε0 + 1) and its
own bit otherwise (Bern(p) = 2(1 − p)·Bern(1/2) + (2p − 1)·δ_1, Bern(1 − p) the same with δ_0), so
revealing which users are coins leaves Bin(K, 1/2) plus a known shift, whatever m; joint convexity of
the hockey-stick divergence, its shift invariance and the data-processing inequality (g falls as k
grows: a coin added to both laws) give the bound. It exceeds the exact value at m = a by the variance
the coins lose, about (b − a)(2p − 1)/(2np) of ε relatively, so ranges are narrow near the worst
background and wide where the profile has fallen (it falls about linearly in m).

Evaluation: every pmf in float64 with the proven relative error bounds of
:mod:`verifier.shuffle.binary` (binomial windows holding all but τ = 1e-20 of the mass on each side,
nonnegative convolutions) and :func:`verifier.shuffle.worst.hockey`; each range's bound is an UPPER
bound, each exact background's a bracket. A query (δ at ε, or ε at δ) first brackets the exactly
computed backgrounds with :class:`verifier.shuffle.worst.WorstCase`, then covers the remaining
backgrounds with ranges whose width is predicted from the profile (a heuristic: it only sets the
cost), checking each range's UPPER bound against that bracket's upper end and splitting a range that
does not fit (down to single backgrounds, computed exactly and added to the bracket). The result is
rigorous whatever the prediction; it declines (NotApplicable) when the cover needs more than
:data:`RANGE_BUDGET` ranges (e.g. ε near 0, where the worst background is a mixed one).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
from flint import arb

from verifier._directed import arb_bound, up, with_precision
from verifier._types import Bracket, Side
from verifier._validation import check_integer, check_nonnegative, check_open_unit, check_positive, check_unit
from verifier.errors import NotApplicable
from verifier.shuffle.binary import SCAN_LIMIT, binomial_window, convolve_windows, count_candidates
from verifier.shuffle.worst import UNIT_ROUNDOFF, Candidate, WorstCase, hockey

__all__ = ["PRE_SCAN", "RANGES_CITATION", "RANGE_BUDGET", "RANGE_LIMIT", "BinaryRanges", "binary_ranges"]

RANGES_CITATION = (
    "shuffled binary randomized response for large n: the worst case over every background, exact backgrounds "
    "where it is attained and a proven bound over each range of the others (coins of share 2/(e^eps0 + 1) for the "
    "range's free users, proofs/shuffle_ranges.py), in float64 with proven error bounds: EXACT where the ranges settle"
)

#: The largest n covered (CPU measured at δ = 1e-6: 0.05–0.35 s at n = 10^5, 0.3–4.4 s at 10^6, the most at ε0 = 0.5).
RANGE_LIMIT = 2_000_000
#: The backgrounds m < PRE_SCAN are computed exactly before any range (the worst one is among them in every case measured).
PRE_SCAN = 64
#: The most ranges one query may plan or evaluate before declining (the benchmark's cells need at most 1413).
RANGE_BUDGET = 8_000

_U = UNIT_ROUNDOFF
_TAU = 1e-20  # Chernoff mass allowed outside each side of a window
_TIGHT = (1.02, 1.05)  # binomial windows from 1.02 times the Gaussian estimate, widened 5% at a time
_SHARE_OF_MARGIN = 0.85  # the predicted excess of a range over the exact value at its left end, as a share of the margin
_BUCKET_SHARE = 0.3  # the same for bucketing K
_DELTA_TOLERANCE = 1e-7  # a δ query accepts ranges up to (1 + this)·(the exact backgrounds' upper end) …
_DELTA_FLOOR = 1e-15  # … or up to this much above it (δ near 0: the ranges' unlisted mass, ~1e-18, fits)
_BLOCK_SHARE_INVERSE = 40  # a block of ranges starting at a spans about a/40 backgrounds


@dataclass(frozen=True)
class _Range:
    first: int  # a
    last: int  # b
    bucket: int  # width of K's buckets
    anchor: tuple[int, int] | None = None  # (ones, zeros) of a base law shared by a block of ranges


class BinaryRanges:
    """δ(ε), ε(δ) and TPR at FPR of n shuffled ε0-randomized-response bits, worst case over every dataset
    pair (module docstring); results are cached per query."""

    def __init__(self, epsilon0: float, users: int, pre_scan: int = PRE_SCAN) -> None:
        self.epsilon0 = check_positive("epsilon0", epsilon0)
        self.users = check_integer("users", users, minimum=2)
        if self.users > RANGE_LIMIT:
            raise NotApplicable(f"the range scan of shuffled binary randomized response covers n <= {RANGE_LIMIT} users, got n = {self.users}")
        with with_precision(192):
            big0 = arb(self.epsilon0).exp()
            self._p, self._r = big0 / (big0 + 1), 1 / (big0 + 1)
            self._coin, self._coin_c = 2 / (big0 + 1), (big0 - 1) / (big0 + 1)  # 2(1 − p) and 2p − 1
            self._half = arb(1) / 2
        self._mid = (self.users - 1) // 2
        self._pre = check_integer("pre_scan", pre_scan, minimum=1)
        exact = sorted(set(range(min(self._pre, self._mid + 1))) | {self._mid})
        self._exact: dict[int, list[Candidate]] = {m: self._background(m) for m in exact}
        self._cache: dict[tuple[str, float], Bracket] = {}
        self._bases: dict[tuple[int, int], tuple[npt.NDArray[np.float64], float]] = {}

    # -- the laws ---------------------------------------------------------------------------------
    def _shared(self, ones: int, zeros: int) -> tuple[npt.NDArray[np.float64], float]:
        """Bin(ones, p) + Bin(zeros, 1 − p) in float64 and its relative error (all but 4τ of the mass)."""
        with with_precision(192):
            _, a, rel_a = binomial_window(ones, self._p, self._r, _TAU, *_TIGHT)
            _, b, rel_b = binomial_window(zeros, self._r, self._p, _TAU, *_TIGHT)
        return convolve_windows(a, rel_a, b, rel_b)

    def _shared_in_block(self, span: _Range) -> tuple[npt.NDArray[np.float64], float]:
        """A = Bin(a, p) + Bin(n − 1 − b, 1 − p) of the range: its block's base law (computed once per block)
        plus the rest, a small convolution (all but 8τ of the mass)."""
        if span.anchor is None:
            return self._shared(span.first, self.users - 1 - span.last)
        if span.anchor not in self._bases:
            self._bases = {span.anchor: self._shared(*span.anchor)}  # ranges come block by block: keep one
        base, rel_base = self._bases[span.anchor]
        rest, rel_rest = self._shared(span.first - span.anchor[0], self.users - 1 - span.last - span.anchor[1])
        return convolve_windows(base, rel_base, rest, rel_rest)

    def _background(self, m: int) -> list[Candidate]:
        s, rel = self._shared(m, self.users - 1 - m)
        return count_candidates(s, rel, 4 * _TAU, self._p, self._r, f"m = {m}")

    def _coin_counts(self, width: int) -> tuple[int, npt.NDArray[np.float64], float]:
        """K ~ Bin(width, 2/(e^ε0 + 1)), the number of coins among a range's free users, on its window."""
        with with_precision(192):
            return binomial_window(width, self._coin, self._coin_c, _TAU, *_TIGHT)

    def range_upper(self, first: int, last: int, epsilon: float, bucket: int = 1) -> float:
        """An UPPER bound on δ(ε) of every background m in [first, last], both orders, with K's buckets
        ``bucket`` wide (module docstring)."""
        if not 0 <= first <= last <= self.users - 1:
            raise ValueError(f"range [{first}, {last}] is not within 0 … {self.users - 1}")
        with with_precision(128):
            big = arb_bound(arb(check_nonnegative("epsilon", epsilon)).exp(), Side.LOWER)
        return self._range_upper(_Range(first, last, check_integer("bucket", bucket, minimum=1)), big)

    def _range_upper(self, span: _Range, big: float) -> float:
        """An UPPER bound on H_E(P_m‖Q_m) and H_E(Q_m‖P_m) for every m in the range, E >= ``big``."""
        s, rel = self._shared_in_block(span)
        k_lo, pk, rel_k = self._coin_counts(span.last - span.first)
        bucket = min(span.bucket, len(pk))  # one bucket holds K's whole window: wider ones bound the same
        with with_precision(192):
            _, coins, rel_c = binomial_window(k_lo, self._half, self._half, _TAU, *_TIGHT)
            _, step, rel_step = binomial_window(bucket, self._half, self._half, _TAU, *_TIGHT)
        s, rel = convolve_windows(s, rel, coins, rel_c)
        outside = (10 if span.anchor else 6) * _TAU
        totals = [0.0, 0.0]
        buckets = range(0, len(pk), bucket)
        for i in buckets:
            chunk = pk[i:i + bucket]
            weight = float(up(float(np.sum(chunk)) * (1 + 2 * (rel_k + (len(chunk) + 2) * _U))))
            for side, candidate in enumerate(count_candidates(s, rel, outside, self._p, self._r, "range")):
                totals[side] += weight * hockey(candidate, big, Side.UPPER)
            if i + bucket < len(pk):
                s, rel = convolve_windows(s, rel, step, rel_step)
                outside += 2 * _TAU
        # K below the window: g <= 1; above it: in the last bucket (g falls with k); 2τ of K's mass unlisted
        return float(up(max(totals) * (1 + (2 * len(buckets) + 4) * _U) + 2 * _TAU))

    # -- the cover --------------------------------------------------------------------------------
    def _plan(self, big: float, threshold: float) -> tuple[list[_Range], float]:
        """Ranges covering pre_scan … mid − 1, widths predicted from the profile (heuristic), and the probe's
        UPPER bound (the probe is the last range)."""
        start, stop = min(self._pre, self._mid), self._mid - 1
        if stop < start:
            return [], 0.0
        top = max(hockey(c, big, Side.UPPER) for m in self._exact if m < self._pre for c in self._exact[m])
        bottom = max(hockey(c, big, Side.UPPER) for c in self._exact[self._mid])
        slope = max(0.0, top - bottom) / max(1, self._mid)
        first = max(start, stop + 1 - max(1, self._mid // 100))
        probe = _Range(first, stop, max(1, (stop - first) // 8))
        probe_upper = self._range_upper(probe, big)
        excess = (probe_upper - (top - slope * probe.first)) / max(1, probe.last - probe.first)
        excess = max(excess, 1e-12 * max(top, 1e-300))
        p = float(self._p.mid())
        spans, a = [], start
        while a < probe.first:
            margin = threshold - (top - slope * a)
            width = max(0, int(_SHARE_OF_MARGIN * margin / excess))
            bucket = max(1, int(1 + 8 * _BUCKET_SHARE * (1 - p) * (p - 0.5) * margin / excess))
            last = min(probe.first - 1, a + width)
            spans.append(_Range(a, last, bucket))
            a = last + 1
        return self._blocks(spans) + [probe], probe_upper

    def _blocks(self, spans: list[_Range]) -> list[_Range]:
        """The spans grouped into blocks about a/_BLOCK_SHARE_INVERSE wide whose ranges share a base law:
        the block's first a ones and n − 1 − (its last b) zeros."""
        out: list[_Range] = []
        i = 0
        while i < len(spans):
            j = i
            while j + 1 < len(spans) and spans[j + 1].last - spans[i].first <= spans[i].first // _BLOCK_SHARE_INVERSE:
                j += 1
            anchor = (spans[i].first, self.users - 1 - spans[j].last) if j > i else None
            out += [_Range(x.first, x.last, x.bucket, anchor) for x in spans[i:j + 1]]
            i = j + 1
        return out

    def _cover(self, big: float, threshold: float) -> tuple[float, list[int]]:
        """Checks every background m in pre_scan … mid − 1 at E >= ``big``: the largest UPPER bound of the
        ranges that fit under ``threshold``, and the backgrounds (computed exactly) whose own UPPER bound
        does not."""
        spans, probe_upper = self._plan(big, threshold)
        if len(spans) > RANGE_BUDGET:
            raise NotApplicable(f"the range scan would need more than {RANGE_BUDGET} ranges (n = {self.users}, eps0 = {self.epsilon0}: "
                                "the profile over backgrounds is too flat here, e.g. near eps = 0)")
        highest, above, evaluated = 0.0, [], 0
        stack = list(reversed(spans))
        while stack:
            span = stack.pop()
            evaluated += 1
            if evaluated > RANGE_BUDGET:
                raise NotApplicable(f"the range scan did not settle within {RANGE_BUDGET} ranges (n = {self.users}, eps0 = {self.epsilon0})")
            if span.first == span.last:
                cands = self._exact.get(span.first) or self._background(span.first)
                value = max(hockey(c, big, Side.UPPER) for c in cands)
                if value > threshold:
                    self._exact[span.first] = cands
                    above.append(span.first)
                    continue
            else:
                value = probe_upper if span == spans[-1] else self._range_upper(span, big)
                if value > threshold:
                    half = (span.first + span.last) // 2
                    bucket = max(1, span.bucket // 2)
                    stack += [_Range(half + 1, span.last, bucket, span.anchor), _Range(span.first, half, bucket, span.anchor)]
                    continue
            highest = max(highest, value)
        return highest, above

    def _worst_case(self) -> WorstCase:
        return WorstCase([c for cands in self._exact.values() for c in cands], "shuffled binary randomized response", self.epsilon0)

    # -- the queries ------------------------------------------------------------------------------
    def delta(self, epsilon: float) -> Bracket:
        """δ(ε), the worst case over every background, as a rigorous bracket (clipped to [0, 1])."""
        eps = check_nonnegative("epsilon", epsilon)
        if ("delta", eps) not in self._cache:
            with with_precision(128):
                big = arb_bound(arb(eps).exp(), Side.LOWER)
            exact = self._worst_case().delta(eps)
            highest, above = self._cover(big, max(exact.upper * (1 + _DELTA_TOLERANCE), exact.upper + _DELTA_FLOOR))
            if above:
                exact = self._worst_case().delta(eps)
            self._cache["delta", eps] = Bracket(exact.lower, min(1.0, max(exact.upper, highest)))
        return self._cache["delta", eps]

    def epsilon(self, delta: float) -> Bracket:
        """ε(δ) = inf{ε >= 0 : δ(ε) <= δ}, the worst case over every background, as a rigorous bracket: the
        exact backgrounds' bracket, whose upper end every range is checked against (and raised, with the
        backgrounds found above it, until none is)."""
        target = check_open_unit("delta", delta)
        if ("epsilon", target) not in self._cache:
            while True:
                exact = self._worst_case().epsilon(target)
                if exact.upper >= self.epsilon0:
                    break
                with with_precision(128):
                    big = arb_bound(arb(exact.upper).exp(), Side.LOWER)
                _, above = self._cover(big, target)
                if not above:
                    break
            self._cache["epsilon", target] = exact
        return self._cache["epsilon", target]

    def tpr(self, fpr: float) -> Bracket:
        """The largest true-positive rate at false-positive rate α: the exact backgrounds' bracket
        (:meth:`verifier.shuffle.worst.WorstCase.tpr`), every range checked through TPR(α) <= δ(ln E) + E·α
        (proofs/tradeoff_conversion.py) with E the likelihood ratio where the worst exact background's
        test randomises."""
        alpha = check_unit("fpr", fpr)
        if ("tpr", alpha) not in self._cache:
            exact = self._worst_case().tpr(alpha)
            big = self._worst_case().randomising_ratio(alpha)
            highest = 0.0
            if 0.0 < big < math.inf and exact.upper < 1.0:  # else the exact upper end is 1 already
                cost = float(up(big * alpha))
                highest, above = self._cover(big, exact.upper * (1 + _DELTA_TOLERANCE) - cost)
                if above:
                    exact = self._worst_case().tpr(alpha)
                highest = float(up(highest + cost))
            self._cache["tpr", alpha] = Bracket(exact.lower, min(1.0, max(exact.upper, highest)))
        return self._cache["tpr", alpha]


@functools.lru_cache(maxsize=1)
def binary_ranges(epsilon0: float, users: int) -> BinaryRanges:
    """The range scan for (ε0, n), cached: certify asks both directions and both quantities of one scheme."""
    if users <= SCAN_LIMIT:
        raise NotApplicable(f"n = {users} is within the exact scan (n <= {SCAN_LIMIT}); use verifier.shuffle.binary")
    return BinaryRanges(epsilon0, users)
