"""Opacus accountants as verifier claims.

Every Opacus accountant (``RDPAccountant``, ``PRVAccountant``, ``GaussianAccountant``) keeps its
``history``: a list of ``(noise_multiplier, sample_rate, num_steps)`` phases, one per run of
``step()`` calls with the same parameters. Opacus samples batches by Poisson sampling and accounts
for add/remove neighbours, with per-sample gradients clipped at C and noise of standard deviation
σ·C: each phase is ``num_steps`` Poisson-sampled Gaussian steps of σ = noise multiplier at
sensitivity 1. One phase is a ``poisson`` scheme, several a ``sequence`` of them. Nothing is
trained: only the history is read.
"""

from __future__ import annotations

from typing import Any

from verifier.certify.claim import Claim, parse_claim
from verifier.errors import InvalidArgument

__all__ = ["from_opacus"]


def from_opacus(accountant: Any, *, delta: float, epsilon: float | None = None) -> Claim:
    """The claim "the run in ``accountant.history`` is (ε, ``delta``)-DP for add/remove
    neighbours", with ε = ``epsilon`` or, by default, the accountant's own
    ``get_epsilon(delta)``."""
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
    if len(phases) == 1:
        mechanism = phases[0].pop("mechanism")
        obj = {"mechanism": mechanism, "scheme": phases[0]}
    else:
        obj = {"scheme": {"name": "sequence", "phases": phases}}
    return parse_claim({**obj, "neighboring": "add_or_remove", "epsilon": epsilon, "delta": delta, "source": source})
