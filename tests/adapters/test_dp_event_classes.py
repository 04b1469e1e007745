"""Every dp_accounting event class (issue 25): each modelled class gives a bracket that holds an
independent reference (mpmath sums and integrals of the mechanism's own laws, a brute-force count
of tree nodes), each refused class exits 2 with one line naming it. The events are given in their
JSON form (``to_named_tuple()`` as an object), so these run without dp_accounting."""

from __future__ import annotations

import json
import math

import mpmath
import pytest

from verifier._types import Direction
from verifier.adapters import from_dp_event
from verifier.adapters.dp_event import MODELLED, REFUSED
from verifier.certify.verdict import Verdict, certify
from verifier.cli import main
from verifier.errors import InvalidArgument

MPMATH_DPS = 40  # working precision of this module's tests (tests/conftest.py)


def ev(name: str, **fields) -> dict:
    return {"module_name": "dp_accounting.dp_event", "class_name": name, **fields}


def bracket(event: dict, epsilon: float, neighboring: str = "add_or_remove", only=("exact",)):
    outcome = certify(from_dp_event(event, epsilon=epsilon, delta=0.5, neighboring=neighboring), only=list(only))
    return outcome.delta.combined


def hockey(p, q, epsilon) -> mpmath.mpf:
    """max of the two directions of Σ (p − e^ε q)_+ over a finite or truncated support."""
    k = mpmath.e ** mpmath.mpf(epsilon)
    return max(mpmath.fsum(max(0, a - k * b) for a, b in zip(p, q)), mpmath.fsum(max(0, b - k * a) for a, b in zip(p, q)))


@pytest.mark.parametrize("epsilon", [0.0, 0.8, 2.0])
def test_randomized_response_by_noise_level(epsilon):
    """With probability 1 − p the true bucket, else a uniform one of k (dp_accounting's definition),
    records 0 and 1: the laws summed outcome by outcome. Catches ε0 = ln((1 − p)/p) (the binary
    formula used for k = 4) and a swapped p/(1 − p)."""
    p, k = mpmath.mpf(0.3), 4
    law = lambda true: [(1 - p) * (y == true) + p / k for y in range(k)]  # noqa: E731
    want = hockey(law(1), law(0), epsilon)
    for neighboring in ("add_or_remove", "replace_one"):
        got = bracket(ev("RandomizedResponseDpEvent", noise_parameter=0.3, num_buckets=4), epsilon, neighboring)
        assert got.lower <= want <= got.upper and got.upper - got.lower < 1e-15


@pytest.mark.parametrize("epsilon", [-0.5, 0.5, 1.9, 2.0])
def test_discrete_laplace(epsilon):
    """pmf tanh(a/2)e^{−a|x|} shifted by C against unshifted, summed over |x| <= 400 (the tail
    beyond is below e^{−200}). Catches a continuous-Laplace stand-in and a lost tanh normalisation."""
    a, c = mpmath.mpf(0.5), 4
    pmf = lambda x: mpmath.tanh(a / 2) * mpmath.e ** (-a * abs(x))  # noqa: E731
    xs = range(-400, 400)
    with mpmath.workdps(40):  # the slack below is for 40 digits; another test module may set fewer globally
        want = hockey([pmf(x - c) for x in xs], [pmf(x) for x in xs], epsilon)
    got = bracket(ev("DiscreteLaplaceDpEvent", noise_parameter=0.5, sensitivity=4), epsilon)
    slack = 1e-35  # mpmath's own rounding at 40 digits (δ(aC) = 0 comes out as ~1e-42)
    assert got.lower - slack <= want <= got.upper + slack and got.upper - got.lower <= 1e-15 * want + 1e-300


def _bisect(f, lo, hi):
    lo, hi = mpmath.mpf(lo), mpmath.mpf(hi)
    for _ in range(80):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if f(mid) * f(lo) > 0 else (lo, mid)
    return lo


