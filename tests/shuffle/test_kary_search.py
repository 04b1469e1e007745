"""Issue 38, Done-when 2 (k-ary randomized response exact for n <= 20) and 5: the background search of
verifier.shuffle.kary_search against the brute force of every dataset (kary_enumeration.py: the full
histogram by direct convolution, no lumping, no blanket), against the dense enumeration of
verifier.shuffle.histogram where that runs, and two mutants: a pruning bound that is not an upper bound,
and a wrong mass on the lumped third symbols."""

import math

import numpy as np
import pytest

import verifier.shuffle.kary_search as kary_search
from kary_enumeration import pair_delta, worst
from verifier.shuffle.blanket import BlanketBound
from verifier.shuffle.histogram import KaryShuffle
from verifier.shuffle.kary_search import KarySearch, Node
from verifier.shuffle.one_symbol import OneSymbolPair


def _nodes(search: KarySearch) -> list[Node]:
    found, stack = [], list(search.roots)
    while stack:
        node = stack.pop()
        found.append(node)
        stack.extend(node.children(search.third))
    return found


def _dataset(node: Node) -> tuple[int, ...]:
    """A leaf's background as the other users' inputs (x = 0, x' = 1, third symbols 2, 3, ...)."""
    return (0,) * node.c0 + (1,) * node.c1 + tuple(2 + i for i, c in enumerate(node.tops) for _ in range(c))


def _leaves_under(node: Node, third: int) -> list[Node]:
    if node.leaf:
        return [node]
    return [leaf for child in node.children(third) for leaf in _leaves_under(child, third)]


def _node_violations(k: int, n: int, e0: float, eps: float) -> int:
    """How many (node, background of it) pairs have the node's bound below the background's brute-force δ."""
    search = KarySearch(e0, k, n)
    big = math.exp(eps) * (1 - 1e-15)
    exact: dict[Node, float] = {}
    bad = 0
    for node in _nodes(search):
        bound = search.node_delta(node, big)
        for leaf in _leaves_under(node, search.third):
            if leaf not in exact:
                exact[leaf] = pair_delta(_dataset(leaf), e0, k, eps)
            bad += bound < exact[leaf] * (1 - 1e-12)
    return bad


@pytest.mark.parametrize("k,n,e0,eps", [(5, 6, 1.0, 0.2), (4, 8, 3.0, 0.45), (6, 5, 2.0, 0.8)])
def test_every_node_bound_is_above_each_of_its_backgrounds(k, n, e0, eps):
    """The partial blanket bounds every background a node stands for (each by brute force), a leaf's bound
    is its background's exact δ, and the leaves cover every background: the brute-force worst case over
    every dataset is the largest leaf. Catches a partial blanket that drops a term and a child list that
    misses placements of the remaining users."""
    assert _node_violations(k, n, e0, eps) == 0
    search = KarySearch(e0, k, n)
    big = math.exp(eps) * (1 - 1e-15)
    exact = {leaf: pair_delta(_dataset(leaf), e0, k, eps) for leaf in _nodes(search) if leaf.leaf}
    for leaf, value in exact.items():
        assert search.node_delta(leaf, big) == pytest.approx(value, rel=1e-9, abs=1e-15)
    assert max(exact.values()) == pytest.approx(worst(n, e0, k, eps), rel=1e-12)


def _assert_delta_holds_and_meets(search, n, e0, k, epsilons, rel):
    """δ(ε) at each ε holds the brute force over every dataset (to rounding) and its upper end is within
    ``rel`` of it."""
    for eps in epsilons:
        truth = worst(n, e0, k, eps)
        bracket = search.delta(eps)
        assert bracket.lower <= truth * (1 + 1e-13) and truth * (1 - 1e-13) <= bracket.upper
        assert bracket.upper <= truth * (1 + rel)


def test_search_brackets_the_brute_force_and_meets():
    """k = 4, n = 8, ε0 = 3, where a background on two third symbols (six others and one) is within 1e-14
    of the worst at ε = 0.45: the bracket holds the brute force and is within 1e-7 of it."""
    k, n, e0 = 4, 8, 3.0
    _assert_delta_holds_and_meets(KarySearch(e0, k, n), n, e0, k, (0.45, 0.9), 1e-7)


