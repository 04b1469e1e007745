"""dp_accounting's DpEvent trees as verifier claims.

Every class of dp_accounting 0.6 (and the ones its main branch adds) is read by attribute, so
dp_accounting need not be importable. Nodes with a rigorous model (:data:`MODELLED`):

- ``GaussianDpEvent(noise_multiplier)``: a Gaussian step of sensitivity 1 and σ = noise multiplier;
- ``LaplaceDpEvent(noise_multiplier)``: a Laplace step of sensitivity 1 and scale = noise multiplier;
- ``DiscreteLaplaceDpEvent(noise_parameter, sensitivity)``: the discrete Laplace pair (exact masses,
  :class:`verifier.pairs.DiscreteLaplace`);
- ``DiscreteGaussianDpEvent(sigma, sensitivity, dimension)`` (main branch): the discrete Gaussian pair
  N_ℤ(1, σ²) against N_ℤ(0, σ²) (:class:`verifier.pairs.DiscreteGaussian`), for ``dimension`` 1 and
  ``sensitivity`` 1 only (other values exit 2: the multivariate pair, and the shifts up to an integer
  Δ > 1, are not modelled);
- ``RandomizedResponseDpEvent(noise_parameter, num_buckets)``: randomized response by noise level
  (:class:`verifier.pairs.UniformResponse`, the mechanism on two values; one bucket releases nothing);
- ``MixtureOfGaussiansDpEvent(standard_deviation, sensitivities, sampling_probs)``: the pair
  (Σ p_i N(c_i, σ²), N(0, σ²)) (:func:`verifier.pairs.mixture.mixture_of_gaussians`);
- ``EpsilonDeltaDpEvent(epsilon, delta)`` (dp_accounting's main branch): any (ε, δ)-DP step, the
  (ε₀, δ₀)-randomized-response pair (Steinke 2022, Cor 24);
- ``NonPrivateDpEvent``, and a noise parameter of 0: the release of the record (the pair (1, 0)
  against (0, 1): δ(ε) = 1 for every ε);
- ``SingleEpochTreeAggregationDpEvent(noise_multiplier, step_counts)``: each record lies in one leaf
  of one tree, and the completed dyadic nodes above it number ⌈log₂(T + 1)⌉ for a tree of T steps
  (Kairouz et al. 2021, arXiv 2103.00039, App. D), each with independent N(0, σ²) noise: the
  composition of that many Gaussian steps (the largest over the trees), which is exactly the
  Gaussian with sensitivity √depth (Steinke 2022, Cor 10);
- ``SelfComposedDpEvent(event, count)``, ``ComposedDpEvent(events)``: ``count`` runs, a ``sequence``
  of phases; ``NoOpDpEvent`` releases nothing and is dropped;
- ``PoissonSampledDpEvent(sampling_probability, event)``: Poisson-sampled steps of a noise event;
- ``SampledWithoutReplacementDpEvent(source_dataset_size, sample_size, event)``: fixed-size batches
  (replace-one neighbours only);
- ``SampledWithReplacementDpEvent(source_dataset_size, sample_size, event)``: batches drawn with
  replacement, of a ``GaussianDpEvent`` (replace-one neighbours only; other inner events refused);
- ``TruncatedSubsampledGaussianDpEvent(dataset_size, sampling_probability, truncated_batch_size,
  noise_multiplier)``: truncated Poisson batches of a Gaussian sum (both relations; add/remove with
  the record's dataset of size n);
- ``RandomAllocationDpEvent(event, num_selected, num_steps)`` (main branch): k-out-of-t allocation;
- ``ExponentialMechanismDpEvent(epsilon)``, ``PermuteAndFlipDpEvent(epsilon)`` (main branch): one
  selection over scores that move by at most Δ, the worst score instance
  (:class:`verifier.schemes.Selection`); ε = 0 selects uniformly and releases nothing;
- ``ZCDpEvent(rho, xi)``: a step known only to be (ξ, ρ)-zCDP, the class :class:`verifier.schemes.ZCDP`
  (UPPER: the Rényi curve ξ + ρα; LOWER: its member, the Gaussian with Δ/σ = √(2ρ)); ρ = ξ = 0
  releases nothing; it composes (self-composed, composed); Poisson-sampled it is the class
  :class:`verifier.schemes.SampledZCDP` (UPPER: ξ + ρα per step, no amplification; LOWER: the
  Poisson-sampled Gaussian member); sampled without replacement or allocated it is refused;
- ``RepeatAndSelectDpEvent(event, mean, shape)``: the class :class:`verifier.schemes.RepeatAndSelect`
  over the event's run (UPPER: Papernot & Steinke 2022, Thm 2; LOWER: the run itself), for the
  truncated negative binomial numbers of runs (0 <= shape < ∞: logarithmic at 0, geometric at 1),
  and Poisson runs (shape = ∞: UPPER Thm 6; LOWER the run mixed with ⊥ at e^{−mean}, where the
  repeat-and-select is the whole event; inside a composition only the UPPER side).

The others are refused with one line naming the class and the reason (:data:`REFUSED`).

An event is a DpEvent object or its JSON form: dp_accounting's ``to_named_tuple()`` written as a
JSON object (``{"module_name": "dp_accounting.dp_event", "class_name": "GaussianDpEvent",
"noise_multiplier": 1.0}``, nested events as nested objects; :func:`dp_event_json` writes it), which
``verifier certify --dp-event EVENT.json`` reads.

The neighbouring relation is not part of a DpEvent (dp_accounting sets it on the accountant), so it
is an argument: dp_accounting's ``ADD_OR_REMOVE_ONE`` (and ``REPLACE_SPECIAL``, a record replaced by
one that contributes nothing: the same shift) is ``add_or_remove``, ``REPLACE_ONE`` is
``replace_one``.
"""

