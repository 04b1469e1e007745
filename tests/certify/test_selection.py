"""The exponential mechanism and permute-and-flip (issue 40): claims decided against the worst score
instance found by exact enumeration of the mechanisms' output laws (mpmath at 40 digits for the
exponential mechanism, exact rationals for permute-and-flip at ε = 2 ln 2, where every coin
e^{ε(u − u*)/2} of integer scores is a power of 1/2) and, for permute-and-flip, against the Laplace
pair's closed form in mpmath (the worst instance: proofs/permute_and_flip.py), never against
verifier's own formulas."""

from __future__ import annotations

import itertools
import json
import math
from fractions import Fraction

import mpmath
import numpy as np
import pytest

from verifier._types import Direction
from verifier.adapters import from_dp_event
from verifier.certify.claim import parse_claim
from verifier.certify.verdict import Verdict, certify
from verifier.cli import main
from verifier.errors import InconsistentBounds, InvalidArgument
from verifier.pairs import Laplace, RandomizedResponse
from verifier.pairs.bounded_range import BoundedRange

MPMATH_DPS = 40  # working precision of this module's tests (tests/conftest.py)


# ---- independent references: the mechanisms' output laws, enumerated -----------------------------


def em_law(scores, eps) -> list:
    """Exponential mechanism, weights e^{ε u/2} (Δ = 1), in mpmath."""
    weights = [mpmath.e ** (mpmath.mpf(eps) * u / 2) for u in scores]
    total = mpmath.fsum(weights)
    return [w / total for w in weights]


def pf_law(scores) -> list[Fraction]:
    """Permute-and-flip at ε = 2 ln 2 (coins 2^{u − u*}, integer scores), by enumerating every order."""
    best = max(scores)
    keep = [Fraction(1, 2 ** (best - u)) for u in scores]
    orders = list(itertools.permutations(range(len(scores))))
    law = [Fraction(0)] * len(scores)
    for order in orders:
        reach = Fraction(1)
        for r in order:
            law[r] += reach * keep[r] / len(orders)
            reach *= 1 - keep[r]
    return law


def hockey(p, q, gamma):
    return sum(max(0, a - gamma * b) for a, b in zip(p, q))


def em_sup_delta(eps: float, x: float) -> mpmath.mpf:
    """The largest δ(x) over two-candidate instances (a, 0) against (a + 1, −1), both orders, by a
    golden-section search over a refined on a grid (each instance's law enumerated)."""
    gamma = mpmath.e ** mpmath.mpf(x)

    def value(a):
        p, q = em_law([a, 0], eps), em_law([a + 1, -1], eps)
        return max(hockey(p, q, gamma), hockey(q, p, gamma))

    grid = [mpmath.mpf(-12) + i * mpmath.mpf(24) / 400 for i in range(401)]
    a = max(grid, key=value)
    lo, hi = a - mpmath.mpf(24) / 400, a + mpmath.mpf(24) / 400
    golden = (mpmath.sqrt(5) - 1) / 2
    for _ in range(120):
        c, d = hi - golden * (hi - lo), lo + golden * (hi - lo)
        if value(c) > value(d):
            hi = d
        else:
            lo = c
    return value((lo + hi) / 2)


def em_truth_epsilon(eps: float, delta: float) -> float:
    """ε(δ) of the worst two-candidate instance: the root of em_sup_delta(ε', ·) = δ (bisection)."""
    lo, hi = 0.0, eps
    for _ in range(40):
        mid = (lo + hi) / 2
        if em_sup_delta(eps, mid) > delta:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


# ---- the exponential mechanism ---------------------------------------------------------------------


@pytest.mark.parametrize("eps", [0.3, 1.0, 4.0])
@pytest.mark.parametrize("x", [-0.5, 0.0, 0.2, 0.6])
def test_bounded_range_pair_is_the_sup_of_two_candidate_instances(eps, x):
    """Catches a pair whose curve is RR(ε)'s (too high: above the sup) or BR at ε/2 (too low)."""
    x = x * eps
    truth = em_sup_delta(eps, x)
    got = BoundedRange(eps).delta(x, Direction.REMOVE)
    assert abs(truth - got.lower) <= 1e-12 * max(truth, 1e-300) + 1e-15 and got.lower <= got.upper