@pytest.mark.parametrize("k,n", [(5, 7), (4, 8)])
def test_search_at_a_small_eps0_brackets_the_brute_force_and_meets(k, n):
    """ε0 = 0.2, where the partial blanket prunes little (every other user is uniform with probability
    0.978 at k = 5, so the backgrounds' δ agree to 1e-15 here): δ(ε) at ε = 0.05 and 0.1 and ε(δ) at δ =
    1e-3 hold the brute force over every dataset and meet (δ within 1e-9, ε within 1e-8, relative)."""
    e0 = 0.2
    search = KarySearch(e0, k, n)
    _assert_delta_holds_and_meets(search, n, e0, k, (0.05, 0.1), 1e-9)
    bracket = search.epsilon(1e-3)
    assert bracket.upper - bracket.lower <= 1e-8 * bracket.upper  # ε(δ)'s own margins: E within 1e-10 relative
    assert worst(n, e0, k, bracket.lower) >= 1e-3 * (1 - 1e-12) and worst(n, e0, k, bracket.upper) <= 1e-3 * (1 + 1e-12)


def test_mutant_pruning_bound_that_is_no_upper_bound_is_refuted(monkeypatch):
    """Mutant: the partial blanket with the remaining users uniform too often (λ·1.1 in the weights of N,
    as the blanket mutant of test_kary_blanket.py) falls below some background of its node (k = 5,
    n = 6, ε0 = 1, ε = 0.2), which the check of test_every_node_bound_is_above_each_of_its_backgrounds sees."""
    assert _node_violations(5, 6, 1.0, 0.2) == 0
    honest = KarySearch.__init__

    def too_uniform(self, *args):
        honest(self, *args)
        self._lam = self._lam * 11 / 10
        self._weights.clear()

    monkeypatch.setattr(KarySearch, "__init__", too_uniform)
    assert _node_violations(5, 6, 1.0, 0.2) > 0


def test_mutant_lumped_symbols_with_one_symbol_mass_is_refuted(monkeypatch):
    """Mutant: the lumped third symbols weighted as one symbol (q, 1/k instead of their number times it):
    the search's bracket misses the brute force (k = 6, n = 5, ε0 = 2, ε = 0.8)."""
    k, n, e0, eps = 6, 5, 2.0, 0.8
    truth = worst(n, e0, k, eps)
    honest = KarySearch._layout

    def one_mass(self, node):
        sizes, counts, symbols, slots = honest(self, node)
        return sizes, counts, [min(s, 1) for s in symbols], slots

    monkeypatch.setattr(KarySearch, "_layout", one_mass)
    bracket = KarySearch(e0, k, n).delta(eps)
    assert not bracket.lower <= truth <= bracket.upper


def test_mutant_orbit_multiplicity_one_is_refuted(monkeypatch):
    """Mutant: an orbit step that counts a report on a group's symbols holding equal counts once (not
    their number): a leaf whose third symbols share a count (k = 6, n = 5, ε0 = 2, ε = 0.8, two others on
    each of two third symbols) is no longer its background's brute-force δ."""
    import verifier.shuffle.orbits as orbits

    k, n, e0, eps = 6, 5, 2.0, 0.8
    leaf = Node(0, 0, (2, 2), 0)

    def once(self, values, t, masses):
        src, dst, slot, _ = self.moves[t]
        out = np.zeros(len(self.keys[t + 1]))
        np.add.at(out, dst, np.asarray(masses)[slot] * values[src])
        return out

    big = math.exp(eps) * (1 - 1e-15)
    assert KarySearch(e0, k, n).node_delta(leaf, big) == pytest.approx(pair_delta(_dataset(leaf), e0, k, eps), rel=1e-9)
    monkeypatch.setattr(orbits.OrbitLayers, "step", once)
    assert KarySearch(e0, k, n).node_delta(leaf, big) != pytest.approx(pair_delta(_dataset(leaf), e0, k, eps), rel=1e-3)


