"""The JSON certificate of a claim's verdict, and the schema it follows.

A certificate holds the verdict and its reasons, the claim and how it was modelled, per direction
the best rigorous lower and upper bound on δ at the claimed ε and on ε at the claimed δ (with the
method each came from), every bound every method gave (side, direction, method, citation, time),
the statistical estimates reported beside them, the methods not run and why, and the versions of
verifier and its numeric dependencies. ``certificate.schema.json`` (shipped with the package)
describes it; JSON has no infinities, so an infinite bound is written as the string "inf"/"-inf", and
where no method gave a lower bound on ε the bracket's ``lower`` is null with a ``note`` saying so.
"""

from __future__ import annotations

import datetime
import json
import math
import platform
from importlib import resources
from typing import Sequence

from verifier._types import Bound, Direction, json_number
from verifier.certify.portfolio import Collected, best_bounds
from verifier.certify.verdict import Outcome

__all__ = ["FORMAT", "to_certificate", "schema", "versions", "NO_LOWER_BOUND", "tradeoff_reading"]

#: What a certificate and the text output say where no method gave a lower bound on ε (only
#: upper-bound methods ran): ``"lower": null`` with this note, never the string "-inf".
NO_LOWER_BOUND = "no lower bound computed: only upper-bound methods ran"

#: Identifies the certificate layout; bump when a field changes meaning.
FORMAT = "verifier-certificate/1"

_DISTRIBUTIONS = ("verifier", "numpy", "scipy", "mpmath", "python-flint", "sympy")


def versions() -> dict[str, str]:
    """Versions of Python, verifier and its numeric dependencies ("not installed" where absent)."""
    from importlib.metadata import PackageNotFoundError, version  # here: ~50 ms of start-up (issue 17)

    out = {"python": platform.python_version()}
    for name in _DISTRIBUTIONS:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "not installed"
    return out


def schema() -> dict:
    """The JSON schema of a certificate (``certificate.schema.json`` in this package)."""
    text = resources.files("verifier.certify").joinpath("certificate.schema.json").read_text(encoding="utf-8")
    return json.loads(text)


def _best(bounds: Sequence[Bound], direction: Direction, floor: float) -> dict:
    """The best rigorous bracket in one direction with the method of each end."""
    lower, upper = best_bounds([b for b in bounds if b.rigorous], direction)
    entry = {
        "lower": json_number(lower.value if lower else floor) if (lower or math.isfinite(floor)) else None,
        "lower_method": lower.method if lower else None,
        "upper": json_number(upper.value if upper else math.inf),
        "upper_method": upper.method if upper else None,
    }
    if entry["lower"] is None:  # ε has no trivial floor: say so rather than write "-inf"
        entry["note"] = NO_LOWER_BOUND
    return entry


def _per_direction(outcome: Outcome) -> dict:
    out = {}
    for direction in outcome.claim.directions:
        entry = {}
        for key, collected, floor in (
            ("delta_at_epsilon", outcome.delta, 0.0),
            ("epsilon_at_delta", outcome.epsilon, -math.inf),
        ):
            entry[key] = _best(collected.bounds if collected else (), direction, floor)
        if outcome.rho is not None:
            entry["rho"] = _best(outcome.rho.bounds, direction, 0.0)
        if outcome.tpr is not None:
            entry["tpr_at_fpr"] = _best(outcome.tpr.bounds, direction, 0.0)
        out[direction.value] = entry
    return out


def tradeoff_reading(outcome: Outcome) -> str:
    """A trade-off claim's outcome in one sentence: what the best attacker can do at the claimed FPR."""
    claim, best = outcome.claim, outcome.tpr.combined  # type: ignore[union-attr]
    return (
        f"An attacker who wrongly flags at most {claim.fpr:.4g} of non-members (FPR) correctly flags at most "
        f"{float(best.upper):.6g} and, with the best test, at least {float(best.lower):.6g} of members (TPR), in the worst of "
        f"the directions {', '.join(d.value for d in claim.directions)}; the claim says at most {claim.tpr:.6g}."
    )


def _tradeoff(outcome: Outcome) -> dict:
    """The certificate's ``tradeoff`` object: the TPR curve per direction and the reading."""
    curve = outcome.tpr_curve or {"fpr": []}
    out: dict = {"fpr": curve["fpr"], "reading": tradeoff_reading(outcome)}
    for direction in outcome.claim.directions:
        if direction in curve:
            bracket = curve[direction]
            out[direction.value] = {"tpr_lower": [json_number(float(x)) for x in bracket.lower], "tpr_upper": [json_number(float(x)) for x in bracket.upper]}
    return out


def _all(collected: Collected | None, attribute: str) -> list:
    return [] if collected is None else list(getattr(collected, attribute))


def to_certificate(outcome: Outcome) -> dict:
    """The certificate of ``outcome`` as a JSON-ready dict (see the module docstring)."""
    claim = outcome.claim
    bounds = _all(outcome.delta, "bounds") + _all(outcome.epsilon, "bounds") + _all(outcome.rho, "bounds") + _all(outcome.tpr, "bounds")
    estimates = _all(outcome.delta, "estimates")
    skipped = [f"δ: {s}" for s in _all(outcome.delta, "skipped")] + [f"ε: {s}" for s in _all(outcome.epsilon, "skipped")]
    skipped += [f"ρ: {s}" for s in _all(outcome.rho, "skipped")] + [f"TPR: {s}" for s in _all(outcome.tpr, "skipped")]
    certificate = {
        "format": FORMAT,
        "verdict": outcome.verdict.value,
        "exit_status": outcome.verdict.exit_status,
        "reasons": list(outcome.decision.reasons),
        "claim": claim.to_dict(),
        "model": {
            "scheme": repr(claim.model),
            "directions": [d.value for d in claim.directions],
            "neighboring": claim.modelling,
        },
        "directions": _per_direction(outcome),
        "bounds": [b.to_dict() for b in bounds],
        "estimates": [e.to_dict() for e in estimates],
        "methods_run": sorted(
            set(_all(outcome.delta, "ran")) | set(_all(outcome.epsilon, "ran")) | set(_all(outcome.rho, "ran")) | set(_all(outcome.tpr, "ran"))
        ),
        "skipped": skipped,
        "seconds": outcome.seconds,
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "versions": versions(),
    }
    if outcome.tpr is not None:
        certificate["tradeoff"] = _tradeoff(outcome)
    return certificate