def test_no_three_candidate_instance_exceeds_the_bounded_range_pair():
    """Random score instances with three and four candidates (each score moved by at most 1) stay
    below the pair, in both orders; catches a dominating pair built for two candidates only."""
    rng = __import__("numpy").random.default_rng(40)
    pair = BoundedRange(1.0)
    for _ in range(300):
        m = int(rng.integers(3, 5))
        base = list(rng.uniform(-3, 3, m))
        moved = [u + float(d) for u, d in zip(base, rng.uniform(-1, 1, m))]
        p, q = em_law(base, 1.0), em_law(moved, 1.0)
        for x in (0.0, 0.3, 0.8):
            gamma = mpmath.e ** mpmath.mpf(x)
            assert max(hockey(p, q, gamma), hockey(q, p, gamma)) <= pair.delta(x, Direction.REMOVE).upper + 1e-15


@pytest.mark.parametrize(("eps", "delta"), [(1.0, 1e-3)])
def test_certify_decides_exponential_claims_one_percent_either_side(eps, delta):
    truth = em_truth_epsilon(eps, delta)
    claim = {"mechanism": {"name": "exponential", "epsilon": eps}, "scheme": {"name": "single"}, "delta": delta}
    assert certify(parse_claim({**claim, "epsilon": 1.01 * truth})).verdict is Verdict.CERTIFIED
    assert certify(parse_claim({**claim, "epsilon": 0.99 * truth})).verdict is Verdict.VIOLATED


def test_composed_exponential_sits_between_its_member_and_the_dominating_pair():
    """Ten runs: the LOWER end is the ten-fold composition of the instance RR(ε/2) (enumerated as a
    binomial), the UPPER end at or above it and below the ε-DP bound (RR(ε) composed)."""
    eps, times, x = 0.5, 10, 1.0
    outcome = certify(parse_claim({"mechanism": {"name": "exponential", "epsilon": eps}, "scheme": {"name": "composed", "times": times},
                                   "epsilon": x, "delta": 1e-6}))
    e0 = mpmath.mpf(eps) / 2
    hi, lo = mpmath.e ** e0 / (1 + mpmath.e ** e0), 1 / (1 + mpmath.e ** e0)
    member = mpmath.fsum(mpmath.binomial(times, j) * max(0, hi ** j * lo ** (times - j) - mpmath.e ** x * lo ** j * hi ** (times - j))
                         for j in range(times + 1))
    bracket = outcome.delta.combined
    assert abs(bracket.lower - member) <= 1e-9 * member
    e0 = mpmath.mpf(eps)
    hi, lo = mpmath.e ** e0 / (1 + mpmath.e ** e0), 1 / (1 + mpmath.e ** e0)
    pure = mpmath.fsum(mpmath.binomial(times, j) * max(0, hi ** j * lo ** (times - j) - mpmath.e ** x * lo ** j * hi ** (times - j))
                       for j in range(times + 1))
    assert member <= bracket.upper <= pure


def test_composed_exponential_epsilon_is_below_the_pure_dp_composition():
    """ε(1e-3) of two runs at ε = 1: the UPPER end (the bounded-range pair composed) lies below
    RR(1) composed twice, the ε-DP bound (solved here in mpmath: 1.9977), and above the LOWER end.
    Catches the search stopping at max_loss, an EXACT method that is exact only at δ = 0 and
    gives ε(δ) <= ε(0) = 2 elsewhere (the docs' em3-rdp.json read [1.49996, 3.0] that way)."""
    from verifier.certify.methods.selection import SelectionMethod

    claim = parse_claim({"mechanism": {"name": "exponential", "epsilon": 1.0}, "scheme": {"name": "composed", "times": 2},
                         "epsilon": 1.0, "delta": 1e-3})
    found = {b.side.value: b.value for b in SelectionMethod().epsilon_bounds(claim.model, 1e-3, Direction.REMOVE)}
    hi, lo = mpmath.e / (1 + mpmath.e), 1 / (1 + mpmath.e)

    def rr_twice(x):
        return mpmath.fsum(mpmath.binomial(2, j) * max(0, hi ** j * lo ** (2 - j) - mpmath.e ** x * lo ** j * hi ** (2 - j)) for j in range(3))

    pure = mpmath.findroot(lambda x: rr_twice(x) - mpmath.mpf("1e-3"), (1.9, 1.99999), solver="anderson")
    assert 1.99 < pure < 2
    assert found["lower"] <= found["upper"] < pure