from __future__ import annotations

from typing import Any, Mapping

from verifier.certify.claim import Claim, parse_claim
from verifier.errors import InvalidArgument

__all__ = ["from_dp_event", "claim_object_from_dp_event", "dp_event_json", "REFUSED", "MODELLED"]


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
        return "inf" if value == float("inf") else value  # strict JSON has no Infinity (a Poisson repeat-and-select's shape)

    return plain(event.to_named_tuple())


def _non_private() -> dict:
    """The release of the record: δ(ε) = 1 for every ε (NonPrivateDpEvent, a noise parameter of 0)."""
    return {"name": "finite", "p": [1.0, 0.0], "q": [0.0, 1.0]}

#: Classes refused (exit 2), with the reason: no rigorous bound in verifier yet.
REFUSED = {
    "UnsupportedDpEvent": "dp_accounting's placeholder for a mechanism it cannot describe: there is nothing to bound",
}

#: Classes with a model: what each maps to (both sides of every bound are available for them).
MODELLED = {
    "GaussianDpEvent": "gaussian (σ = noise multiplier, Δ = 1)",
    "LaplaceDpEvent": "laplace (b = noise multiplier, Δ = 1)",
    "DiscreteLaplaceDpEvent": "discrete_laplace (exact masses)",
    "DiscreteGaussianDpEvent": "discrete_gaussian (σ, sensitivity 1, dimension 1; masses as balls, tails bounded)",
    "RandomizedResponseDpEvent": "rr_uniform (the mechanism on two values)",
    "MixtureOfGaussiansDpEvent": "gaussian_mixture (Σ p_i N(c_i, σ²) against N(0, σ²))",
    "EpsilonDeltaDpEvent": "approx_dp ((ε₀, δ₀)-randomized response)",
    "NonPrivateDpEvent": "finite ((1, 0) against (0, 1): δ(ε) = 1)",
    "SingleEpochTreeAggregationDpEvent": "composed gaussian, ⌈log₂(T + 1)⌉ steps",
    "SelfComposedDpEvent": "composed / more steps",
    "ComposedDpEvent": "sequence",
    "PoissonSampledDpEvent": "poisson",
    "SampledWithoutReplacementDpEvent": "without_replacement (replace-one)",
    "SampledWithReplacementDpEvent": "with_replacement of a Gaussian event (replace-one)",
    "TruncatedSubsampledGaussianDpEvent": "truncated_poisson (gaussian σ = noise multiplier, Δ = 1)",
    "RandomAllocationDpEvent": "allocation",
    "ExponentialMechanismDpEvent": "exponential (the worst score instance: eps-BR class pair above, two-candidate instances below)",
    "PermuteAndFlipDpEvent": "permute_and_flip (the worst score instance: Laplace with Delta/b = eps above and below)",
    "ZCDpEvent": "zcdp (the worst (ξ, ρ)-zCDP step: Rényi curve above, Gaussian member below)",
    "RepeatAndSelectDpEvent": "repeat_and_select (Papernot & Steinke Thm 2 / Thm 6 (shape = ∞) above, the run below)",
    "NoOpDpEvent": "dropped (no release)",
}

