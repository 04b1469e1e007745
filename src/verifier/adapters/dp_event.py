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

An event is a DpEvent object or its JSON form: dp_accounting's ``to_named_tuple()`` written as a
JSON object (``{"module_name": "dp_accounting.dp_event", "class_name": "GaussianDpEvent",
"noise_multiplier": 1.0}``, nested events as nested objects; :func:`dp_event_json` writes it), which
``verifier certify --dp-event EVENT.json`` reads.

The neighbouring relation is not part of a DpEvent (dp_accounting sets it on the accountant), so it
is an argument: dp_accounting's ``ADD_OR_REMOVE_ONE`` is ``add_or_remove``, ``REPLACE_ONE`` is
``replace_one``.
"""

from __future__ import annotations

from typing import Any, Mapping

from verifier.certify.claim import Claim, parse_claim
from verifier.errors import InvalidArgument

__all__ = ["from_dp_event", "claim_object_from_dp_event", "dp_event_json"]


def _name(event: Any) -> str:
    if isinstance(event, Mapping):
        return str(event.get("class_name", "an object without class_name"))
    return type(event).__name__


def _get(event: Any, field: str, path: str) -> Any:
    """A field of an event object or of its JSON form."""
    try:
        return event[field] if isinstance(event, Mapping) else getattr(event, field)
    except (KeyError, AttributeError):
        raise InvalidArgument(f"{path}.{field}", None, f"the field of {_name(event)} is missing") from None


def dp_event_json(event: Any) -> dict:
    """The JSON form of a DpEvent (its ``to_named_tuple()``, nested tuples as objects)."""

    def plain(value: Any) -> Any:
        if hasattr(value, "_asdict"):
            return {k: plain(v) for k, v in value._asdict().items()}
        if isinstance(value, (list, tuple)):
            return [plain(v) for v in value]
        return value

    return plain(event.to_named_tuple())


def _mechanism(event: Any, path: str) -> dict:
    """The mechanism object of a noise event."""
    if _name(event) == "GaussianDpEvent":
        return {"name": "gaussian", "sigma": _get(event, "noise_multiplier", path), "sensitivity": 1.0}
    if _name(event) == "LaplaceDpEvent":
        return {"name": "laplace", "scale": _get(event, "noise_multiplier", path), "sensitivity": 1.0}
    raise InvalidArgument(path, _name(event), "is not supported as a noise step here (GaussianDpEvent, LaplaceDpEvent)")


def _phases(event: Any, count: int, path: str) -> list[dict]:
    """The phases (scheme objects, each with its mechanism) of ``count`` runs of ``event``."""
    name = _name(event)
    if name == "NoOpDpEvent":
        return []
    if name == "SelfComposedDpEvent":
        return _phases(_get(event, "event", path), count * _count(_get(event, "count", path), f"{path}.count"), f"{path}.event")
    if name == "ComposedDpEvent":
        inner = [p for i, e in enumerate(_get(event, "events", path)) for p in _phases(e, 1, f"{path}.events[{i}]")]
        if count == 1:
            return inner
        if len(inner) == 1:
            return _phases_times(inner[0], count, path)
        raise InvalidArgument(path, name, f"a heterogeneous composition repeated {count} times is not expressible (list it {count} times)")
    if name in ("GaussianDpEvent", "LaplaceDpEvent"):
        mechanism = _mechanism(event, path)
        return [{"name": "single", "mechanism": mechanism} if count == 1 else {"name": "composed", "times": count, "mechanism": mechanism}]
    if name == "PoissonSampledDpEvent":
        mechanism = _mechanism(_get(event, "event", path), f"{path}.event")
        return [{"name": "poisson", "rate": _get(event, "sampling_probability", path), "steps": count, "mechanism": mechanism}]
    if name == "SampledWithoutReplacementDpEvent":
        mechanism = _mechanism(_get(event, "event", path), f"{path}.event")
        phase = {"name": "without_replacement", "dataset_size": _get(event, "source_dataset_size", path), "batch_size": _get(event, "sample_size", path)}
        return [{**phase, "steps": count, "mechanism": mechanism}]
    raise InvalidArgument(path, name, "is not supported by from_dp_event (see verifier.adapters.dp_event for the supported nodes)")


def _count(value: Any, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidArgument(path, value, "must be an integer >= 1")
    return value


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
