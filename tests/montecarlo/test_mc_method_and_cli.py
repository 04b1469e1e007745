"""The "montecarlo" certification method and the `verifier mc` command."""

import json

import pytest

from verifier._types import Direction, Estimate, Quantity
from verifier.certify.method import Guarantee
from verifier.certify.methods.montecarlo import MAX_SAMPLES, MIN_SAMPLES, MonteCarlo, draws_per_sample
from verifier.certify.portfolio import collect_bounds
from verifier.certify.registry import all_methods
from verifier.cli import main
from verifier.pairs import Gaussian, Laplace, RandomizedResponse
from verifier.schemes import Allocation, Composed, Poisson, Single


def test_registered_as_an_estimate_only_method():
    method = next(m for m in all_methods() if m.name == "montecarlo")
    assert method.returns == frozenset({Guarantee.ESTIMATE})
    assert method.sides() == frozenset()
    for scheme in (Single(Laplace(1.0)), Composed(Single(Gaussian(1.0)), 3), Poisson(Gaussian(1.0), 0.1, 3), Allocation(RandomizedResponse(1.0), 4, k=2)):
        assert method.supports(scheme)
        assert method.delta_bounds(scheme, 1.0, Direction.ADD) == []
        assert method.epsilon_bounds(scheme, 1e-5, Direction.ADD) == []


def test_estimates_contain_the_exact_value_and_reach_the_portfolio():
    pair = Gaussian(1.5)
    collected = collect_bounds(Single(pair), Quantity.DELTA, 0.5, [Direction.ADD, Direction.REMOVE], only=["montecarlo"])
    assert collected.bounds == ()
    assert len(collected.estimates) == 2
    for est in collected.estimates:
        assert isinstance(est, Estimate) and est.method == "montecarlo" and est.samples == MAX_SAMPLES
        exact = pair.delta(0.5, est.direction)
        assert est.lower <= exact.lower and exact.upper <= est.upper


def test_sample_count_follows_the_cost_of_one_sample():
    assert draws_per_sample(Allocation(Gaussian(1.0), 1000, k=2, epochs=3)) == 500 * 6
    assert draws_per_sample(Composed(Poisson(Gaussian(1.0), 0.1, 10), 4)) == 40
    est = MonteCarlo().delta_estimates(Allocation(Gaussian(1.0), 5000), 0.1, Direction.REMOVE)[0]
    assert MIN_SAMPLES <= est.samples < MAX_SAMPLES


def run(capsys, *argv):
    try:
        status = main(list(argv))
    except SystemExit as exc:  # argparse's usage error (exit 2): `mc` offers no --method (issue 32)
        status = exc.code
    out = capsys.readouterr()
    return status, out.out, out.err


def test_json_for_both_directions_reports_the_maximum(capsys):
    status, out, _ = run(capsys, "mc", "--mechanism", "rr", "--epsilon0", "1", "--scheme", "poisson", "--rate", "0.5",
                         "--steps", "2", "--epsilon", "0.2", "--samples", "20000", "--json", "--no-progress")
    assert status == 0
    payload = json.loads(out)
    per = payload["estimates"]
    assert {e["direction"] for e in per} == {"add", "remove"}
    assert all(e["confidence"] == pytest.approx(0.995) for e in per)  # 0.99 split over two directions
    assert payload["confidence"] == 0.99
    assert payload["upper"] == max(e["upper"] for e in per) and payload["lower"] == max(e["lower"] for e in per)


def test_table_output_and_several_epsilons(capsys):
    status, out, _ = run(capsys, "mc", "--sigma", "2", "--scheme", "composed", "--times", "3", "--epsilon", "0", "--epsilon", "1",
                         "--direction", "add", "--samples", "5000", "--no-progress")
    assert status == 0
    assert "not bounds" in out and len(out.strip().splitlines()) == 4


def test_progress_bar_goes_to_stderr(capsys):
    status, out, err = run(capsys, "mc", "--sigma", "1", "--epsilon", "0.5", "--samples", "3000", "--chunk-size", "1000", "--json", "--progress")
    assert status == 0
    json.loads(out)  # stdout holds only the JSON


@pytest.mark.parametrize(
    "argv, name",
    [
        (["--sigma", "1", "--epsilon", "1", "--samples", "0"], "samples"),
        (["--sigma", "1", "--epsilon", "1", "--confidence", "1"], "confidence"),
        (["--sigma", "-1", "--epsilon", "1"], "sigma"),
        (["--sigma", "1", "--epsilon", "1", "--method", "exact"], "method"),
        (["--sigma", "1", "--epsilon", "1", "--scheme", "poisson", "--rate", "0.1", "--steps", "2", "--importance", "on"], "importance"),
    ],
)
def test_invalid_input_exits_2_naming_the_parameter(capsys, argv, name):
    status, _, err = run(capsys, "mc", *argv)
    assert status == 2 and name in err and len(err.strip().splitlines()) == 1


def test_certificate_carries_the_monte_carlo_evidence(capsys):
    status, out, _ = run(capsys, "certify", "--sigma", "1", "--scheme", "allocation", "--steps", "2", "--epsilon", "1.0",
                         "--delta", "0.07", "--method", "montecarlo", "--json")
    certificate = json.loads(out)
    assert certificate["verdict"] == "INCONCLUSIVE"  # an estimate never decides a verdict
    assert {e["direction"] for e in certificate["estimates"]} == {"add", "remove"}
    exact = {"remove": 5.92065011e-02, "add": 5.01976624e-02}  # notes §7.5
    for e in certificate["estimates"]:
        assert e["lower"] <= exact[e["direction"]] <= e["upper"]