# ---- permute-and-flip ------------------------------------------------------------------------------

_PF_EPS = 2 * math.log(2)


def _pf_instances(max_m: int = 3, top: int = 2):
    for m in range(2, max_m + 1):
        for base in itertools.product(range(top + 1), repeat=m):
            for shift in itertools.product((-1, 0, 1), repeat=m):
                yield pf_law(base), pf_law([u + d for u, d in zip(base, shift)])


def test_permute_and_flip_law_enumeration_matches_the_two_candidate_laplace_threshold():
    """Two candidates, gap s: P(candidate 1) = 1 − 2^{−s}/2 for s >= 0 (the Laplace CDF, proofs step 5)."""
    for s in range(4):
        assert pf_law([s, 0])[0] == 1 - Fraction(1, 2 ** s) / 2


def laplace_delta(x, eps0) -> mpmath.mpf:
    """δ(x) of the Laplace pair with Δ/b = eps0 in closed form (Laplace(Δ, b) against Laplace(0, b),
    the set {loss > x}), in mpmath; the same for both orders."""
    x, eps0 = mpmath.mpf(x), mpmath.mpf(eps0)
    if x >= eps0:
        return mpmath.mpf(0)
    return 1 - mpmath.e ** x if x <= -eps0 else 1 - mpmath.e ** ((x - eps0) / 2)


def laplace_epsilon(delta, eps0) -> mpmath.mpf:
    """The root of laplace_delta(·, eps0) = delta, 0 < delta < 1 − e^{−eps0/2} (bisection in mpmath)."""
    lo, hi = mpmath.mpf(0), mpmath.mpf(eps0)
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if laplace_delta(mid, eps0) > delta else (lo, mid)
    return (lo + hi) / 2


def _pf_bracket(eps0: float, x: float, times: int = 1):
    scheme = {"name": "composed", "times": times} if times > 1 else {"name": "single"}
    claim = {"mechanism": {"name": "permute_and_flip", "epsilon": eps0}, "scheme": scheme, "epsilon": x, "delta": 0.5}
    return certify(parse_claim(claim)).delta.combined


def enumerated_instances_stay_below_the_upper_end() -> bool:
    """Every instance with up to three candidates (scores 0..2, each moved by at most 1, exact
    rationals at ε = 2 ln 2) has δ(x) at or below certify's UPPER end, at x in {−0.5, 0, 0.25, 0.5, 1}."""
    instances = list(_pf_instances())
    for x in (-0.5, 0.0, 0.25, 0.5, 1.0):
        gamma = Fraction(math.exp(x)) if x else Fraction(1)
        best = max(max(hockey(p, q, gamma), hockey(q, p, gamma)) for p, q in instances)
        if float(best) > _pf_bracket(_PF_EPS, x).upper:
            return False
    return True


PF_CASES = [(1.0, 0.05), (1.0, 0.3), (0.3, 0.01), (4.0, 1e-3)]


def decides_permute_and_flip_one_percent_either_side() -> bool:
    """One run: the truth ε(δ) is the Laplace pair's (the worst instance: proofs/permute_and_flip.py
    above, the two-candidate thresholds below), from its closed form in mpmath; a claim at 1.01 ε(δ)
    must be CERTIFIED and one at 0.99 ε(δ) VIOLATED."""
    for eps0, delta in PF_CASES:
        truth = float(laplace_epsilon(delta, eps0))
        claim = {"mechanism": {"name": "permute_and_flip", "epsilon": eps0}, "scheme": {"name": "single"}, "delta": delta}
        if certify(parse_claim({**claim, "epsilon": 1.01 * truth})).verdict is not Verdict.CERTIFIED:
            return False
        if certify(parse_claim({**claim, "epsilon": 0.99 * truth})).verdict is not Verdict.VIOLATED:
            return False
    return True