#: The selection events (main branch) and their mechanism kinds; ε = 0 selects uniformly (no release).
_SELECTIONS = {"ExponentialMechanismDpEvent": "exponential", "PermuteAndFlipDpEvent": "permute_and_flip"}

#: Classes that mean "no release": dropped from the tree.
NOTHING = ("NoOpDpEvent",)


def _number(event: Any, field: str, path: str) -> float:
    value = _get(event, field, path)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        raise InvalidArgument(f"{path}.{field}", value, "must be a number")
    return float(value)


def _noise(event: Any, field: str, path: str, mechanism: dict) -> dict:
    """``mechanism``, or the release of the record where the noise parameter ``field`` of ``event``
    is 0 (as dp_accounting treats it)."""
    return _non_private() if _number(event, field, path) == 0.0 else mechanism


def _mechanism(event: Any, path: str) -> dict | None:
    """The mechanism object of a one-step noise event; None when it releases nothing."""
    name = _name(event)
    if name == "GaussianDpEvent":
        sigma = _number(event, "noise_multiplier", path)
        return _noise(event, "noise_multiplier", path, {"name": "gaussian", "sigma": sigma, "sensitivity": 1.0})
    if name == "LaplaceDpEvent":
        scale = _number(event, "noise_multiplier", path)
        return _noise(event, "noise_multiplier", path, {"name": "laplace", "scale": scale, "sensitivity": 1.0})
    if name == "DiscreteLaplaceDpEvent":
        parameter = _number(event, "noise_parameter", path)
        mechanism = {"name": "discrete_laplace", "parameter": parameter, "sensitivity": _get(event, "sensitivity", path)}
        return _noise(event, "noise_parameter", path, mechanism)
    if name == "DiscreteGaussianDpEvent":
        return _discrete_gaussian(event, path)
    if name == "RandomizedResponseDpEvent":
        buckets = _get(event, "num_buckets", path)
        if buckets == 1:
            return None
        return {"name": "rr_uniform", "noise": _number(event, "noise_parameter", path), "k": buckets}
    if name == "MixtureOfGaussiansDpEvent":
        sensitivities = list(_get(event, "sensitivities", path))
        if all(c == 0 for c in sensitivities):
            return None
        mechanism = {"name": "gaussian_mixture", "sigma": _number(event, "standard_deviation", path),
                     "sensitivities": sensitivities, "probabilities": list(_get(event, "sampling_probs", path))}
        return _noise(event, "standard_deviation", path, mechanism)
    if name == "EpsilonDeltaDpEvent":
        delta = _number(event, "delta", path)
        return _non_private() if delta == 1.0 else {"name": "approx_dp", "epsilon0": _number(event, "epsilon", path), "delta0": delta}
    if name == "NonPrivateDpEvent":
        return _non_private()
    if name == "ZCDpEvent":
        return _zcdp(event, path)
    if name in _SELECTIONS:
        epsilon = _number(event, "epsilon", path)
        if not 0.0 <= epsilon < float("inf"):
            raise InvalidArgument(f"{path}.epsilon", epsilon, "must be a finite number >= 0")
        return None if epsilon == 0.0 else {"name": _SELECTIONS[name], "epsilon": epsilon}
    if name in REFUSED:
        raise InvalidArgument(path, name, f"is not supported: {REFUSED[name]}")
    if name in _STRUCTURE:
        raise InvalidArgument(path, name, "is not a one-step noise event (a sampling node samples one noise step)")
    if hasattr(event, "ledger"):  # a PrivacyAccountant: what it composed is its ledger
        raise InvalidArgument(path, name, "is a dp_accounting accountant, not a DpEvent", fix="pass its ledger (accountant.ledger), or the accountant itself to verifier.certify")
    raise InvalidArgument(path, name, "is not a dp_accounting event class verifier knows (see verifier.adapters.dp_event)")


