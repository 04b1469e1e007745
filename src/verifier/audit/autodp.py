"""Audit of autodp's Gaussian mechanism: every route ``GaussianMechanism`` offers to (ε, δ) (the
analytical Gaussian of Balle & Wang 2018, the default RDP conversion, the fDP-based and basic RDP
conversions, the characteristic-function ``phi`` route) and the ``ana_gaussian_mech`` calibration,
on σ from 0.05 to 200 and δ from 1e-12 to 0.1. A Gaussian step's true ε(δ) is known exactly
(verifier's exact method), so any ε below it, negative ones included, is a finding.
"""

from __future__ import annotations

import contextlib
import io
import math
import warnings

import numpy as np

from verifier.audit import AuditRow, judge, require

__all__ = ["rows", "ROUTES"]

#: Route name -> GaussianMechanism keyword arguments.
ROUTES = {
    "analytical (approxDP)": dict(RDP_off=True, approxDP_off=False),
    "default (RDP + analytical)": dict(),
    "RDP, fDP-based conversion": dict(approxDP_off=True, use_fDP_based_RDP_to_approxDP_conversion=True),
    "phi (characteristic function)": dict(RDP_off=True, approxDP_off=True, phi_off=False),
}


def _claim(sigma: float, delta: float) -> dict:
    return {"mechanism": {"name": "gaussian", "sigma": sigma}, "scheme": {"name": "single"}, "delta": delta, "epsilon": 1.0}


def rows(examples: int = 0, quick: bool = False) -> tuple[list[AuditRow], list[str]]:
    require("autodp", "autodp")
    from autodp.mechanism_zoo import GaussianMechanism
    from autodp.privacy_calibrator import ana_gaussian_mech

    sigmas = [0.5, 5.0] if quick else [float(s) for s in np.geomspace(0.05, 200, 9)]
    deltas = [1e-6, 0.1] if quick else [1e-12, 1e-8, 1e-5, 1e-3, 0.1]
    out: list[AuditRow] = []
    failures: list[str] = []
    for route, kwargs in ROUTES.items():
        for sigma in sigmas:
            mechanism = GaussianMechanism(sigma, name="GM", **kwargs)
            for delta in deltas:
                try:
                    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
                        warnings.simplefilter("ignore")
                        eps = float(mechanism.get_approxDP(delta))
                except Exception as exc:  # a peer's own failure is reported, not raised
                    failures.append(f"GaussianMechanism {route} σ={sigma:g} δ={delta:g}: {type(exc).__name__}: {exc}")
                    continue
                if not math.isnan(eps):
                    out.append(judge(f"autodp GaussianMechanism {route}", _claim(sigma, delta), eps, note="negative ε" if eps < 0 else ""))
    for epsilon in [0.1, 1.0] if quick else [0.01, 0.1, 1.0, 5.0]:
        for delta in deltas:
            sigma = float(ana_gaussian_mech(epsilon, delta)["sigma"])
            out.append(judge("autodp ana_gaussian_mech", _claim(sigma, delta), epsilon, note=f"calibrated σ = {sigma!r} for target ε = {epsilon}"))
    return out, failures