def test_permute_and_flip_enumerated_instances_stay_below_the_upper_end_and_attain_it():
    """The upper end is sound on every enumerated instance, and at x = 0 an instance attains it: the
    largest δ(0) is exactly 1/2 = 1 − e^{−ε/2} at ε = 2 ln 2 (the Laplace closed form)."""
    assert enumerated_instances_stay_below_the_upper_end()
    best = max(max(hockey(p, q, 1), hockey(q, p, 1)) for p, q in _pf_instances())
    bracket = _pf_bracket(_PF_EPS, 0.0)
    assert best == Fraction(1, 2) and bracket.lower <= 0.5 <= bracket.upper and bracket.upper - bracket.lower < 1e-15


def test_certify_decides_permute_and_flip_claims_one_percent_either_side():
    assert decides_permute_and_flip_one_percent_either_side()


def test_certify_decides_permute_and_flip_claims_around_the_enumerated_truth():
    """δ(0) = 1/2 at ε = 2 ln 2 is attained by an enumerated instance and bounds every one of them:
    1% below is VIOLATED, 1% above CERTIFIED."""
    claim = {"mechanism": {"name": "permute_and_flip", "epsilon": _PF_EPS}, "scheme": {"name": "single"}, "epsilon": 0.0}
    assert certify(parse_claim({**claim, "delta": 0.99 * 0.5})).verdict is Verdict.VIOLATED
    assert certify(parse_claim({**claim, "delta": 1.01 * 0.5})).verdict is Verdict.CERTIFIED


@pytest.mark.parametrize(("eps0", "x"), [(1.0, 0.0), (1.0, 0.5), (0.3, 0.1), (4.0, 3.0), (1.0, -0.4)])
def test_permute_and_flip_one_run_bracket_is_the_laplace_closed_form(eps0, x):
    bracket = _pf_bracket(eps0, x)
    truth = laplace_delta(x, eps0)
    assert bracket.lower <= truth <= bracket.upper and bracket.upper - bracket.lower <= 1e-15 * max(truth, 1e-300)


def composed_laplace_delta(x, eps0) -> mpmath.mpf:
    """δ(x) of the Laplace pair composed twice: E_{Y ~ Laplace(eps0, 1)}[δ_1(x − ℓ(Y))] with
    ℓ(y) = |y| − |y − eps0| (condition on the first run), by quadrature between the kinks."""
    x, eps0 = mpmath.mpf(x), mpmath.mpf(eps0)
    cuts = sorted({mpmath.mpf(0), eps0} | {c for c in (x / 2, x / 2 + eps0) if 0 < c < eps0})
    middle = mpmath.quad(lambda y: mpmath.e ** (-abs(y - eps0)) / 2 * laplace_delta(x - (2 * y - eps0), eps0), cuts)
    return mpmath.e ** (-eps0) / 2 * laplace_delta(x + eps0, eps0) + laplace_delta(x - eps0, eps0) / 2 + middle


@pytest.mark.parametrize(("eps0", "x"), [(1.0, 0.5), (0.5, 0.2)])
def test_two_permute_and_flip_runs_sit_below_the_composed_laplace_pair(eps0, x):
    """Composed, the UPPER end is the composed Laplace pair (quadrature reference, 1e-12), below the
    composed RR(ε) (what the UPPER end was before the proof); the LOWER end is the member's."""
    bracket = _pf_bracket(eps0, x, times=2)
    reference = composed_laplace_delta(x, eps0)
    assert reference <= bracket.upper <= reference * (1 + 1e-12)
    assert bracket.lower < bracket.upper
    e = mpmath.e ** mpmath.mpf(eps0)
    hi, lo = e / (1 + e), 1 / (1 + e)
    rr2 = mpmath.fsum(mpmath.binomial(2, j) * max(0, hi ** j * lo ** (2 - j) - mpmath.e ** x * lo ** j * hi ** (2 - j)) for j in range(3))
    assert bracket.upper < rr2