@pytest.mark.parametrize("epsilon", [0.0, 0.7, 1.5])
def test_mixture_of_gaussians(epsilon):
    """(Σ p_i N(c_i, σ²), N(0, σ²)) integrated in mpmath, split at the root of the likelihood ratio.
    Catches components given out of order (merged wrongly), the mixture on the wrong side."""
    sens, probs, sigma = [2.0, 0.0, 1.0, 1.0], [0.25, 0.25, 0.25, 0.25], 1.5
    mix = lambda y: mpmath.fsum(w * mpmath.npdf(y, c, sigma) for w, c in zip(probs, sens))  # noqa: E731
    base = lambda y: mpmath.npdf(y, 0, sigma)  # noqa: E731
    want = 0
    for first, second in ((mix, base), (base, mix)):
        loss = lambda y: mpmath.log(first(y) / second(y)) - epsilon  # noqa: E731  (monotone in y)
        gap = lambda y: max(0, first(y) - mpmath.e**epsilon * second(y))  # noqa: E731
        cut = [_bisect(loss, -60, 60)] if loss(-60) * loss(60) < 0 else []
        with mpmath.workdps(20):
            want = max(want, mpmath.quad(gap, [-60, *cut, 60]))
    event = ev("MixtureOfGaussiansDpEvent", standard_deviation=sigma, sensitivities=sens, sampling_probs=probs)
    got = bracket(event, epsilon)
    assert got.lower - 1e-18 <= want <= got.upper + 1e-18 and got.upper - got.lower < 1e-14


