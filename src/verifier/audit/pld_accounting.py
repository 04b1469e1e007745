"""Audit of ``pld-accounting`` (PLD accounting for random allocation): its
``gaussian_allocation_epsilon_range`` returns (upper, lower) on ε(δ) of k-out-of-t random allocation of
a Gaussian (σ, sensitivity 1) over several epochs, add-or-remove neighbours, from dominating and
dominated discretisations of the allocation PLD. Both ends are held against verifier's rigorous
allocation bracket: the upper end must not lie below verifier's lower bound, the lower end not above
verifier's upper bound.
"""

from __future__ import annotations

from verifier.audit import AuditRow, judge, require
from verifier.audit.random_allocation import GRID  # the same cells as the random-allocation audit

__all__ = ["rows"]


def rows(examples: int = 0, quick: bool = False) -> tuple[list[AuditRow], list[str]]:
    require("PLD_accounting", "pld-accounting")
    from PLD_accounting import gaussian_allocation_epsilon_range

    out: list[AuditRow] = []
    for sigma, steps, k, epochs, delta in GRID[:3] if quick else GRID:
        upper, lower = gaussian_allocation_epsilon_range(delta=delta, sigma=sigma, num_steps=steps, num_selected=k, num_epochs=epochs)
        claim = {"mechanism": {"name": "gaussian", "sigma": sigma}, "scheme": {"name": "allocation", "steps": steps, "k": k, "epochs": epochs}, "delta": delta, "epsilon": 1.0}
        out.append(judge("pld_accounting gaussian_allocation_epsilon_range (upper)", claim, float(upper)))
        out.append(judge("pld_accounting gaussian_allocation_epsilon_range (lower)", claim, float(lower), side="lower"))
    return out, ["default accuracy (epsilon_accuracy = -1: upper/lower within the package's relative accuracy)"]