@pytest.mark.parametrize(
    ("mutant", "check"),
    [
        (lambda node: RandomizedResponse(node.epsilon), decides_permute_and_flip_one_percent_either_side),  # the old, loose UPPER
        (lambda node: Laplace(2.0, node.epsilon), enumerated_instances_stay_below_the_upper_end),  # noise scale 2β: unsound
    ],
    ids=["rr-upper", "laplace-scale-2beta"],
)
def test_permute_and_flip_mutants_fail_a_check(monkeypatch, mutant, check):
    """A dominating pair that is too loose (RR(ε)) leaves claims 1% above the truth INCONCLUSIVE; one
    with the wrong constant (Laplace with Δ/b = ε/2) is exceeded by an enumerated instance (and by
    the supremum pair: certify reports the inconsistency)."""
    from verifier.schemes import Selection

    monkeypatch.setattr(Selection, "dominating", property(mutant))
    try:
        holds = check()
    except InconsistentBounds:
        holds = False
    assert not holds


def test_permute_and_flip_member_is_an_enumerated_instance():
    """The composed LOWER side runs RR(ln(2e^{ε/2} − 1)): at ε = 2 ln 2 that is RR(ln 3), the
    instance with gap −1 against +1 (laws (1/4, 3/4) and (3/4, 1/4))."""
    from verifier.schemes import Selection

    member = Selection("permute_and_flip", _PF_EPS).member
    assert pf_law([0, 1]) == [Fraction(1, 4), Fraction(3, 4)] and pf_law([1, 0]) == [Fraction(3, 4), Fraction(1, 4)]
    assert member.epsilon0 <= math.log(3) and math.log(3) - member.epsilon0 < 1e-15


# ---- reading them: claim files, dp_accounting events, one-line refusals ----------------------------


def _event(name: str, **fields) -> dict:
    return {"module_name": "dp_accounting.dp_event", "class_name": name, **fields}


def test_dp_events_read_as_selection_claims():
    claim = from_dp_event(_event("SelfComposedDpEvent", event=_event("ExponentialMechanismDpEvent", epsilon=0.5), count=4), epsilon=1.0, delta=1e-5)
    assert claim.mechanism == {"name": "exponential", "epsilon": 0.5} and claim.scheme == {"name": "composed", "times": 4}
    claim = from_dp_event(_event("PermuteAndFlipDpEvent", epsilon=1.0), epsilon=1.0, delta=1e-5)
    assert claim.mechanism == {"name": "permute_and_flip", "epsilon": 1.0}


@pytest.mark.parametrize(
    ("event", "named"),
    [
        (_event("PoissonSampledDpEvent", sampling_probability=0.1, event=_event("ExponentialMechanismDpEvent", epsilon=1.0)), "poisson"),
        (_event("PermuteAndFlipDpEvent", epsilon=-1.0), "event.epsilon"),
        (_event("ExponentialMechanismDpEvent", epsilon="one"), "event.epsilon"),
        (_event("ExponentialMechanismDpEvent"), "event.epsilon"),
    ],
)
def test_malformed_selection_events_exit_2_with_one_line(tmp_path, capsys, event, named):
    path = tmp_path / "event.json"
    path.write_text(json.dumps(event))
    code = main(["certify", "--dp-event", str(path), "--epsilon", "1", "--delta", "1e-5"])
    err = capsys.readouterr().err
    assert code == 2 and named in err and len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize("mechanism", [{"name": "exponential", "epsilon": 0}, {"name": "permute_and_flip"}, {"name": "exponential", "epsilon": 1, "sigma": 1}])
def test_malformed_selection_claims_are_rejected(mechanism):
    with pytest.raises(InvalidArgument):
        parse_claim({"mechanism": mechanism, "scheme": {"name": "single"}, "epsilon": 1.0, "delta": 1e-5})