@pytest.mark.parametrize("e0", [1.0, 2.0])
def test_search_agrees_with_the_dense_enumeration_at_ten_symbols(e0):
    """k = 10, n = 6 (the dense enumeration runs to n = 7): both exact brackets overlap, for δ(ε) and ε(δ)."""
    search, dense = KarySearch(e0, 10, 6), KaryShuffle(e0, 10, 6)
    for eps in (0.1 * e0, 0.4 * e0):
        a, b = search.delta(eps), dense.delta(eps)
        assert a.lower <= b.upper and b.lower <= a.upper and a.upper - a.lower <= 1e-7 * a.upper
    a, b = search.epsilon(1e-6), dense.epsilon(1e-6)
    assert a.lower <= b.upper and b.lower <= a.upper


@pytest.mark.parametrize("e0,n", [(1.0, 12), (2.0, 16)])
def test_ten_symbols_exact_within_the_independent_ends(e0, n):
    """Done-when 2, k = 10 at n <= 20 (δ = 1e-6): ε(δ) meets within 1e-6 relative, inside [one-symbol
    LOWER, blanket UPPER] (independent code), and at ε0 = 2, n = 16 above the three-symbol value 1.7187
    (the other n - 1 users fourteen on x, one on z)."""
    bracket = KarySearch(e0, 10, n).epsilon(1e-6)
    assert bracket.upper - bracket.lower <= 1e-6 * bracket.lower
    assert max(p.epsilon_lower(1e-6) for p in (OneSymbolPair(e0, 10, n, h) for h in ("z", "x"))) <= bracket.upper
    assert bracket.upper <= BlanketBound(e0, 10, n).epsilon_upper(1e-6)
    if n == 16:
        assert bracket.lower >= 1.7186


def test_tpr_brackets_the_most_powerful_test_of_every_dataset():
    """TPR at FPR α, the worst background and order, against the Neyman–Pearson test of every dataset in
    mpmath (k = 5, n = 6, ε0 = 2): the bracket holds it and is at most 1e-7 wide, relative."""
    import itertools

    import mpmath

    from kary_enumeration import histogram_law
    from neyman_pearson import most_powerful_tpr

    k, n, e0 = 5, 6, 2.0
    search = KarySearch(e0, k, n)
    for alpha in (0.01, 0.2):
        truth = mpmath.mpf(0)
        for others in itertools.combinations_with_replacement(range(k), n - 1):
            p, q = histogram_law((0, *others), e0, k), histogram_law((1, *others), e0, k)
            keys = sorted(set(p) | set(q))
            first, second = [mpmath.mpf(p.get(h, 0.0)) for h in keys], [mpmath.mpf(q.get(h, 0.0)) for h in keys]
            truth = max(truth, most_powerful_tpr(first, second, alpha), most_powerful_tpr(second, first, alpha))
        bracket = search.tpr(alpha)
        assert bracket.lower <= float(truth) * (1 + 1e-12) and float(truth) * (1 - 1e-12) <= bracket.upper
        assert bracket.upper - bracket.lower <= 1e-7 * bracket.upper


@pytest.mark.parametrize(
    "limit, value",
    [("STATE_LIMIT", math.comb(6 + 4, 4)), ("WORK_LIMIT", 0.0), ("deadline", 0.0)],
    ids=["families-too-large-to-split", "out-of-work", "deadline-spent"],
)
def test_unsplit_families_keep_a_sound_bracket(monkeypatch, limit, value):
    """Families the search does not split stay bounded by their partial blanket, whichever limit stops
    it: with the histogram lists capped at four coordinates (STATE_LIMIT: x, x', one kept third symbol,
    the rest) the families spread over more third symbols, and with no work allowed past the roots
    (WORK_LIMIT = 0, or a deadline already spent: ``--time-budget``) every family. k = 5, n = 6, ε0 = 1:
    the brackets of δ(ε) and ε(δ) (the frontier's bisection included where there is time for it) still
    hold the brute force, and ε(δ) no longer meets (0.7% wide at δ = 0.02 under the state cap), the price
    of not splitting. Catches an unsplit family or frontier dropped from the upper end (the ends would
    meet, an exactness not proven), and a search that ignores its deadline (it would meet)."""
    k, n, e0 = 5, 6, 1.0
    if limit == "deadline":
        monkeypatch.setattr(kary_search, "seconds_left", lambda: value)
    else:
        monkeypatch.setattr(kary_search, limit, value)
    search = KarySearch(e0, k, n)
    for eps in (0.2, 0.5):
        bracket, truth = search.delta(eps), worst(n, e0, k, eps)
        assert bracket.lower <= truth * (1 + 1e-12) and truth * (1 - 1e-12) <= bracket.upper
    bracket = search.epsilon(0.02)
    assert worst(n, e0, k, bracket.lower) >= 0.02 * (1 - 1e-12) and worst(n, e0, k, bracket.upper) <= 0.02 * (1 + 1e-12)
    assert bracket.upper > bracket.lower * (1 + 1e-4)


