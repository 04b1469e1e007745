"""Opacus accountants as verifier claims.

Every Opacus accountant (``RDPAccountant``, ``PRVAccountant``, ``GaussianAccountant``) keeps its
``history``: a list of ``(noise_multiplier, sample_rate, num_steps)`` phases, one per run of
``step()`` calls with the same parameters. Opacus accounts for add/remove neighbours, with
per-sample gradients clipped at C and noise of standard deviation σ·C, as if every batch were
Poisson-sampled: each phase is ``num_steps`` Poisson-sampled Gaussian steps of σ = noise multiplier
at sensitivity 1. One phase is a ``poisson`` scheme, several a ``sequence`` of them. Nothing is
trained: only the history (and, for a shuffled run, the data loader's sizes) is read.

``make_private(..., poisson_sampling=False)`` keeps the caller's data loader and records
``sample_rate = 1/len(data_loader)``: the run shuffles once per epoch and cuts batches of B, and the
history still reads as Poisson. Given that ``data_loader``, the claim is about what actually ran:
the ``shuffled`` scheme (n = ``len(dataset)``, B = ``batch_size``, ``drop_last``, epochs =
num_steps / len(data_loader)) under replace-one neighbours (the relation shuffled batches are defined
for; :mod:`verifier.certify.methods.shuffled`), with the ε Opacus reported.

A loader whose batches the history's rates do not describe is refused with one line naming its
sampler: a ``WeightedRandomSampler`` (records drawn with unequal probabilities, while Opacus records
1/len(data_loader) as if uniform: opacus#813), a DPDataLoader whose batch sampler is not Opacus's
uniform Poisson sampler or whose rate differs from the history's. So is a Poisson loader whose size
makes Opacus's normaliser depend on the neighbour: ``make_private`` averages the noisy sum by
``expected_batch_size = int(len(dataset) · sample_rate)`` (``loss_reduction="mean"``, its default),
and where adding or removing one record changes that integer, the release is the sampled Gaussian
rescaled by a factor that reveals the dataset's size, not the mechanism the history accounts
(opacus#819); replace-one neighbours, whose dataset size is fixed, are unaffected.
"""

from __future__ import annotations

import math
from typing import Any

from verifier.certify.claim import Claim, parse_claim
from verifier.errors import InvalidArgument

__all__ = ["from_opacus", "history_of_dp_event"]


def from_opacus(accountant: Any, *, delta: float, epsilon: float | None = None, data_loader: Any = None) -> Claim:
    """The claim "the run in ``accountant.history`` is (ε, ``delta``)-DP", with ε = ``epsilon`` or,
    by default, the accountant's own ``get_epsilon(delta)``: for add/remove neighbours under Poisson
    sampling, or, when ``data_loader`` is a plain shuffling PyTorch loader (Opacus's
    ``poisson_sampling=False``), for replace-one neighbours under shuffled batches."""
    history = getattr(accountant, "history", None)
    if not history:
        raise InvalidArgument("accountant", type(accountant).__name__, "has no history of (noise_multiplier, sample_rate, num_steps); call step() first")
    phases = []
    for index, entry in enumerate(history):
        try:
            sigma, rate, steps = entry
        except (TypeError, ValueError):
            raise InvalidArgument(f"history[{index}]", entry, "must be (noise_multiplier, sample_rate, num_steps)") from None
        phases.append({"name": "poisson", "rate": float(rate), "steps": int(steps), "mechanism": {"name": "gaussian", "sigma": float(sigma), "sensitivity": 1.0}})
    if epsilon is None:
        epsilon = float(accountant.get_epsilon(delta=delta))
    source = f"opacus {type(accountant).__name__}"
    if data_loader is not None:
        _check_sampler(data_loader, phases)
    if data_loader is not None and not _poisson_loader(data_loader):
        obj = _shuffled(phases, data_loader)
        return parse_claim({**obj, "neighboring": "replace_one", "epsilon": epsilon, "delta": delta, "source": f"{source}, poisson_sampling=False"})
    if len(phases) == 1:
        mechanism = phases[0].pop("mechanism")
        obj = {"mechanism": mechanism, "scheme": phases[0]}
    else:
        obj = {"scheme": {"name": "sequence", "phases": phases}}
    return parse_claim({**obj, "neighboring": "add_or_remove", "epsilon": epsilon, "delta": delta, "source": source})


def _poisson_loader(loader: Any) -> bool:
    """Whether ``loader`` is Opacus's DPDataLoader (Poisson sampling, ``poisson_sampling=True``)."""
    return any(cls.__name__ == "DPDataLoader" and cls.__module__.startswith("opacus") for cls in type(loader).__mro__)


#: Opacus's Poisson batch samplers: every record included independently at ``sample_rate``.
_UNIFORM_BATCH_SAMPLERS = ("UniformWithReplacementSampler", "DistributedUniformWithReplacementSampler")

#: Samplers whose batches no (noise multiplier, sample rate) history describes, and why.
_NON_UNIFORM = {
    "WeightedRandomSampler": "draws records with unequal probabilities (and with replacement), so no single sample rate "
    "describes a record's inclusion; Opacus records 1/len(data_loader) = batch_size/num_samples anyway (opacus#813)",
}


