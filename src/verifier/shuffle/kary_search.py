"""Shuffled k-ary randomized response, the exact worst case past the full enumeration: a search over
the backgrounds that prunes whole families of them with a partial blanket (proofs/shuffle_blanket.py).

Setting and lumping as :mod:`verifier.shuffle.histogram`: the victim's inputs are x = 0 and x′ = 1,
the other n − 1 users hold c_0 on x, c_1 on x′ (c_0 >= c_1, both orders) and the rest on the m = k − 2
third symbols. A node of the search fixes (c_0, c_1), the j largest third-symbol counts
c_(1) >= … >= c_(j), and the number R of users left on the other m − j third symbols (each with at
most c_(j) of them); its backgrounds are every way to place those R users.

Partial blanket (UPPER bound for every background of a node): each of the R users reports uniformly
with probability λ = k/Z (Z = e^ε0 + k − 1) whatever its input, and its own symbol otherwise
(p − q = 1 − k·q). Revealing which of them are not uniform, and their reports, is a release of which
the histogram is a function, so δ(ε) of every background of the node is at most E_N g(N), N ~ Bin(R,
λ) uniform users, g(N) the hockey-stick divergence (each order) of the histogram of the victim, the
c_0 + c_1 + c_(1) + … + c_(j) users kept and N uniform ones. In that law the m − j symbols not kept are
exchangeable, so they are lumped into one coordinate (:mod:`verifier.shuffle.histogram`), and kept third
symbols with equal counts are exchangeable too, so the law is kept on their orbits (each group's counts
sorted: :mod:`verifier.shuffle.orbits`, proofs/shuffle_blanket.py, step 5). Revealing less is a
post-processing of revealing more, so a child's bound is at most its parent's; a node with R = 0 is one
background, its bound its exact divergence (a leaf).

Search: δ(ε) takes every node whose bound is above the largest exact leaf so far (times 1 + 1e-7),
widest first, down to the leaves; ε(δ) finds E with every leaf's UPPER δ(ln E) <= δ
(:class:`verifier.shuffle.worst.WorstCase` over the leaves found), then visits the nodes at E,
pruning those with bound <= δ; a leaf above δ there joins the leaves and the step repeats. A node
whose orbit law has more than :func:`state_limit` states, or any node once a query has built laws of
:data:`WORK_LIMIT` states in all or has too little of its deadline left (:meth:`KarySearch._refining`; the
largest bounds are split first), is not refined: its bound stays in the upper end (a bracket that does not
meet). Without a deadline the search refines until the ends meet or WORK_LIMIT is spent; under
``--time-budget`` it stops early with that sound, wider bracket instead of being cut with none.

Evaluation: the kept users are each truthful with probability 1 − λ or uniform (step 1 of the proof),
so the law of their reports is Σ_T P(T)·U^(m − |T|)(δ_T) (T their truthful reports, U a uniform
report, a kernel on orbits), built one report at a time on the orbits of t reports (a sorted list per
t, :class:`verifier.shuffle.orbits.OrbitLayers`), then the victim's report and the N uniform ones;
float64 with the relative error of :meth:`KarySearch._laws` and the binomial weights rounded up from arb.
Masses stay normal floats: each is at least (min(λ, 1 − λ)/Z)^n, checked.
"""

from __future__ import annotations

import functools
import heapq
import itertools
import math
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np
import numpy.typing as npt
from flint import arb

from verifier._budget import MEMORY_SHARE, available_memory_bytes, seconds_left
from verifier._directed import arb_bound, up, with_precision
from verifier._types import Bracket, Side
from verifier._validation import check_integer, check_nonnegative, check_open_unit, check_positive, check_unit
from verifier.errors import NotApplicable
from verifier.shuffle.blanket import exp_bounds
from verifier.shuffle.histogram import float_masses
from verifier.shuffle.orbits import orbit_cells, orbit_layers, sorted_iid
from verifier.shuffle.worst import UNIT_ROUNDOFF, Candidate, WorstCase, hockey

__all__ = ["SEARCH_CITATION", "STATE_LIMIT", "STATE_BYTES", "STATE_FLOOR", "WORK_LIMIT", "SEARCH_USERS_LIMIT",
           "KarySearch", "kary_search", "Node", "state_limit"]