def test_a_repeated_query_is_answered_without_a_second_search(monkeypatch):
    """certify asks ε(δ) for the add and the remove direction of replace-one, one pair: the second
    answer is the first bracket, with no node law built again (k = 10, n = 9, ε0 = 0.5)."""
    search = KarySearch(0.5, 10, 9)
    first = search.epsilon(1e-6)
    built = []
    honest = KarySearch._laws
    monkeypatch.setattr(KarySearch, "_laws", lambda self, node: built.append(node) or honest(self, node))
    assert search.epsilon(1e-6) == first and not built
    search.epsilon(1e-3)
    assert built


def test_the_search_is_told_the_time_budget(monkeypatch):
    """``--time-budget`` reaches the background search (k = 10, n = 9, ε0 = 0.5, through the Python API as
    ``verifier epsilon`` runs it): each query starts with the seconds left of the budget, so it can stop
    splitting with a sound bracket rather than be interrupted with none. Catches a portfolio that
    interrupts methods without telling them their deadline (the search would see None)."""
    import verifier
    from verifier._budget import seconds_left

    seen = []
    honest = KarySearch._start
    monkeypatch.setattr(KarySearch, "_start", lambda self: seen.append(seconds_left()) or honest(self))
    kary_search.kary_search.cache_clear()
    verifier.epsilon(mechanism="rr", k=10, epsilon0=0.5, scheme="shuffle", users=9, neighboring="replace_one", delta=1e-6,
                     methods=["shuffle-rr-exact"], time_budget=120)
    assert seen and all(left is not None and 0 < left <= 120 for left in seen)


@pytest.mark.slow
def test_ten_symbols_at_twenty_users_and_a_small_eps0_are_exact():
    """Done-when 2 at its hardest cell class: k = 10, n = 20, ε0 = 0.3, δ = 1e-6, where every other user
    reports uniformly with probability 0.97 and the partial blanket prunes little (about 2 min of CPU, 6 GB).
    With no deadline the search splits every family above δ: the ends meet within 1e-6, inside the
    independent [one-symbol LOWER, blanket UPPER] (0.1276 and 0.1280 there). Catches a search that stops
    short of the leaves (the old limits left it 1.6e-4 wide)."""
    bracket = KarySearch(0.3, 10, 20).epsilon(1e-6)
    assert bracket.upper - bracket.lower <= 1e-6 * bracket.lower
    assert max(p.epsilon_lower(1e-6) for p in (OneSymbolPair(0.3, 10, 20, h) for h in ("z", "x"))) <= bracket.upper
    assert bracket.upper <= BlanketBound(0.3, 10, 20).epsilon_upper(1e-6)


def test_an_earlier_bound_is_reused_only_at_a_larger_ratio():
    """node_delta reuses a family's bound found at E' for a pruning test at E only when E' <= E (δ(E) does
    not increase with E). k = 5, n = 6, ε0 = 1, the family (c_0, c_1) = (2, 1) with two users to place:
    bounded at e^0.5 first, then asked at e^0.2 it is computed again (the larger value, equal to a fresh
    search's), and asked at e^0.8 it returns the e^0.5 value. Catches the reuse in the wrong direction
    (an UPPER bound at a larger E is below δ at a smaller one)."""
    node = Node(2, 1, (), 2)
    search = KarySearch(1.0, 5, 6)
    at_half = search.node_delta(node, math.exp(0.5), keep_above=1.0)
    at_fifth = search.node_delta(node, math.exp(0.2), keep_above=1.0)
    assert at_fifth == KarySearch(1.0, 5, 6).node_delta(node, math.exp(0.2)) > at_half
    assert search.node_delta(node, math.exp(0.8), keep_above=1.0) == at_fifth
