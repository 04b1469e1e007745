"""from_opacus refuses, with one line naming the sampler, the loaders whose batches the history's
sample rates cannot state (issue 40; opacus#813), and the Poisson runs whose averaging divisor moves
with the dataset's size (opacus#819). Runs without opacus or torch: the loaders are
stand-ins carrying the class names the adapter reads."""

from __future__ import annotations

import pytest

from verifier.adapters import from_opacus
from verifier.errors import InvalidArgument


class FakeAccountant:
    def __init__(self, history):
        self.history = history

    def get_epsilon(self, delta):
        return 1.0


def _named(name: str, module: str, **fields):
    cls = type(name, (), {"__module__": module})
    obj = cls()
    obj.__dict__.update(fields)
    return obj


def _plain_loader(sampler, n=1000, batch=16, batches=8):
    loader = _named("DataLoader", "torch.utils.data.dataloader", sampler=sampler, batch_sampler=_named("BatchSampler", "torch.utils.data.sampler"),
                    dataset=list(range(n)), batch_size=batch, drop_last=False)
    type(loader).__len__ = lambda self: batches
    return loader


def _dp_loader(batch_sampler, n=None):
    fields = {} if n is None else {"dataset": list(range(n))}
    return _named("DPDataLoader", "opacus.data_loader", batch_sampler=batch_sampler, sampler=None, **fields)


def test_weighted_sampler_is_refused_naming_it():
    """opacus#813's run: 128 draws of 16 from 100 000 records by weight; Opacus records rate 1/8."""
    sampler = _named("WeightedRandomSampler", "torch.utils.data.sampler", replacement=True, num_samples=128)
    with pytest.raises(InvalidArgument) as info:
        from_opacus(FakeAccountant([(1.0, 1 / 8, 80)]), delta=1e-5, data_loader=_plain_loader(sampler, 100_000, 16, 8))
    message = str(info.value)
    assert info.value.name == "data_loader.sampler" and "WeightedRandomSampler" in message and "\n" not in message


@pytest.mark.parametrize("name", ["BatchSplittingSampler", "WeightedRandomSampler"])
def test_poisson_loader_with_another_batch_sampler_is_refused(name):
    with pytest.raises(InvalidArgument) as info:
        from_opacus(FakeAccountant([(1.0, 0.01, 10)]), delta=1e-5, data_loader=_dp_loader(_named(name, "somewhere", sample_rate=0.01)))
    assert info.value.name == "data_loader.batch_sampler" and name in str(info.value) and "\n" not in str(info.value)


def test_poisson_loader_at_another_rate_is_refused():
    loader = _dp_loader(_named("UniformWithReplacementSampler", "opacus.utils.uniform_sampler", sample_rate=0.02))
    with pytest.raises(InvalidArgument) as info:
        from_opacus(FakeAccountant([(1.0, 0.01, 10)]), delta=1e-5, data_loader=loader)
    assert info.value.name == "history[0].sample_rate"


def test_uniform_poisson_loader_is_accepted():
    loader = _dp_loader(_named("UniformWithReplacementSampler", "opacus.utils.uniform_sampler", sample_rate=0.01))
    claim = from_opacus(FakeAccountant([(1.0, 0.01, 10)]), delta=1e-5, data_loader=loader)
    assert claim.scheme == {"name": "poisson", "rate": 0.01, "steps": 10} and claim.neighboring == "add_or_remove"


@pytest.mark.parametrize("n, rate, moved", [(1000, 0.01, 9), (999, 0.01, 10), (50_176, 1 / 196, 256)])
def test_poisson_run_whose_divisor_moves_is_refused(n, rate, moved):
    """expected_batch_size = int(n * rate) is 10 at n = 1000 but 9 at 999; 9 at 999 but 10 at 1000; 50 176
    records in 196 full batches of 256 give int(50176 * (1/196)) = int(255.99999999999997) = 255 in
    floating point, as Opacus computes it, and 256 for 50 177 records. A check that looked at
    one side only (n - 1 or n + 1) misses one of the first two."""
    loader = _dp_loader(_named("UniformWithReplacementSampler", "opacus.utils.uniform_sampler", sample_rate=rate), n)
    with pytest.raises(InvalidArgument) as info:
        from_opacus(FakeAccountant([(1.0, rate, 10)]), delta=1e-5, data_loader=loader)
    message = str(info.value)
    assert info.value.name == "data_loader.dataset" and f"but {moved} " in message and "opacus#819" in message and "\n" not in message


def test_poisson_run_whose_divisor_is_fixed_is_accepted():
    """60 000 records in 235 batches (MNIST at B = 256): int(n/235) = 255 at n - 1, n and n + 1."""
    loader = _dp_loader(_named("UniformWithReplacementSampler", "opacus.utils.uniform_sampler", sample_rate=1 / 235), 60_000)
    claim = from_opacus(FakeAccountant([(1.1, 1 / 235, 2350)]), delta=1e-5, data_loader=loader)
    assert claim.scheme["name"] == "poisson" and claim.neighboring == "add_or_remove"
