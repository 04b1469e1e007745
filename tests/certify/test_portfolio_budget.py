"""The portfolio runs cheap methods first and starts expensive ones only while the question is open
and the time budget lasts; estimates are collected beside the bounds. Fake methods make the
running order observable."""

import time

import pytest

import verifier.certify.portfolio as portfolio
from verifier._types import Bound, Direction, Estimate, Quantity, Side
from verifier.certify.method import Guarantee, Method
from verifier.certify.portfolio import collect_bounds
from verifier.errors import AccuracyNotReachable, InvalidArgument, NotApplicable
from verifier.pairs import Gaussian
from verifier.schemes import Single

SCHEME = Single(Gaussian(1.0))
BOTH = (Direction.ADD, Direction.REMOVE)


class Fake(Method):
    citation = "test double"

    def __init__(self, name, cost, upper=None, lower=None, sleep=0.0, returns=frozenset({Guarantee.EXACT}), refuse=False):
        self.name, self.cost, self.upper, self.lower, self.sleep, self.returns, self.refuse = name, cost, upper, lower, sleep, returns, refuse
        self.calls = 0

    def supports(self, scheme):
        return True

    def delta_bounds(self, scheme, epsilon, direction):
        self.calls += 1
        if self.refuse == "fail":
            raise AccuracyNotReachable("grid too coarse")
        if self.refuse:
            raise NotApplicable("theorem conditions fail")
        time.sleep(self.sleep)
        out = []
        if self.upper is not None:
            out.append(Bound(self.upper, Side.UPPER, direction, Quantity.DELTA, epsilon, self.name, self.citation))
        if self.lower is not None:
            out.append(Bound(self.lower, Side.LOWER, direction, Quantity.DELTA, epsilon, self.name, self.citation))
        return out

    def epsilon_bounds(self, scheme, delta, direction):
        return []

    def delta_estimates(self, scheme, epsilon, direction, *, seconds=None):
        self.allowances = getattr(self, "allowances", []) + [seconds]
        return [Estimate(0.5, 0.4, 0.6, 0.95, 100, direction, Quantity.DELTA, epsilon, self.name)]


@pytest.fixture
def registry(monkeypatch):
    def install(*methods):
        monkeypatch.setattr(portfolio, "methods_for", lambda scheme: sorted(methods, key=lambda m: m.cost))
        return methods

    return install


def upper_below(delta):
    return lambda bounds: any(b.side is Side.UPPER and b.value <= delta for b in bounds)


def test_expensive_methods_do_not_run_once_settled(registry):
    cheap, costly = registry(Fake("cheap", 0, upper=0.1), Fake("costly", 3, upper=0.05))
    got = collect_bounds(SCHEME, Quantity.DELTA, 1.0, BOTH, settled=upper_below(0.2))
    assert got.ran == ("cheap",) and costly.calls == 0
    assert "costly" in got.skipped[0] and "already decided" in got.skipped[0]
    assert got.brackets[Direction.ADD].upper == 0.1


def test_expensive_methods_run_while_open_and_tighten_the_bracket(registry):
    registry(Fake("cheap", 0, upper=0.3, lower=0.01), Fake("costly", 3, upper=0.05, lower=0.02))
    got = collect_bounds(SCHEME, Quantity.DELTA, 1.0, BOTH, settled=upper_below(0.06))
    assert got.ran == ("cheap", "costly")
    assert (got.brackets[Direction.REMOVE].lower, got.brackets[Direction.REMOVE].upper) == (0.02, 0.05)


def test_time_budget_stops_starting_costly_methods_but_closed_forms_always_run(registry):
    # a budget that a method of no work cannot spend even on a loaded machine (0.01 s failed under
    # xdist at load 10: 'slow' was never started), and a 'slow' method that always outlasts it
    slow, free, costly = registry(Fake("slow", 1, upper=0.3, sleep=2.0), Fake("free", 0, upper=0.4), Fake("costly", 2, upper=0.1))
    got = collect_bounds(SCHEME, Quantity.DELTA, 1.0, BOTH, time_budget=0.5)
    assert got.ran == ("free", "slow")  # slow started before the budget was spent
    assert costly.calls == 0 and "time budget" in got.skipped[0]
    got = collect_bounds(SCHEME, Quantity.DELTA, 1.0, BOTH, time_budget=0.0)
    assert got.ran == ("free",)


