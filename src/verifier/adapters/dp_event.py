"""dp_accounting's DpEvent trees as verifier claims.

Supported nodes (dp_accounting 0.4+; read by attribute, so dp_accounting need not be importable):

- ``GaussianDpEvent(noise_multiplier)``: a Gaussian step of sensitivity 1 and σ = noise multiplier;
- ``LaplaceDpEvent(noise_multiplier)``: a Laplace step of sensitivity 1 and scale = noise multiplier;
- ``SelfComposedDpEvent(event, count)``: ``count`` runs of ``event`` (composed steps, or the steps of
  a sampled scheme);
- ``PoissonSampledDpEvent(sampling_probability, event)``: one Poisson-sampled step of a Gaussian or
  Laplace event;
- ``SampledWithoutReplacementDpEvent(source_dataset_size, sample_size, event)``: one fixed-size
  batch step (replace-one neighbours only);
- ``ComposedDpEvent(events)``: the events one after another: a ``sequence`` of phases (or the one
  phase); ``NoOpDpEvent`` releases nothing and is dropped.

The neighbouring relation is not part of a DpEvent (dp_accounting sets it on the accountant), so it
is an argument: dp_accounting's ``ADD_OR_REMOVE_ONE`` is ``add_or_remove``, ``REPLACE_ONE`` is
``replace_one``.
"""

from __future__ import annotations

from typing import Any

from verifier.certify.claim import Claim, parse_claim
from verifier.errors import InvalidArgument

__all__ = ["from_dp_event", "claim_object_from_dp_event"]


def _name(event: Any) -> str:
    return type(event).__name__


def _mechanism(event: Any, path: str) -> dict:
    """The mechanism object of a noise event."""
    if _name(event) == "GaussianDpEvent":
        return {"name": "gaussian", "sigma": float(event.noise_multiplier), "sensitivity": 1.0}
    if _name(event) == "LaplaceDpEvent":
        return {"name": "laplace", "scale": float(event.noise_multiplier), "sensitivity": 1.0}
    raise InvalidArgument(path, _name(event), "is not supported as a noise step here (GaussianDpEvent, LaplaceDpEvent)")


def _phases(event: Any, count: int, path: str) -> list[dict]:
    """The phases (scheme objects, each with its mechanism) of ``count`` runs of ``event``."""
    name = _name(event)
    if name == "NoOpDpEvent":
        return []
    if name == "SelfComposedDpEvent":
        return _phases(event.event, count * int(event.count), f"{path}.event")
    if name == "ComposedDpEvent":
        inner = [p for i, e in enumerate(event.events) for p in _phases(e, 1, f"{path}.events[{i}]")]
        if count == 1:
            return inner
        if len(inner) == 1:
            return _phases_times(inner[0], count, path)
        raise InvalidArgument(path, name, f"a heterogeneous composition repeated {count} times is not expressible (list it {count} times)")
    if name in ("GaussianDpEvent", "LaplaceDpEvent"):
        mechanism = _mechanism(event, path)
        return [{"name": "single", "mechanism": mechanism} if count == 1 else {"name": "composed", "times": count, "mechanism": mechanism}]
    if name == "PoissonSampledDpEvent":
        mechanism = _mechanism(event.event, f"{path}.event")
        return [{"name": "poisson", "rate": float(event.sampling_probability), "steps": count, "mechanism": mechanism}]
    if name == "SampledWithoutReplacementDpEvent":
        mechanism = _mechanism(event.event, f"{path}.event")
        phase = {"name": "without_replacement", "dataset_size": int(event.source_dataset_size), "batch_size": int(event.sample_size)}
        return [{**phase, "steps": count, "mechanism": mechanism}]
    raise InvalidArgument(path, name, "is not supported by from_dp_event (see verifier.adapters.dp_event for the supported nodes)")


def _phases_times(phase: dict, count: int, path: str) -> list[dict]:
    """``count`` runs of one phase: multiply its step count."""
    if phase["name"] == "single":
        return [{**{k: v for k, v in phase.items() if k != "name"}, "name": "composed", "times": count}]
    key = "times" if phase["name"] == "composed" else "steps"
    return [{**phase, key: phase[key] * count}]


def claim_object_from_dp_event(event: Any, *, epsilon: float, delta: float, neighboring: str = "add_or_remove") -> dict:
    """The claim JSON object for "``event`` is (``epsilon``, ``delta``)-DP under ``neighboring``"."""
    phases = _phases(event, 1, "event")
    if not phases:
        raise InvalidArgument("event", _name(event), "releases nothing (only NoOpDpEvents)")
    if len(phases) == 1:
        phase = dict(phases[0])
        mechanism = phase.pop("mechanism")
        scheme = phase
    else:
        mechanism, scheme = None, {"name": "sequence", "phases": phases}
    obj: dict = {"scheme": scheme, "neighboring": neighboring, "epsilon": epsilon, "delta": delta, "source": "dp_accounting DpEvent"}
    if mechanism is not None:
        obj["mechanism"] = mechanism
    return obj


def from_dp_event(event: Any, *, epsilon: float, delta: float, neighboring: str = "add_or_remove") -> Claim:
    """The validated claim for "``event`` is (``epsilon``, ``delta``)-DP under ``neighboring``"
    (the DpEvent nodes of the module docstring). Raises :class:`InvalidArgument` naming the first
    unsupported node by its path in the tree (``event.events[1].event``) or the claim field the
    relation does not allow (e.g. ``replace_one`` under Poisson sampling)."""
    return parse_claim(claim_object_from_dp_event(event, epsilon=epsilon, delta=delta, neighboring=neighboring))
