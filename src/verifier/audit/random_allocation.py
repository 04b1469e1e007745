"""Audit of ``random-allocation`` (the package of Feldman & Shenfeld's random-allocation paper): its
ε(δ) for k-out-of-t random allocation of a Gaussian (σ, sensitivity 1), add-or-remove neighbours
(``Direction.BOTH``), held against verifier's rigorous allocation bracket.

Judged as claimed UPPER bounds: ``analytic`` (their Thm, may answer ∞), ``decomposition`` (k = 1, one
epoch), ``RDP_DCO`` and ``recursive``, and ``direct`` (RDP of the allocation, orders 2…64). Judged as a
claimed LOWER bound: ``lower_bound`` (k = 1, one epoch; unsound above verifier's upper bound). Not
judged: ``combined`` (the minimum of the above) and the Monte Carlo estimate (not a bound). A method
that refuses the parameters (``ValueError``) is listed in the notes.
"""

from __future__ import annotations

import math
import warnings

from verifier.audit import AuditRow, judge, require

__all__ = ["rows", "GRID", "UPPER_METHODS"]

#: (σ, steps t, selected k, epochs, δ): DP-SGD-like settings, t from 10 to 100.
GRID = [(1.0, 10, 1, 1, 1e-5), (2.0, 100, 1, 1, 1e-5), (0.8, 50, 1, 1, 1e-6), (1.5, 100, 2, 1, 1e-5), (1.0, 20, 1, 3, 1e-5)]
#: The package's functions whose ε is a claimed upper bound (module of random_allocation_scheme, function).
UPPER_METHODS = [
    ("analytic", "allocation_epsilon_analytic"),
    ("decomposition", "allocation_epsilon_decomposition"),
    ("RDP_DCO", "allocation_epsilon_RDP_DCO"),
    ("recursive", "allocation_epsilon_recursive"),
    ("direct", "allocation_epsilon_direct"),
]


def rows(examples: int = 0, quick: bool = False) -> tuple[list[AuditRow], list[str]]:
    require("random_allocation", "random-allocation==1.0.5 pandas")
    import importlib

    from random_allocation import PrivacyParams, SchemeConfig
    from random_allocation.comparisons.structs import Direction, Verbosity
    from random_allocation.random_allocation_scheme.lower_bound import allocation_epsilon_lower_bound

    config = SchemeConfig(verbosity=Verbosity.NONE, allocation_direct_alpha_orders=list(range(2, 65)))
    out: list[AuditRow] = []
    refused: list[str] = []
    for sigma, steps, k, epochs, delta in GRID[:3] if quick else GRID:
        params = PrivacyParams(sigma=sigma, num_steps=steps, num_selected=k, num_epochs=epochs, delta=delta)
        claim = {"mechanism": {"name": "gaussian", "sigma": sigma}, "scheme": {"name": "allocation", "steps": steps, "k": k, "epochs": epochs}, "delta": delta, "epsilon": 1.0}
        calls = [(name, getattr(importlib.import_module(f"random_allocation.random_allocation_scheme.{name}"), fn), "upper") for name, fn in UPPER_METHODS]
        calls.append(("lower_bound", allocation_epsilon_lower_bound, "lower"))
        for name, function, side in calls:
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    eps = float(function(params, config, Direction.BOTH))
            except ValueError as exc:
                refused.append(f"{name} refuses σ={sigma:g}, t={steps}, k={k}, epochs={epochs}: {str(exc).splitlines()[0][:100]}")
                continue
            note = "" if math.isfinite(eps) else "the method answered ∞ (no bound at these parameters)"
            out.append(judge(f"random_allocation {name} ({side})", claim, eps, side=side, note=note))
    return out, refused