def _discrete_gaussian(event: Any, path: str) -> dict:
    """The univariate discrete Gaussian of sensitivity 1 (the defaults: sensitivity 1.0, dimension None)."""
    sigma = _number(event, "sigma", path)
    sensitivity = _number(event, "sensitivity", path) if _has(event, "sensitivity") else 1.0
    dimension = _get(event, "dimension", path) if _has(event, "dimension") else None
    if dimension != 1:
        raise InvalidArgument(f"{path}.dimension", dimension, "must be 1: the multivariate discrete Gaussian (and an unknown "
                              "dimension, None) is not modelled")
    if sensitivity != 1.0:
        raise InvalidArgument(f"{path}.sensitivity", sensitivity, "must be 1: the shifts of an integer-valued query up to a "
                              "larger sensitivity are not modelled")
    return _noise(event, "sigma", path, {"name": "discrete_gaussian", "sigma": sigma})


def _zcdp(event: Any, path: str) -> dict | None:
    """A (ξ, ρ)-zCDP step (``xi`` absent reads as 0); nothing when ρ = ξ = 0 (D_α = 0: no release)."""
    rho = _number(event, "rho", path)
    xi = _number(event, "xi", path) if _has(event, "xi") else 0.0
    for field, value in (("rho", rho), ("xi", xi)):
        if not 0.0 <= value < float("inf"):
            raise InvalidArgument(f"{path}.{field}", value, "must be a finite number >= 0")
    if rho == 0.0 and xi == 0.0:
        return None
    if rho == 0.0:
        raise InvalidArgument(f"{path}.rho", rho, f"must be > 0 when xi > 0 (xi = {xi:g}): a step bounded by D_alpha <= xi alone has no Gaussian member to bound it from below")
    return {"name": "zcdp", "rho": rho, "xi": xi}


def _has(event: Any, field: str) -> bool:
    return field in event if isinstance(event, Mapping) else hasattr(event, field)


#: Classes that structure a tree rather than add noise (read by :func:`_phases`).
_STRUCTURE = ("SelfComposedDpEvent", "ComposedDpEvent", "SingleEpochTreeAggregationDpEvent", "PoissonSampledDpEvent",
              "SampledWithoutReplacementDpEvent", "RandomAllocationDpEvent", "RepeatAndSelectDpEvent", "SampledWithReplacementDpEvent",
              "TruncatedSubsampledGaussianDpEvent", *NOTHING)


def _tree_depth(event: Any, path: str) -> int:
    """The most tree nodes a record lies in: ⌈log₂(T + 1)⌉ = T.bit_length() for the largest T."""
    counts = _get(event, "step_counts", path)
    counts = counts if isinstance(counts, (list, tuple)) else [counts]
    if not counts or any(isinstance(c, bool) or not isinstance(c, int) or c < 0 for c in counts):
        raise InvalidArgument(f"{path}.step_counts", counts, "must be an integer >= 0 or a non-empty list of them")
    return max(counts).bit_length()


def _steps(mechanism: dict | None, count: int) -> list[dict]:
    """``count`` runs of one noise step (nothing when it releases nothing)."""
    if mechanism is None:
        return []
    return [{"name": "single", "mechanism": mechanism} if count == 1 else {"name": "composed", "times": count, "mechanism": mechanism}]


def _sampled(event: Any, path: str, phase: dict) -> list[dict]:
    """A sampling node over a noise event (nothing when the event releases nothing)."""
    mechanism = _mechanism(_get(event, "event", path), f"{path}.event")
    if mechanism is not None and mechanism["name"] == "zcdp" and phase["name"] != "poisson":
        raise InvalidArgument(path, _name(event), "samples a ZCDpEvent without replacement or by allocation: a step known only through "
                              "its Rényi bound is modelled unsampled or Poisson-sampled (state the mechanism)")
    return [] if mechanism is None else [{**phase, "mechanism": mechanism}]