SEARCH_CITATION = (
    "shuffled k-ary randomized response: the worst case over every background, both orders, by a search that bounds "
    "families of backgrounds with a partial blanket (the users on the third symbols not kept report uniformly with "
    "probability k/(e^eps0 + k - 1); revealing the others is an upper bound) and computes the remaining ones exactly "
    "through the histogram of reports, float64 with proven error bounds: EXACT where the ends meet"
)

#: The most orbit states (all lists t = 0..n together) of one node's law; larger nodes keep their bound.
#: 1.2·10⁷ covers every background at k = 10, n = 20 (the largest, two pairs and six singly held third
#: symbols, has 1.07·10⁷), which closes ε0 = 0.15-0.3 there (δ = 10⁻⁶); :func:`state_limit` lowers it
#: to what the machine's memory holds.
STATE_LIMIT = 12_000_000
#: Peak bytes per state of the largest node law, its orbit lists and the cached ones (5.5 GB measured at
#: 1.2·10⁷ states, k = 10, n = 20).
STATE_BYTES = 460.0
#: The fewest states :func:`state_limit` allows (families of up to eight singly held symbols at n = 20).
STATE_FLOOR = 4_000_000
#: The most orbit states (summed over the node laws built) one query may spend before it stops splitting
#: nodes (their bounds then stay in the upper end): about an hour of one core, the ceiling of a run
#: without a deadline (ε0 = 0.15, k = 10, n = 20 needs 2·10⁹).
WORK_LIMIT = 2e10
#: The search stops splitting while less memory than this is available (the sorted laws of the leaves
#: above the threshold are kept: 4.9 GB peak at ε0 = 0.2, n = 20).
MEMORY_KEPT = 2e9
#: Under a deadline, the share of the time left at the start of a query kept for its answer (the
#: frontier's bisection), and at least this many seconds or four times the slowest node law so far.
RESERVE_SHARE, RESERVE_SECONDS = 0.15, 2.0
#: The largest n the search takes (its cost grows with the number of backgrounds).
SEARCH_USERS_LIMIT = 24

_SLACK = 1e-7  # δ(ε): a node within this relative margin of the largest exact leaf is not refined
_U = UNIT_ROUNDOFF