def _check_sampler(loader: Any, phases: list[dict]) -> None:
    """Refuse, naming the sampler, a loader whose sampling the history's rates cannot state: a
    DPDataLoader whose batch sampler is not Opacus's uniform Poisson sampler or whose rate is not the
    history's, and a plain loader with a non-uniform sampler (:data:`_NON_UNIFORM`)."""
    if _poisson_loader(loader):
        batch_sampler = getattr(loader, "batch_sampler", None)
        name = type(batch_sampler).__name__
        if name not in _UNIFORM_BATCH_SAMPLERS:
            raise InvalidArgument("data_loader.batch_sampler", name, "is not Opacus's uniform Poisson sampler "
                                  f"({', '.join(_UNIFORM_BATCH_SAMPLERS)}): the history's sample rate does not describe its batches")
        rate = getattr(batch_sampler, "sample_rate", None)
        for index, phase in enumerate(phases):
            if rate is not None and not math.isclose(phase["rate"], float(rate), rel_tol=1e-9):
                raise InvalidArgument(f"history[{index}].sample_rate", phase["rate"], f"must be the loader's Poisson rate {float(rate):g} "
                                      f"({name}.sample_rate): the history is not of this loader")
        _check_normaliser(loader, phases[0]["rate"])
        return
    for part in ("sampler", "batch_sampler"):
        name = type(getattr(loader, part, None)).__name__
        if name in _NON_UNIFORM:
            raise InvalidArgument(f"data_loader.{part}", name, f"is not supported: {_NON_UNIFORM[name]}")


def _check_normaliser(loader: Any, rate: float) -> None:
    """Refuse a Poisson run whose averaging divisor ``int(n·rate)`` (Opacus's ``expected_batch_size``)
    differs at n − 1 or n + 1 records: under add/remove neighbours the divisor then tells the two
    datasets apart (opacus#819), which no sampled-Gaussian history states."""
    dataset = getattr(loader, "dataset", None)
    if dataset is None:
        return
    n = len(dataset)
    divisors = {size: int(size * rate) for size in (n - 1, n, n + 1)}
    if len(set(divisors.values())) > 1:
        other = next(size for size, value in divisors.items() if value != divisors[n])
        raise InvalidArgument(
            "data_loader.dataset", f"{n} records",
            f"gives Opacus's averaging divisor expected_batch_size = int(n*sample_rate) = {divisors[n]}, but {divisors[other]} "
            f"for a neighbour of {other} records: with loss_reduction='mean' the add/remove release is not the sampled Gaussian "
            "the history accounts (opacus#819); certify replace-one neighbours or average by a public constant",
        )


def _shuffled(phases: list[dict], loader: Any) -> dict:
    """The ``shuffled`` claim objects of a run over the plain PyTorch ``loader``: one phase (one σ)
    whose step count is a whole number of epochs at Opacus's recorded rate 1/len(loader)."""
    sampler = type(getattr(loader, "sampler", None)).__name__
    if sampler != "RandomSampler" or getattr(loader.sampler, "replacement", False):
        raise InvalidArgument(
            "data_loader", sampler, "must shuffle once per epoch (DataLoader(..., shuffle=True)); other samplers are not the shuffled scheme"
        )
    if len(phases) != 1:
        raise InvalidArgument("accountant.history", len(phases), "a shuffled run is modelled for one phase (one noise multiplier)")
    batches = len(loader)
    rate, steps = phases[0]["rate"], phases[0]["steps"]
    if not math.isclose(rate, 1.0 / batches, rel_tol=1e-9):
        raise InvalidArgument("history[0].sample_rate", rate, f"must be 1/len(data_loader) = 1/{batches}: the history is not of this loader")
    if steps % batches:
        raise InvalidArgument("history[0].num_steps", steps, f"must be a whole number of epochs ({batches} steps each)")
    scheme = {
        "name": "shuffled", "dataset_size": len(loader.dataset), "batch_size": loader.batch_size,
        "epochs": steps // batches, "drop_last": bool(loader.drop_last),
    }
    return {"mechanism": phases[0]["mechanism"], "scheme": scheme}


def history_of_dp_event(event: Any) -> list[tuple[float, float, int]] | None:
    """The Opacus history (phases of (noise multiplier, sample rate, steps)) that accounts for the
    same run as the dp_accounting ``event`` under add/remove neighbours, or None where Opacus cannot
    express it: a Gaussian step is rate 1, Poisson sampling of a Gaussian step its rate, self- and
    plain composition repeat and concatenate phases (read by attribute, like
    :mod:`verifier.adapters.dp_event`)."""
    name = type(event).__name__
    if name == "GaussianDpEvent" and event.noise_multiplier > 0:
        return [(float(event.noise_multiplier), 1.0, 1)]
    if name == "PoissonSampledDpEvent" and type(event.event).__name__ == "GaussianDpEvent" and event.event.noise_multiplier > 0:
        return [(float(event.event.noise_multiplier), float(event.sampling_probability), 1)]
    if name == "SelfComposedDpEvent":
        inner = history_of_dp_event(event.event)
        if inner is None:
            return None
        return [(s, q, t * event.count) for s, q, t in inner] if len(inner) == 1 else inner * event.count
    if name == "ComposedDpEvent":
        parts = [history_of_dp_event(e) for e in event.events]
        return None if not parts or any(p is None for p in parts) else [phase for part in parts for phase in part]  # type: ignore[union-attr]
    return None
