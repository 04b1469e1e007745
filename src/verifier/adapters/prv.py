"""prv_accountant's privacy random variables as verifier claims.

A ``PRVAccountant`` composes a list of PRVs, each ``num_self_compositions[i]`` times:
``GaussianMechanism`` (its ``mu`` = Δ/σ: a Gaussian step of σ = 1/mu at sensitivity 1),
``PoissonSubsampledGaussianMechanism`` (``p``, ``sigma``: Poisson-sampled Gaussian steps) and
``LaplaceMechanism`` (``mu`` = Δ/b: a Laplace step of scale 1/mu). One PRV is a ``composed`` or
``poisson`` claim, several a ``sequence``; add/remove neighbours (prv_accountant's relation).
"""

from __future__ import annotations

from typing import Any, Sequence

from verifier.certify.claim import Claim, parse_claim
from verifier.errors import InvalidArgument

__all__ = ["from_prv"]


def _phase(prv: Any, count: int, path: str) -> dict:
    name = type(prv).__name__
    if name == "GaussianMechanism":
        return {"name": "composed", "times": count, "mechanism": {"name": "gaussian", "sigma": 1.0 / float(prv.mu)}}
    if name == "LaplaceMechanism":
        return {"name": "composed", "times": count, "mechanism": {"name": "laplace", "scale": 1.0 / float(prv.mu)}}
    if name == "PoissonSubsampledGaussianMechanism":
        return {"name": "poisson", "rate": float(prv.p), "steps": count, "mechanism": {"name": "gaussian", "sigma": float(prv.sigma)}}
    raise InvalidArgument(path, name, "is not supported by from_prv (GaussianMechanism, LaplaceMechanism, PoissonSubsampledGaussianMechanism)")


def from_prv(prvs: Sequence[Any], num_self_compositions: Sequence[int], *, epsilon: float, delta: float) -> Claim:
    """The claim "composing ``prvs[i]`` ``num_self_compositions[i]`` times is (``epsilon``,
    ``delta``)-DP for add/remove neighbours" (the PRVs of the module docstring)."""
    if len(prvs) != len(num_self_compositions) or not prvs:
        raise InvalidArgument("num_self_compositions", list(num_self_compositions), f"must give one count per PRV ({len(prvs)} PRVs)")
    phases = [_phase(prv, int(count), f"prvs[{i}]") for i, (prv, count) in enumerate(zip(prvs, num_self_compositions))]
    if len(phases) == 1:
        scheme = dict(phases[0])
        obj = {"mechanism": scheme.pop("mechanism"), "scheme": scheme}
    else:
        obj = {"scheme": {"name": "sequence", "phases": phases}}
    return parse_claim({**obj, "epsilon": epsilon, "delta": delta, "source": "prv_accountant"})
