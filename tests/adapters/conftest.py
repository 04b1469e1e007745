"""The two-phase DP-SGD run the adapter tests feed to each peer library (30 Poisson steps at rate 0.01,
σ = 1.1, then 10 at rate 0.02, σ = 0.9), and the claim for it written by hand, independently of
the adapters."""

from __future__ import annotations

from typing import Callable

import pytest

from verifier.certify.claim import Claim, parse_claim

#: (sample rate, steps, noise multiplier) of each phase, in order.
PHASES = ((0.01, 30, 1.1), (0.02, 10, 0.9))


@pytest.fixture
def two_phases() -> tuple[tuple[float, int, float], ...]:
    return PHASES


@pytest.fixture
def two_phase_claim() -> Callable[[float], Claim]:
    """The hand-written add/remove sequence claim of :data:`PHASES` at ``epsilon``, δ = 1e-5."""

    def claim(epsilon: float) -> Claim:
        phases = [{"name": "poisson", "rate": rate, "steps": steps, "mechanism": {"name": "gaussian", "sigma": sigma}} for rate, steps, sigma in PHASES]
        return parse_claim({"scheme": {"name": "sequence", "phases": phases}, "neighboring": "add_or_remove", "epsilon": epsilon, "delta": 1e-5})

    return claim