def _tree_depth_by_counting(steps: int) -> int:
    """Most completed dyadic intervals [j·2^l + 1, (j + 1)·2^l] ⊆ [1, steps] holding one leaf."""
    return max(
        sum(1 for level in range(steps.bit_length() + 1) if ((leaf - 1) // 2**level + 1) * 2**level <= steps)
        for leaf in range(1, steps + 1)
    )


@pytest.mark.parametrize("step_counts", [1, 3, 4, 7, [5, 10], [16]])
def test_tree_aggregation_is_the_gaussian_of_the_deepest_path(step_counts):
    depth = _tree_depth_by_counting(max(step_counts) if isinstance(step_counts, list) else step_counts)
    claim = from_dp_event(ev("SingleEpochTreeAggregationDpEvent", noise_multiplier=2.0, step_counts=step_counts), epsilon=1.0, delta=0.5)
    sigma, delta_at = mpmath.mpf(2), mpmath.sqrt(depth)  # Gaussian with sensitivity √depth (Steinke 2022, Cor 8)
    want = mpmath.ncdf(delta_at / (2 * sigma) - sigma / delta_at) - mpmath.e * mpmath.ncdf(-delta_at / (2 * sigma) - sigma / delta_at)
    got = certify(claim, only=["exact"]).delta.combined
    assert got.lower <= want <= got.upper


def test_epsilon_delta_event_is_the_approx_dp_pair():
    """Steinke 2022, Cor 24: δ(ε) = δ0 + (1 − δ0)(e^{ε0} − e^ε)/(1 + e^{ε0}) on [−ε0, ε0)."""
    e0, d0, eps = mpmath.mpf(1.0), mpmath.mpf(1e-3), mpmath.mpf(0.4)
    want = d0 + (1 - d0) * (mpmath.e**e0 - mpmath.e**eps) / (1 + mpmath.e**e0)
    got = bracket(ev("EpsilonDeltaDpEvent", epsilon=1.0, delta=1e-3), 0.4)
    assert got.lower <= want <= got.upper


def test_non_private_release_is_violated_at_every_epsilon():
    for event in (ev("NonPrivateDpEvent"), ev("GaussianDpEvent", noise_multiplier=0.0)):
        outcome = certify(from_dp_event(event, epsilon=50.0, delta=0.999))
        assert outcome.verdict is Verdict.VIOLATED and outcome.delta.combined.lower == 1.0


def test_pure_dp_through_events():
    """Done-when 3 from the event side, and the discrete Laplace's ε0 = aC exactly."""
    ten = ev("SelfComposedDpEvent", event=ev("LaplaceDpEvent", noise_multiplier=1.0), count=10)
    assert certify(from_dp_event(ten, epsilon=10.0, delta=0.0)).verdict is Verdict.CERTIFIED
    assert certify(from_dp_event(ten, epsilon=9.99, delta=0.0)).verdict is Verdict.VIOLATED
    dlap = ev("DiscreteLaplaceDpEvent", noise_parameter=0.5, sensitivity=2)
    assert certify(from_dp_event(dlap, epsilon=1.0, delta=0.0)).verdict is Verdict.CERTIFIED
    rr = ev("RandomizedResponseDpEvent", noise_parameter=0.5, num_buckets=2)  # ε0 = ln 3
    assert certify(from_dp_event(rr, epsilon=1.0986, delta=0.0)).verdict is Verdict.VIOLATED


def test_nothing_released():
    for event in (ev("RandomizedResponseDpEvent", noise_parameter=0.0, num_buckets=1),
                  ev("MixtureOfGaussiansDpEvent", standard_deviation=1.0, sensitivities=[0.0], sampling_probs=[1.0]),
                  ev("PoissonSampledDpEvent", sampling_probability=0.0, event=ev("GaussianDpEvent", noise_multiplier=1.0))):
        with pytest.raises(InvalidArgument, match="releases nothing"):
            from_dp_event(event, epsilon=1.0, delta=1e-5)


def _certify_event(tmp_path, event, *extra) -> tuple[int, str, str]:
    path = tmp_path / "event.json"
    path.write_text(event if isinstance(event, str) else json.dumps(event))
    code = main(["certify", "--dp-event", str(path), "--epsilon", "1", "--delta", "1e-5", *extra])
    return code, path


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_refused_classes_exit_2_naming_the_class(name, tmp_path, capsys):
    code, _ = _certify_event(tmp_path, ev("ComposedDpEvent", events=[ev("GaussianDpEvent", noise_multiplier=1.0), ev(name)]))
    err = capsys.readouterr().err
    assert code == 2 and name in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "event, named",
    [
        ("{not json", "dp_event"),
        (ev("NoSuchDpEvent"), "NoSuchDpEvent"),
        ({"noise_multiplier": 1.0}, "class_name"),
        (ev("GaussianDpEvent"), "noise_multiplier"),
        (ev("DiscreteLaplaceDpEvent", noise_parameter=1.0), "sensitivity"),
        (ev("MixtureOfGaussiansDpEvent", standard_deviation=1.0, sensitivities=[1.0, 2.0], sampling_probs=[0.5]), "probabilities"),
        (ev("RandomizedResponseDpEvent", noise_parameter=1.5, num_buckets=2), "noise"),
        (ev("SingleEpochTreeAggregationDpEvent", noise_multiplier=1.0, step_counts=[-1]), "step_counts"),
        (ev("PoissonSampledDpEvent", sampling_probability=0.1, event=ev("SelfComposedDpEvent", event=ev("GaussianDpEvent", noise_multiplier=1.0), count=2)), "SelfComposedDpEvent"),
        (ev("GaussianDpEvent", noise_multiplier="1"), "noise_multiplier"),
        (ev("TruncatedSubsampledGaussianDpEvent", dataset_size=100, sampling_probability=0.1, noise_multiplier=1.0), "truncated_batch_size"),
        (ev("TruncatedSubsampledGaussianDpEvent", dataset_size=100, sampling_probability=1.5, truncated_batch_size=5, noise_multiplier=1.0), "rate"),
        (ev("TruncatedSubsampledGaussianDpEvent", dataset_size=-3, sampling_probability=0.1, truncated_batch_size=5, noise_multiplier=1.0), "dataset_size"),
        (ev("SampledWithReplacementDpEvent", source_dataset_size=100, sample_size=10, event=ev("LaplaceDpEvent", noise_multiplier=1.0)), "LaplaceDpEvent"),
        (ev("SampledWithReplacementDpEvent", source_dataset_size=100, event=ev("GaussianDpEvent", noise_multiplier=1.0)), "sample_size"),
        (ev("SampledWithReplacementDpEvent", source_dataset_size=100, sample_size=10, event=ev("GaussianDpEvent", noise_multiplier=1.0)), "neighboring"),
    ],
)
def test_malformed_events_exit_2_with_one_line(event, named, tmp_path, capsys):
    code, _ = _certify_event(tmp_path, event)
    err = capsys.readouterr().err
    assert code == 2 and named in err and len(err.strip().splitlines()) == 1, err


def test_every_class_is_modelled_or_refused():
    """The two tables are disjoint and hold every class of dp_accounting 0.6 and of its main branch
    (EpsilonDelta, DiscreteGaussian, ExponentialMechanism, PermuteAndFlip, RandomAllocation)."""
    v06 = {"ComposedDpEvent", "DiscreteLaplaceDpEvent", "GaussianDpEvent", "LaplaceDpEvent", "MixtureOfGaussiansDpEvent",
           "NoOpDpEvent", "NonPrivateDpEvent", "PoissonSampledDpEvent", "RandomizedResponseDpEvent", "RepeatAndSelectDpEvent",
           "SampledWithReplacementDpEvent", "SampledWithoutReplacementDpEvent", "SelfComposedDpEvent",
           "SingleEpochTreeAggregationDpEvent", "TruncatedSubsampledGaussianDpEvent", "UnsupportedDpEvent", "ZCDpEvent"}
    main_branch = {"EpsilonDeltaDpEvent", "DiscreteGaussianDpEvent", "ExponentialMechanismDpEvent", "PermuteAndFlipDpEvent", "RandomAllocationDpEvent"}
    assert not set(MODELLED) & set(REFUSED)
    assert set(MODELLED) | set(REFUSED) == v06 | main_branch


@pytest.mark.peer
def test_installed_dp_accounting_classes_are_all_covered():
    """Read by attribute from the installed dp_accounting: every DpEvent subclass but the base."""
    dp_event = pytest.importorskip("dp_accounting.dp_event")
    import inspect

    names = {n for n, c in inspect.getmembers(dp_event, inspect.isclass) if issubclass(c, dp_event.DpEvent) and c is not dp_event.DpEvent}
    assert names <= set(MODELLED) | set(REFUSED), names - set(MODELLED) - set(REFUSED)


def test_random_allocation_event():
    event = ev("SelfComposedDpEvent", event=ev("RandomAllocationDpEvent", event=ev("GaussianDpEvent", noise_multiplier=2.0), num_selected=2, num_steps=10), count=3)
    claim = from_dp_event(event, epsilon=1.0, delta=1e-5)
    assert claim.scheme == {"name": "allocation", "steps": 10, "k": 2, "epochs": 3}
    assert math.isclose(claim.mechanism["sigma"], 2.0)


def test_random_allocation_event_decides_the_peer_published_value():
    """dp_accounting PR #414's test value for RandomAllocationDpEvent(Gaussian σ = 2, 10 of 100 steps) at
    δ = 1e-6 is ε = 2.4265: read from JSON, verifier certifies it and refutes 1% below it (both sides:
    its bracket there is [2.42228, 2.42555] in the remove direction)."""
    event = ev("RandomAllocationDpEvent", event=ev("GaussianDpEvent", noise_multiplier=2.0), num_selected=10, num_steps=100)
    assert certify(from_dp_event(event, epsilon=2.4265, delta=1e-6)).verdict is Verdict.CERTIFIED
    assert certify(from_dp_event(event, epsilon=0.99 * 2.4265, delta=1e-6)).verdict is Verdict.VIOLATED
