"""from_opacus on an Opacus accountant after steps at two noise levels gives the hand-written
sequence claim, and certify decides it. Needs opacus (and torch, ~200 MB): skipped when absent, so
it is not part of the ``test`` extra."""

from __future__ import annotations

import pytest

accountants = pytest.importorskip("opacus.accountants")

from verifier.adapters import from_opacus  # noqa: E402
from verifier.certify.verdict import Verdict, certify  # noqa: E402

pytestmark = pytest.mark.peer


def run_phases(accountant, phases):
    for rate, steps, sigma in phases:
        for _ in range(steps):
            accountant.step(noise_multiplier=sigma, sample_rate=rate)
    return accountant


def test_two_noise_levels_give_the_sequence_claim_and_certify_decides(two_phases, two_phase_claim):
    accountant = run_phases(accountants.RDPAccountant(), two_phases)
    claim = from_opacus(accountant, delta=1e-5)
    by_hand = two_phase_claim(accountant.get_epsilon(delta=1e-5))
    assert claim.model == by_hand.model and claim.scheme == by_hand.scheme and claim.epsilon == by_hand.epsilon
    assert claim.source == "opacus RDPAccountant"
    assert certify(claim, only=["rdp"]).verdict is Verdict.CERTIFIED  # Opacus's RDP ε is a sound (loose) bound


def test_one_phase_is_a_poisson_claim():
    accountant = run_phases(accountants.RDPAccountant(), ((0.1, 5, 2.0),))
    claim = from_opacus(accountant, delta=1e-6, epsilon=3.0)
    assert claim.mechanism == {"name": "gaussian", "sigma": 2.0, "sensitivity": 1.0}
    assert claim.scheme == {"name": "poisson", "rate": 0.1, "steps": 5} and claim.epsilon == 3.0