@dataclass(frozen=True)
class Node:
    """(c_0, c_1), the kept third-symbol counts ``tops`` (non-increasing) and ``pool`` users on the rest."""

    c0: int
    c1: int
    tops: tuple[int, ...]
    pool: int

    def children(self, third: int) -> list["Node"]:
        """The nodes keeping one more third symbol (the largest of the rest), ``third`` = k − 2 symbols in all."""
        slots = third - len(self.tops)
        if self.pool == 0 or slots == 0:
            return []
        most = min(self.pool, self.tops[-1]) if self.tops else self.pool
        least = -(-self.pool // slots)
        return [Node(self.c0, self.c1, (*self.tops, c), self.pool - c) for c in range(most, least - 1, -1)]

    @property
    def leaf(self) -> bool:
        """One background: no users left to place."""
        return self.pool == 0

    def label(self) -> str:
        """The backgrounds in words."""
        return f"others' inputs ({self.c0}, {self.c1}) on (x, x'), {self.tops} on third symbols" + (f", {self.pool} more" if self.pool else "")


class KarySearch:
    """The worst case of n shuffled k-ary ε0-randomized-response reports by the pruned search (module docstring)."""

    def __init__(self, epsilon0: float, k: int, users: int) -> None:
        self.epsilon0 = check_positive("epsilon0", epsilon0)
        self.k = check_integer("k", k, minimum=3)
        self.users = check_integer("users", users, minimum=2)
        if self.users > SEARCH_USERS_LIMIT:
            raise NotApplicable(f"the k-ary background search takes n <= {SEARCH_USERS_LIMIT}, got n = {self.users}")
        self.third = self.k - 2
        self._hit, self._miss = float_masses(self.epsilon0, self.k, self.users)
        with with_precision(128):
            big = arb(self.epsilon0).exp()
            self._lam = arb(self.k) / (big + (self.k - 1))
            self._unit = float((1 / arb(self.k)).mid())
            floor = float((-self.users * (arb.min(self._lam, 1 - self._lam) / (big + (self.k - 1))).log()).mid())
        if floor > 600:  # every mass of a law is at least (min(λ, 1 − λ)/Z)^n: keep it a normal float
            raise NotApplicable(f"the k-ary background search: (min(lam, 1 - lam)/Z)^n = e^-{floor:.0f} leaves the float range (eps0 = {self.epsilon0:g})")
        self._weights: dict[int, npt.NDArray[np.float64]] = {}
        others = self.users - 1
        self.roots = [Node(c0, c1, (), others - c0 - c1) for c0 in range(others + 1) for c1 in range(min(c0, others - c0) + 1)]
        self.leaves: dict[Node, tuple[Candidate, Candidate]] = {}
        self._work = 0.0  # orbit states of the laws built in the current query
        self._slowest = 0.0  # seconds of the slowest node law built
        self._bounds: dict[Node, tuple[float, float]] = {}  # the last (E, UPPER δ at E) of each node bounded
        self._reserve: float | None = None  # seconds of the deadline kept for the current query's answer
        self._answers: dict[tuple[str, float], Bracket] = {}  # certify asks each direction of replace-one alike
        # seeds: every background on at most one third symbol
        for root in self.roots:
            for node in [root] if root.leaf else [c for c in root.children(self.third) if c.leaf]:
                self._leaf(node)

    # -- one node ---------------------------------------------------------------------------------

    def _layout(self, node: Node) -> tuple[tuple[int, ...], list[int], list[int], tuple[int, int]]:
        """(group sizes, the others' count on each group's symbols, the number of symbols of each slot, the
        slots of x and x′): x, x′, the kept third symbols grouped by equal count, and (if any) the rest as
        one lumped slot of that many symbols, held by no kept user; the groups ordered by size (largest
        first), so nodes whose groups have the same sizes share their lists."""
        groups = [(1, node.c0, 1), (1, node.c1, 1)]
        for count, same in itertools.groupby(node.tops):
            groups.append((len(list(same)), count, 1))
        lumped = self.third - len(node.tops)
        if lumped:
            groups.append((1, 0, lumped))
        order = sorted(range(len(groups)), key=lambda i: -groups[i][0])
        sizes = tuple(groups[i][0] for i in order)
        symbols = [groups[i][2] for i in order for _ in range(groups[i][0])]
        slot = [sum(sizes[: order.index(i)]) for i in (0, 1)]
        return sizes, [groups[i][1] for i in order], symbols, (slot[0], slot[1])

    def fits(self, node: Node) -> bool:
        """Whether the node's orbit law has at most :func:`state_limit` states."""
        return orbit_cells(self._layout(node)[0], self.users) <= state_limit()

    def _start(self) -> None:
        """A new query: no work spent yet, and the share of its deadline (if any) kept for the answer."""
        self._work = 0.0
        left = seconds_left()
        self._reserve = None if left is None else max(RESERVE_SECONDS, RESERVE_SHARE * left)

    def _refining(self, work_limit: float | None = None, answering: bool = False) -> bool:
        """Whether the query may build another node law: under ``work_limit`` orbit states (None:
        :data:`WORK_LIMIT`), inside a deadline (:func:`verifier._budget.seconds_left`) with four slowest
        laws left plus the reserve unless ``answering`` (the frontier's bisection, which the reserve is
        kept for), and, to split, with more than :data:`MEMORY_KEPT` bytes of memory available."""
        left = seconds_left()
        keep = 4 * self._slowest + (0.0 if answering else self._reserve or 0.0)
        if self._work > (WORK_LIMIT if work_limit is None else work_limit) or (left is not None and left <= keep):
            return False
        return answering or available_memory_bytes() > MEMORY_KEPT

    def _kept(self, node: Node, sizes: tuple[int, ...], counts: list[int]) -> list[tuple[npt.NDArray[np.int64], npt.NDArray[np.float64]]]:
        """The law of the kept others' truthful reports T (each of them truthful with probability 1 − λ,
        independently; proofs/shuffle_blanket.py, step 1) as sorted states and masses, split by |T|."""
        rows, mass = np.zeros((1, 0), dtype=np.int64), np.ones(1)
        for g, c in zip(sizes, counts):
            part_rows, part_mass = sorted_iid(self._binomial(c), g)
            rows = np.hstack([np.repeat(rows, len(part_rows), axis=0), np.tile(part_rows, (len(rows), 1))])
            mass = np.outer(mass, part_mass).ravel()
        total = rows.sum(axis=1)
        return [(rows[total == t], mass[total == t]) for t in range(int(total.max()) + 1)]

    def _binomial(self, count: int) -> list[float]:
        """Bin(count, 1 − λ)(v), v = 0..count, each rounded to nearest from arb."""
        with with_precision(128):
            return [float((math.comb(count, v) * (1 - self._lam) ** v * self._lam ** (count - v)).mid()) for v in range(count + 1)]

    def _laws(self, node: Node) -> tuple[list[tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]], float]:
        """[(P_N, Q_N) for N = 0..pool] (victim on x, on x′; N uniform users) on orbits, and their relative
        error. The kept others are truthful T or uniform (proofs/shuffle_blanket.py, step 1): the law of
        their reports is Σ_T P(T)·U^(m − |T|)(δ_T), m of them and U a uniform report, built as
        L_{t+1} = U(L_t) + P(|T| = t + 1, T); then the victim's report and the N uniform ones.
        Roundings: the masses of T at most 3·slots + 2 (:func:`verifier.shuffle.orbits.sorted_iid`, the
        binomials, the product of the groups), each step at most slots + 4 (:meth:`OrbitLayers.step`,
        the injection one more)."""
        started = time.perf_counter()
        sizes, counts, symbols, victim_slots = self._layout(node)
        layers = orbit_layers(sizes, self.users)
        self._work += layers.cells
        kept = self._kept(node, sizes, counts)
        uniform = [s * self._unit for s in symbols]
        law = np.zeros(1)
        for t, (rows, mass) in enumerate(kept):
            if t:
                law = layers.step(law, t - 1, uniform)
            law[layers.index(t, rows)] += mass
        t = len(kept) - 1

        def victim(slot: int) -> list[float]:
            return [s * (self._hit if j == slot else self._miss) for j, s in enumerate(symbols)]

        first, second = layers.step(law, t, victim(victim_slots[0])), layers.step(law, t, victim(victim_slots[1]))
        out = [(first, second)]
        for t in range(t + 1, t + 1 + node.pool):
            first, second = layers.step(first, t, uniform), layers.step(second, t, uniform)
            out.append((first, second))
        slots = layers.slots
        widen = math.expm1(((slots + 4) * self.users + 3 * slots + 2) * math.log1p(_U)) * (1 + 1e-6)
        self._slowest = max(self._slowest, time.perf_counter() - started)
        return out, widen

    def _weight(self, pool: int) -> npt.NDArray[np.float64]:
        """UPPER bounds on Bin(pool, λ)(N), N = 0..pool."""
        if pool not in self._weights:
            with with_precision(128):
                lam = self._lam
                self._weights[pool] = np.array([arb_bound(math.comb(pool, i) * lam**i * (1 - lam) ** (pool - i), Side.UPPER) for i in range(pool + 1)])
        return self._weights[pool]

    def _leaf(self, node: Node) -> tuple[Candidate, Candidate]:
        """Both orders of a one-background node, as candidates (cached)."""
        if node not in self.leaves:
            self.leaves[node] = self._candidates(node)
        return self.leaves[node]

    def _candidates(self, node: Node) -> tuple[Candidate, Candidate]:
        """Both orders of a one-background node, as candidates."""
        laws, widen = self._laws(node)
        first, second = laws[0]
        keep = (first > 0) | (second > 0)
        name = node.label()
        return (Candidate.sorted(first[keep], second[keep], widen, 0.0, f"{name}, 0->1"),
                Candidate.sorted(second[keep], first[keep], widen, 0.0, f"{name}, 1->0"))

    def node_delta(self, node: Node, big: float, keep_above: float | None = None) -> float:
        """An UPPER bound on δ at E >= ``big`` of every background of ``node``, the larger order.

        With ``keep_above`` (a pruning threshold), a bound found earlier at some E' <= ``big`` that is at
        most ``keep_above`` is returned as it is: δ(E) does not increase with E, so it bounds δ at ``big``
        too, and it prunes without building the law again (each ε(δ) step visits the tree anew). A leaf
        is kept among the leaves only if its bound is above ``keep_above`` (None: always): the search
        needs no other, and at k = 10, n = 20, ε0 = 0.2 keeping all 750 took 14 GB. One dropped but
        needed later is found again by the next visit (its family's bound is above the threshold)."""
        earlier = self._bounds.get(node)
        if keep_above is not None and earlier is not None and earlier[0] <= big and earlier[1] <= keep_above:
            return earlier[1]
        bound = self._node_delta(node, big, keep_above)
        self._bounds[node] = (big, bound)
        return bound

    def _node_delta(self, node: Node, big: float, keep_above: float | None) -> float:
        """:meth:`node_delta` computed at ``big``."""
        if node.leaf:
            pair = self.leaves.get(node) or self._candidates(node)
            bound = max(hockey(c, big, Side.UPPER) for c in pair)
            if keep_above is None or bound > keep_above:
                self.leaves[node] = pair
            return bound
        laws, widen = self._laws(node)
        weight = self._weight(node.pool)
        best = 0.0
        for forward in (True, False):
            g = np.array([hockey(Candidate(p, q, widen, 0.0, "") if forward else Candidate(q, p, widen, 0.0, ""), big, Side.UPPER) for p, q in laws])
            best = max(best, float(np.sum(weight * np.minimum(g, 1.0))))
        return min(1.0, float(up(best * (1 + (len(laws) + 2) * _U))))

    # -- the search -------------------------------------------------------------------------------

    def _visit(self, big: float, threshold: float | None) -> tuple[float, list[Node], list[Node]]:
        """Visit the nodes at E >= ``big``, largest bound first: prune those with bound <= the threshold (δ,
        or None: the largest LOWER leaf δ at E so far, times 1 + _SLACK), refine the others to their
        leaves while :meth:`_refining`. Returns (the largest bound of a node pruned or left unrefined,
        the leaves above the threshold, the nodes left unrefined above it)."""
        best = 0.0
        if threshold is None:
            best = max(hockey(c, big, Side.LOWER) for pair in self.leaves.values() for c in pair)

        def prune() -> float:
            """The threshold now: bounds at most this are pruned (and their leaves not kept)."""
            return threshold if threshold is not None else best * (1 + _SLACK)

        kept, over, frontier = 0.0, [], []
        order = itertools.count()
        heap = [(-self.node_delta(node, big, prune()), next(order), node) for node in self.roots]
        heapq.heapify(heap)
        while heap:
            bound, _, node = heapq.heappop(heap)
            bound = -bound
            if bound <= prune():
                kept = max(kept, bound)  # every node left has a bound at most this one's
                break
            if node.leaf:
                over.append(node)
                if threshold is None:
                    best = max(best, *(hockey(c, big, Side.LOWER) for c in self._leaf(node)))
                continue
            children = node.children(self.third)
            if not self._refining() or not all(self.fits(c) for c in children):
                kept = max(kept, bound)
                frontier.append(node)
                continue
            for child in children:
                heapq.heappush(heap, (-self.node_delta(child, big, prune()), next(order), child))
        return kept, over, frontier

    def _remember(self, quantity: str, at: float, compute: Callable[[float], Bracket]) -> Bracket:
        """The bracket of ``quantity`` at ``at`` from an earlier query, else computed and kept (a second
        query would only repeat the search: the add and remove directions of replace-one are one pair)."""
        if (quantity, at) not in self._answers:
            self._answers[(quantity, at)] = compute(at)
        return self._answers[(quantity, at)]

    def delta(self, epsilon: float) -> Bracket:
        """δ(ε), the worst case over every background, as a rigorous bracket."""
        return self._remember("delta", epsilon, self._delta)

    def epsilon(self, delta: float) -> Bracket:
        """ε(δ), the worst case over every background, as a rigorous bracket."""
        return self._remember("epsilon", delta, self._epsilon)

    def tpr(self, fpr: float) -> Bracket:
        """The largest TPR at FPR α over every background and both orders (:meth:`_tpr`), as a rigorous bracket."""
        return self._remember("tpr", fpr, self._tpr)

    def _delta(self, epsilon: float) -> Bracket:
        """δ(ε), the worst case over every background, as a rigorous bracket."""
        epsilon = check_nonnegative("epsilon", epsilon)
        if epsilon >= self.epsilon0:  # every likelihood ratio of the shuffle is at most e^eps0
            return Bracket(0.0, 0.0)
        big_lo, big_hi = exp_bounds(epsilon)
        self._start()
        kept, over, _ = self._visit(big_lo, None)
        lower = max(hockey(c, big_hi, Side.LOWER) for pair in self.leaves.values() for c in pair)
        upper = max([kept] + [hockey(c, big_lo, Side.UPPER) for node in over for c in self._leaf(node)])
        return Bracket(max(0.0, lower), min(1.0, max(upper, lower)))

    def _epsilon(self, delta: float) -> Bracket:
        """ε(δ), the worst case over every background, as a rigorous bracket."""
        target = check_open_unit("delta", delta)
        self._start()
        for _ in range(8):
            found = WorstCase([c for pair in self.leaves.values() for c in pair], f"shuffled {self.k}-ary randomized response", self.epsilon0).epsilon(target)
            if found.upper >= self.epsilon0:
                return found
            big = exp_bounds(found.upper)[0]
            kept, over, frontier = self._visit(big, target)
            if not over and kept <= target:
                return found
            if not over:  # nodes left unrefined are above δ here: their own ε bound
                return Bracket(found.lower, self._epsilon_kept(target, found.upper, frontier))
        return Bracket(found.lower, self.epsilon0)

    def _tpr(self, fpr: float) -> Bracket:
        """The largest TPR at FPR α over every background and both orders, as a rigorous bracket: the
        leaves' Neyman–Pearson tests (:meth:`verifier.shuffle.worst.WorstCase.tpr`) and, for the other
        backgrounds, TPR(α) <= δ(ln E) + E·α (proofs/tradeoff_conversion.py) with a node's δ bound at the
        E where the best leaf's test randomises (the equality for that leaf): nodes above the best leaf's
        power are split down to their leaves."""
        alpha = check_unit("fpr", fpr)
        what = f"shuffled {self.k}-ary randomized response"
        bound, big = 1.0, math.nan  # bound: the largest TPR bound of the pruned nodes at the last visit
        self._start()
        for _ in range(3):
            worst = WorstCase([c for pair in self.leaves.values() for c in pair], what, self.epsilon0)
            ratio = worst.randomising_ratio(alpha)
            if ratio == big or not math.isfinite(ratio) or ratio <= 0:
                break
            big, before = ratio, len(self.leaves)
            slope = float(up(big * alpha * (1 + 4 * _U)))
            kept = self._visit(big, worst.tpr(alpha).lower * (1 + _SLACK) - slope)[0]
            bound = float(up((kept + slope) * (1 + 2 * _U)))
            if len(self.leaves) == before:
                break
        found = WorstCase([c for pair in self.leaves.values() for c in pair], what, self.epsilon0).tpr(alpha)
        return Bracket(found.lower, min(1.0, max(found.upper, bound)))

    def _epsilon_kept(self, target: float, start: float, frontier: list[Node]) -> float:
        """The smallest ε found on [start, ε0] where every node left unrefined at ``start`` has its bound
        <= δ (every other node was pruned there, and δ(ε) does not increase with ε): ε = start + (ε0 −
        start)·2^−j for j = 20, 19, … until one holds (a failing ε usually stops at the first node, the
        frontier is in decreasing order of bound), then bisection while the query's work is under twice
        :data:`WORK_LIMIT` and its deadline allows (ε0 if it runs out before any trial holds). After the
        first node the others are visited layout by layout, so each layout's orbit lists are built once
        per trial rather than evicted and rebuilt."""
        rest = sorted(frontier[1:], key=lambda node: self._layout(node)[0])

        def holds(value: float) -> bool:
            big = exp_bounds(value)[0]
            return all(self.node_delta(node, big, target) <= target for node in frontier[:1] + rest)

        lo, hi = start, self.epsilon0
        for j in range(20, -1, -1):
            if not self._refining(math.inf, answering=True):
                return self.epsilon0
            trial = start + (self.epsilon0 - start) * 2.0**-j
            if trial < self.epsilon0 and holds(trial):
                hi = trial
                break
            lo = trial
        for _ in range(12):
            if not self._refining(2 * WORK_LIMIT, answering=True):
                break
            mid = 0.5 * (lo + hi)
            if holds(mid):
                hi = mid
            else:
                lo = mid
        return hi


def state_limit() -> int:
    """The most states of one node law: :data:`STATE_LIMIT`, less where :data:`STATE_BYTES` a state would
    take more than MEMORY_SHARE of the memory available now, but at least :data:`STATE_FLOOR`."""
    return int(min(STATE_LIMIT, max(STATE_FLOOR, MEMORY_SHARE * available_memory_bytes() / STATE_BYTES)))


@functools.lru_cache(maxsize=4)
def kary_search(epsilon0: float, k: int, users: int) -> KarySearch:
    """The search for (ε0, k, n), cached: certify asks both directions of one scheme."""
    return KarySearch(epsilon0, k, users)
