"""from_dp_event on the events dp_accounting builds for DP-SGD gives the hand-written claims, and
certify decides them; unsupported nodes are refused by name."""

from __future__ import annotations

import pytest

dp_accounting = pytest.importorskip("dp_accounting")
from dp_accounting import NeighboringRelation, dp_event  # noqa: E402
from dp_accounting.rdp import rdp_privacy_accountant  # noqa: E402

from verifier.adapters import from_dp_event  # noqa: E402
from verifier.certify.claim import parse_claim  # noqa: E402
from verifier.certify.verdict import Verdict, certify  # noqa: E402
from verifier.errors import InvalidArgument  # noqa: E402


def dp_sgd_event(noise_multiplier: float, rate: float, steps: int):
    """DP-SGD as dp_accounting's users describe it (tensorflow_privacy's compute_dp_sgd_privacy):
    ``steps`` Poisson-sampled Gaussian steps, built through dp_accounting's DpEventBuilder."""
    builder = dp_accounting.DpEventBuilder()
    builder.compose(dp_event.PoissonSampledDpEvent(rate, dp_event.GaussianDpEvent(noise_multiplier)), steps)
    return builder.build()


def rdp_epsilon(event, delta, relation=NeighboringRelation.ADD_OR_REMOVE_ONE):
    return rdp_privacy_accountant.RdpAccountant(neighboring_relation=relation).compose(event).get_epsilon(delta)


def test_dp_sgd_event_is_the_poisson_claim():
    event = dp_sgd_event(1.1, 0.01, 1000)
    claim = from_dp_event(event, epsilon=1.5, delta=1e-5)
    by_hand = parse_claim(
        {"mechanism": {"name": "gaussian", "sigma": 1.1}, "scheme": {"name": "poisson", "rate": 0.01, "steps": 1000}, "epsilon": 1.5, "delta": 1e-5}
    )
    assert (claim.mechanism, claim.scheme, claim.neighboring) == (by_hand.mechanism, by_hand.scheme, by_hand.neighboring)
    assert claim.model == by_hand.model


def test_two_phases_are_a_sequence_and_certify_decides(two_phases, two_phase_claim):
    builder = dp_accounting.DpEventBuilder()
    for rate, steps, sigma in two_phases:
        builder.compose(dp_event.PoissonSampledDpEvent(rate, dp_event.GaussianDpEvent(sigma)), steps)
    event = builder.build()
    eps_rdp = rdp_epsilon(event, 1e-5)  # dp_accounting's RDP bound: sound and loose
    claim = from_dp_event(event, epsilon=eps_rdp, delta=1e-5)
    by_hand = two_phase_claim(eps_rdp)
    assert claim.model == by_hand.model and claim.scheme == by_hand.scheme
    assert certify(claim, only=["rdp"]).verdict is Verdict.CERTIFIED
    assert certify(from_dp_event(event, epsilon=0.5 * eps_rdp, delta=1e-5), only=["pld"]).verdict is Verdict.VIOLATED


def test_gaussian_and_composed_and_fixed_size():
    gauss = dp_event.GaussianDpEvent(2.0)
    assert from_dp_event(gauss, epsilon=1, delta=1e-5).scheme == {"name": "single"}
    claim = from_dp_event(dp_event.SelfComposedDpEvent(gauss, 10), epsilon=1, delta=1e-5, neighboring="replace_one")
    assert claim.scheme == {"name": "composed", "times": 10} and claim.neighboring == "replace_one"
    wor = dp_event.SelfComposedDpEvent(dp_event.SampledWithoutReplacementDpEvent(1000, 100, gauss), 50)
    claim = from_dp_event(wor, epsilon=1, delta=1e-5, neighboring="replace_one")
    assert claim.scheme == {"name": "without_replacement", "dataset_size": 1000, "batch_size": 100, "steps": 50}


def test_unsupported_nodes_are_named():
    tree = dp_event.ComposedDpEvent([dp_event.GaussianDpEvent(1.0), dp_event.UnsupportedDpEvent()])
    with pytest.raises(InvalidArgument, match=r"event\.events\[1\]='UnsupportedDpEvent'"):
        from_dp_event(tree, epsilon=1, delta=1e-5)
    with pytest.raises(InvalidArgument, match="neighboring"):  # the claim language refuses fixed-size batches under add/remove
        from_dp_event(dp_event.SampledWithoutReplacementDpEvent(100, 10, dp_event.GaussianDpEvent(1.0)), epsilon=1, delta=1e-5)


def test_certify_reads_a_dp_event_file(tmp_path, capsys):
    import json

    from verifier.adapters import dp_event_json
    from verifier.cli import main

    event = dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(4.0), 100)
    path = tmp_path / "event.json"
    path.write_text(json.dumps(dp_event_json(event)))
    eps_rdp = float(rdp_epsilon(event, 1e-5, NeighboringRelation.REPLACE_ONE))  # 14.1322: the #378 understatement
    args = ["certify", "--dp-event", str(path), "--delta", "1e-5", "--neighboring", "replace_one"]
    assert main([*args, "--epsilon", repr(eps_rdp)]) == 1
    assert capsys.readouterr().out.startswith("VIOLATED")
    assert main([*args, "--epsilon", "33.2"]) == 0  # true ε = 33.1037 (μ = 2·10/4 = 5)
    capsys.readouterr()
    path.write_text(json.dumps({"class_name": "SelfComposedDpEvent", "count": 3}))
    assert main([*args, "--epsilon", "1"]) == 2
    assert "event.event" in capsys.readouterr().err
    assert main(["certify", "--dp-event", str(path), "--epsilon", "1", "--delta", "1e-5", "--sigma", "2"]) == 2


def test_opacus_history_of_dp_events():
    """The Opacus history of an event (what Opacus's accountants are run on beside dp_accounting's
    in the audit): full-batch Gaussian steps at rate 1, Poisson-sampled ones at their rate, counts
    multiplied, compositions concatenated; anything else is not expressible (None)."""
    from verifier.adapters.opacus import history_of_dp_event

    step = dp_event.PoissonSampledDpEvent(0.01, dp_event.GaussianDpEvent(1.1))
    assert history_of_dp_event(dp_event.SelfComposedDpEvent(step, 1000)) == [(1.1, 0.01, 1000)]
    assert history_of_dp_event(dp_event.SelfComposedDpEvent(dp_event.GaussianDpEvent(4.0), 100)) == [(4.0, 1.0, 100)]
    two = dp_event.ComposedDpEvent([dp_event.SelfComposedDpEvent(step, 30), dp_event.GaussianDpEvent(4.0)])
    assert history_of_dp_event(dp_event.SelfComposedDpEvent(two, 2)) == [(1.1, 0.01, 30), (4.0, 1.0, 1)] * 2
    for other in (dp_event.LaplaceDpEvent(1.0), dp_event.ZCDpEvent(0.5), dp_event.PoissonSampledDpEvent(0.1, dp_event.LaplaceDpEvent(1.0)),
                  dp_event.GaussianDpEvent(0.0), dp_event.ComposedDpEvent([step, dp_event.ZCDpEvent(0.5)])):
        assert history_of_dp_event(other) is None