def test_permute_and_flip_modelling_names_the_laplace_upper_pair():
    """The certificate's modelling text states the pair the UPPER end uses: the Laplace pair since
    proofs/permute_and_flip.py (it said RR(eps), the old pure-DP pair, after the UPPER end moved)."""
    claim = parse_claim({"mechanism": {"name": "permute_and_flip", "epsilon": 1.0}, "scheme": {"name": "composed", "times": 2},
                         "epsilon": 1.0, "delta": 0.2})
    assert "UPPER from the Laplace pair" in claim.modelling and "RR(eps)" not in claim.modelling


@pytest.mark.parametrize(("eps0", "verdicts"), [(1e-300, {Verdict.CERTIFIED}), (1e300, {Verdict.VIOLATED, Verdict.INCONCLUSIVE})])
def test_composed_permute_and_flip_at_extreme_epsilon_is_decided_not_refused(eps0, verdicts):
    """The member's RR(ln(2e^{ε/2} − 1)) rounded down was negative at ε = 1e-300 (the ball of 2e^{ε/2} − 1
    reaches below 1) and −inf at ε = 1e300 (overflow), so three composed runs of a valid selection exited 2
    naming an "epsilon0" the claim never gave. Written as ε/2 + log1p(1 − e^{−ε/2}) it is positive and
    finite (about >= ε/2), and the member is still an instance: below ln(2e^{ε/2} − 1), a garbling of it."""
    claim = {"mechanism": {"name": "permute_and_flip", "epsilon": eps0}, "scheme": {"name": "composed", "times": 3},
             "epsilon": 0.5, "delta": 1e-6}
    assert certify(parse_claim(claim)).verdict in verdicts
    from verifier.schemes import Selection

    member = Selection("permute_and_flip", eps0).member
    assert eps0 / 2 * (1 - 1e-15) <= member.epsilon0 < math.inf


def _adaptive_two_runs(x: float) -> float:
    """The largest δ(x) of two permute-and-flip runs at ε = 2 ln 2 over every adaptive choice among the
    enumerated instances (both orders): the first run's instance, then the second's chosen from its
    output. H_γ of the pair of transcripts is Σ_o P₁(o)·H_{γQ₁(o)/P₁(o)}(second run), so the best second
    instance is picked output by output (the Bellman step over a finite family), in binary64."""
    laws = [pair for p, q in _pf_instances() for pair in ((p, q), (q, p))]
    big_p, big_q = np.zeros((len(laws), 3)), np.zeros((len(laws), 3))
    for i, (p, q) in enumerate(laws):
        big_p[i, :len(p)], big_q[i, :len(q)] = [float(v) for v in p], [float(v) for v in q]
    with np.errstate(divide="ignore", invalid="ignore"):
        ratios = np.where(big_p > 0, math.exp(x) * big_q / big_p, 0.0).ravel()
    best_second = np.maximum(big_p[None] - ratios[:, None, None] * big_q[None], 0).sum(2).max(1).reshape(big_p.shape)
    return float((big_p * best_second).sum(1).max())


@pytest.mark.parametrize("x", [0.0, 0.5, 1.0])
def test_adaptive_two_runs_stay_below_the_composed_upper_end(x):
    """Two runs, the second's scores chosen from the first's output (every enumerated instance of up to
    three candidates at ε = 2 ln 2): the adaptive worst case stays below the composed Laplace pair
    (Zhu, Dong & Wang 2022, Thm 10 applied to proofs/permute_and_flip.py's dominance). At x = 0 it is
    9/16, above the best fixed instance run twice (25/48) and the LOWER end (the member, 1/2): an
    UPPER end taken from a fixed instance composed (mutant: ``dominating`` = ``member``) is refuted."""
    bracket = _pf_bracket(_PF_EPS, x, times=2)
    adaptive = _adaptive_two_runs(x)
    assert adaptive <= bracket.upper + 1e-12
    if x == 0.0:
        assert abs(adaptive - 9 / 16) < 1e-12 and bracket.lower < adaptive


def test_adaptive_two_runs_refute_a_fixed_instance_upper_end(monkeypatch):
    from verifier.schemes import Selection

    monkeypatch.setattr(Selection, "dominating", property(lambda node: node.member))
    try:
        upper = _pf_bracket(_PF_EPS, 0.0, times=2).upper
    except InconsistentBounds:
        return
    assert upper < _adaptive_two_runs(0.0)
