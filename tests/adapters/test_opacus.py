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


def _loader(n, batch, **kwargs):
    import torch

    return torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.zeros(n, 1), torch.zeros(n, 1)), batch_size=batch, **kwargs)


@pytest.mark.slow  # a real make_private and 12 optimizer steps (~4 s)
def test_make_private_without_poisson_sampling_maps_to_shuffled():
    """A real Opacus run with poisson_sampling=False (n = 44, B = 8: five full batches and a partial
    one of 4, two epochs) records sample_rate 1/6 and 12 steps; with its loader the claim is the
    shuffled scheme under replace-one, with Opacus's own ε. Catches epochs computed from the Poisson
    rate's expected batch instead of len(loader), and drop_last lost."""
    import torch
    from opacus import PrivacyEngine

    model = torch.nn.Linear(1, 1)
    engine = PrivacyEngine(accountant="prv")
    model, optimizer, loader = engine.make_private(
        module=model, optimizer=torch.optim.SGD(model.parameters(), lr=0.1), data_loader=_loader(44, 8, shuffle=True),
        noise_multiplier=1.3, max_grad_norm=1.0, poisson_sampling=False,
    )
    for _ in range(2):
        for x, y in loader:
            optimizer.zero_grad()
            torch.nn.functional.mse_loss(model(x.requires_grad_()), y).backward()
            optimizer.step()
    assert engine.accountant.history == [(1.3, 1 / 6, 12)]
    claim = from_opacus(engine.accountant, delta=1e-5, data_loader=loader)
    assert claim.scheme == {"name": "shuffled", "dataset_size": 44, "batch_size": 8, "epochs": 2, "drop_last": False}
    assert claim.neighboring == "replace_one" and claim.mechanism == {"name": "gaussian", "sigma": 1.3, "sensitivity": 1.0}
    assert claim.epsilon == engine.accountant.get_epsilon(delta=1e-5) and "poisson_sampling=False" in claim.source


def test_shuffled_dp_sgd_run_reported_as_poisson_is_violated():
    """The README's DP-SGD run (σ = 1.1, n = 60000, B = 256, 10 epochs, drop_last=False: 235 batches)
    through a shuffling loader: Opacus's PRV ε (add/remove, as if Poisson at 1/235) is below the
    shuffled lower end under replace-one, and certify says VIOLATED."""
    loader = _loader(60000, 256, shuffle=True)
    accountant = accountants.PRVAccountant()
    accountant.history = [(1.1, 1 / len(loader), 10 * len(loader))]
    claim = from_opacus(accountant, delta=1e-5, data_loader=loader)
    assert claim.scheme["epochs"] == 10 and claim.epsilon < 1.0
    assert certify(claim).verdict is Verdict.VIOLATED


@pytest.mark.parametrize(
    "loader_kwargs, history, field",
    [
        ({"shuffle": False}, (1.0, 1 / 5, 10), "data_loader"),
        ({"shuffle": True}, (1.0, 1 / 5, 7), "history[0].num_steps"),
        ({"shuffle": True}, (1.0, 0.01, 10), "history[0].sample_rate"),
    ],
)
def test_shuffled_loader_mismatches_name_the_field(loader_kwargs, history, field):
    from verifier.errors import InvalidArgument

    accountant = accountants.RDPAccountant()
    accountant.history = [history]
    with pytest.raises(InvalidArgument) as info:
        from_opacus(accountant, delta=1e-5, epsilon=1.0, data_loader=_loader(40, 8, **loader_kwargs))
    assert info.value.name == field


def test_poisson_loader_keeps_the_poisson_claim():
    from opacus.data_loader import DPDataLoader

    loader = DPDataLoader.from_data_loader(_loader(44, 8, shuffle=True))  # int(n/6) = 7 at n - 1, n, n + 1
    accountant = accountants.RDPAccountant()
    accountant.history = [(1.0, 1 / len(loader), 10)]
    claim = from_opacus(accountant, delta=1e-5, epsilon=1.0, data_loader=loader)
    assert claim.scheme["name"] == "poisson" and claim.neighboring == "add_or_remove"


def test_poisson_loader_whose_divisor_moves_is_refused():
    """opacus#819 with a real DPDataLoader: 40 records in batches of 8 give sample_rate 1/5 and
    expected_batch_size int(40/5) = 8, but 7 for 39 records."""
    from opacus.data_loader import DPDataLoader

    from verifier.errors import InvalidArgument

    loader = DPDataLoader.from_data_loader(_loader(40, 8, shuffle=True))
    accountant = accountants.RDPAccountant()
    accountant.history = [(1.0, 1 / len(loader), 10)]
    with pytest.raises(InvalidArgument) as info:
        from_opacus(accountant, delta=1e-5, epsilon=1.0, data_loader=loader)
    assert info.value.name == "data_loader.dataset" and "opacus#819" in str(info.value)