def test_estimates_are_collected_but_never_enter_the_bracket(registry):
    registry(Fake("mc", 3, returns=frozenset({Guarantee.ESTIMATE})))
    got = collect_bounds(SCHEME, Quantity.DELTA, 1.0, BOTH)
    assert len(got.estimates) == 2 and got.bounds == ()
    assert got.brackets[Direction.ADD].lower <= 0.0 and got.brackets[Direction.ADD].upper == float("inf")


def test_declining_methods_are_listed_and_bad_budget_rejected(registry):
    registry(Fake("refuses", 0, refuse=True))
    got = collect_bounds(SCHEME, Quantity.DELTA, 1.0, (Direction.ADD,))
    assert got.skipped == ("refuses (add): theorem conditions fail",)
    with pytest.raises(InvalidArgument, match="time_budget"):
        collect_bounds(SCHEME, Quantity.DELTA, 1.0, BOTH, time_budget=-1)
    with pytest.raises(InvalidArgument, match="method"):
        collect_bounds(SCHEME, Quantity.DELTA, 1.0, BOTH, only=["nope"])


def test_failing_methods_are_recorded_and_the_others_still_count(registry):
    registry(Fake("fails", 0, refuse="fail"), Fake("works", 1, upper=0.2))
    got = collect_bounds(SCHEME, Quantity.DELTA, 1.0, (Direction.ADD,))
    assert got.ran == ("fails", "works") and got.brackets[Direction.ADD].upper == 0.2
    assert got.skipped == ("fails (add) failed: AccuracyNotReachable: grid too coarse",)


def test_a_method_still_running_when_the_budget_runs_out_is_interrupted(registry):
    registry(Fake("free", 0, upper=0.4), Fake("hangs", 2, upper=0.1, sleep=30.0))
    got = collect_bounds(SCHEME, Quantity.DELTA, 1.0, BOTH, time_budget=0.2)
    assert got.ran == ("free", "hangs")
    assert [b.method for b in got.bounds] == ["free", "free"]  # the interrupted calls gave nothing
    assert got.skipped[0] == "hangs (add): interrupted, time budget of 0.2 s spent"
    assert got.skipped[1] == "hangs (remove): not run, time budget of 0.2 s spent"


def test_monte_carlo_sample_count_follows_the_time_allowance():
    """Under a time allowance the sample count is DRAWS_PER_SECOND·seconds / draws per sample, rounded
    down to a power of two and clipped; without one, the fixed DRAW_BUDGET rule (issue 17: evidence
    scales to the rigorous methods' time instead of a fixed count)."""
    from verifier.certify.methods.montecarlo import (
        DRAWS_PER_SECOND,
        MAX_SAMPLES,
        MIN_SAMPLES,
        MIN_TIMED_SAMPLES,
        sample_count,
    )
    from verifier.pairs import Gaussian
    from verifier.schemes import Poisson

    scheme = Poisson(Gaussian(1.0), 0.01, 1000)  # 1000 draws per sample
    assert sample_count(scheme) == max(MIN_SAMPLES, min(MAX_SAMPLES, (1 << 23) // 1000))
    assert sample_count(scheme, 0.0) == MIN_TIMED_SAMPLES
    allowed = int(0.1 * DRAWS_PER_SECOND) // 1000
    got = sample_count(scheme, 0.1)
    assert got <= allowed < 2 * got and got & (got - 1) == 0
    assert sample_count(scheme, 1e6) == MAX_SAMPLES


def test_estimates_get_a_share_of_the_rigorous_time(registry):
    """Monte Carlo after a rigorous method is given ESTIMATE_SHARE of its time (at least the floor,
    split over the directions); alone, it gets no allowance and uses its own default."""
    _, mc = registry(Fake("slow", 0, upper=0.3, sleep=0.2), Fake("mc", 3, returns=frozenset({Guarantee.ESTIMATE})))
    collect_bounds(SCHEME, Quantity.DELTA, 1.0, BOTH)
    first, second = mc.allowances
    assert portfolio.ESTIMATE_SHARE * 0.4 / 2 <= first <= second  # both directions' 0.2 s sleeps ran first
    _, alone = registry(Fake("none", 0, refuse=True), Fake("mc", 3, returns=frozenset({Guarantee.ESTIMATE})))
    collect_bounds(SCHEME, Quantity.DELTA, 1.0, BOTH)
    assert alone.allowances == [None, None]
    assert portfolio._estimate_allowance(0.001, 2) == portfolio.ESTIMATE_FLOOR_SECONDS / 2