def _phases(event: Any, count: int, path: str) -> list[dict]:
    """The phases (scheme objects, each with its mechanism) of ``count`` runs of ``event``."""
    name = _name(event)
    if name in NOTHING:
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
    if name == "SingleEpochTreeAggregationDpEvent":
        sigma = _number(event, "noise_multiplier", path)
        gaussian = _noise(event, "noise_multiplier", path, {"name": "gaussian", "sigma": sigma, "sensitivity": 1.0})
        return _steps(gaussian, count * _tree_depth(event, path)) if _tree_depth(event, path) else []
    if name == "PoissonSampledDpEvent":
        rate = _number(event, "sampling_probability", path)
        return [] if rate == 0.0 else _sampled(event, path, {"name": "poisson", "rate": rate, "steps": count})
    if name == "SampledWithoutReplacementDpEvent":
        phase = {"name": "without_replacement", "dataset_size": _get(event, "source_dataset_size", path), "batch_size": _get(event, "sample_size", path)}
        return _sampled(event, path, {**phase, "steps": count})
    if name == "SampledWithReplacementDpEvent":
        inner = _get(event, "event", path)
        if _name(inner) != "GaussianDpEvent":
            raise InvalidArgument(f"{path}.event", _name(inner), "is not supported under SampledWithReplacementDpEvent: only a GaussianDpEvent is modelled")
        phase = {"name": "with_replacement", "dataset_size": _get(event, "source_dataset_size", path), "sample_size": _get(event, "sample_size", path)}
        return _sampled(event, path, {**phase, "steps": count})
    if name == "TruncatedSubsampledGaussianDpEvent":
        return _truncated(event, count, path)
    if name == "RandomAllocationDpEvent":
        phase = {"name": "allocation", "steps": _get(event, "num_steps", path), "k": _get(event, "num_selected", path), "epochs": count}
        return _sampled(event, path, phase)
    if name == "RepeatAndSelectDpEvent":
        return _repeat_and_select(event, count, path)
    if name in REFUSED:
        raise InvalidArgument(path, name, f"is not supported: {REFUSED[name]}")
    return _steps(_mechanism(event, path), count)


def _repeat_and_select(event: Any, count: int, path: str) -> list[dict]:
    """``count`` repeat-and-selects of the event's run (nothing when the run releases nothing)."""
    inner = _phases(_get(event, "event", path), 1, f"{path}.event")
    if not inner:
        return []
    mean, shape = _number(event, "mean", path), _get(event, "shape", path)
    run = dict(inner[0]) if len(inner) == 1 else {"name": "sequence", "phases": inner}
    shape = "inf" if shape == float("inf") else shape  # Poisson runs; strict JSON has no Infinity
    return [{"name": "repeat_and_select", "run": run, "mean": mean, "shape": shape, "times": count}]


def _truncated(event: Any, count: int, path: str) -> list[dict]:
    """``count`` truncated-Poisson Gaussian steps; as dp_accounting reads the event, a rate, batch
    size or dataset size of 0 releases nothing and a noise multiplier of 0 releases the record."""
    sigma = _number(event, "noise_multiplier", path)
    fields = {"dataset_size": _get(event, "dataset_size", path), "rate": _number(event, "sampling_probability", path),
              "max_batch": _get(event, "truncated_batch_size", path)}
    if any(isinstance(v, (int, float)) and not isinstance(v, bool) and v == 0 for v in fields.values()):
        return []
    if sigma == 0.0:
        return _steps(_non_private(), count)
    return [{"name": "truncated_poisson", **fields, "steps": count, "mechanism": {"name": "gaussian", "sigma": sigma, "sensitivity": 1.0}}]


def _count(value: Any, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InvalidArgument(path, value, "must be an integer >= 1")
    return value


def _phases_times(phase: dict, count: int, path: str) -> list[dict]:
    """``count`` runs of one phase: multiply its step count."""
    if phase["name"] == "single":
        return [{**{k: v for k, v in phase.items() if k != "name"}, "name": "composed", "times": count}]
    key = {"composed": "times", "allocation": "epochs", "repeat_and_select": "times"}.get(phase["name"], "steps")
    return [{**phase, key: phase[key] * count}]


def claim_object_from_dp_event(event: Any, *, epsilon: float, delta: float, neighboring: str = "add_or_remove") -> dict:
    """The claim JSON object for "``event`` is (``epsilon``, ``delta``)-DP under ``neighboring``"."""
    phases = _phases(event, 1, "event")
    if not phases:
        raise InvalidArgument("event", _name(event), "releases nothing (only NoOpDpEvents)")
    if len(phases) == 1:
        phase = dict(phases[0])
        mechanism = phase.pop("mechanism", None)  # a repeat-and-select carries its run's
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
    relation does not allow (e.g. ``replace_one`` under Poisson sampling). Decide it with
    ``verifier.certify(claim)``, or give ``event`` itself to ``verifier.certify`` (:mod:`verifier.api`)."""
    return parse_claim(claim_object_from_dp_event(event, epsilon=epsilon, delta=delta, neighboring=neighboring))
