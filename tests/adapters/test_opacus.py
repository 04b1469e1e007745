"""from_opacus on an Opacus accountant after steps at two noise levels gives the hand-written
sequence claim, and certify decides it. Needs opacus (and torch, ~200 MB): skipped when absent, so
it is not part of the ``test`` extra."""

from __future__ import annotations

import pytest

accountants = pytest.importorskip("opacus.accountants")

from verifier.adapters import from_opacus  # noqa: E402
from verifier.certify.claim import parse_claim  # noqa: E402
from verifier.certify.verdict import Verdict, certify  # noqa: E402

pytestmark = pytest.mark.peer


def run_two_phases(accountant):
    for _ in range(30):
        accountant.step(noise_multiplier=1.1, sample_rate=0.01)
    for _ in range(10):
        accountant.step(noise_multiplier=0.9, sample_rate=0.02)
    return accountant


def test_two_noise_levels_give_the_sequence_claim_and_certify_decides():
    accountant = run_two_phases(accountants.RDPAccountant())
    claim = from_opacus(accountant, delta=1e-5)
    by_hand = parse_claim(
        {
            "scheme": {
                "name": "sequence",
                "phases": [
                    {"name": "poisson", "rate": 0.01, "steps": 30, "mechanism": {"name": "gaussian", "sigma": 1.1}},
                    {"name": "poisson", "rate": 0.02, "steps": 10, "mechanism": {"name": "gaussian", "sigma": 0.9}},
                ],
            },
            "neighboring": "add_or_remove",
            "epsilon": accountant.get_epsilon(delta=1e-5),
            "delta": 1e-5,
        }
    )
    assert claim.model == by_hand.model and claim.scheme == by_hand.scheme and claim.epsilon == by_hand.epsilon
    assert claim.source == "opacus RDPAccountant"
    assert certify(claim, only=["rdp"]).verdict is Verdict.CERTIFIED  # Opacus's RDP ε is a sound (loose) bound


def test_one_phase_is_a_poisson_claim():
    accountant = accountants.RDPAccountant()
    for _ in range(5):
        accountant.step(noise_multiplier=2.0, sample_rate=0.1)
    claim = from_opacus(accountant, delta=1e-6, epsilon=3.0)
    assert claim.mechanism == {"name": "gaussian", "sigma": 2.0, "sensitivity": 1.0}
    assert claim.scheme == {"name": "poisson", "rate": 0.1, "steps": 5} and claim.epsilon == 3.0
