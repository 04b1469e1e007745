"""Audit of Microsoft's prv_accountant (Gopi, Lee & Wutschitz 2021): its ``PRVAccountant`` returns
(lower, estimate, upper) on ε(δ) with a stated error ``eps_error``; both ends are held against
verifier's rigorous bracket (the upper end must not lie below verifier's lower bound, the lower end
not above verifier's upper bound). Gaussian compositions and Poisson-subsampled Gaussians (DP-SGD),
add/remove neighbours, δ = 1e-5. The estimate is not a bound and is not judged.
"""

from __future__ import annotations

from verifier.audit import AuditRow, judge, require

__all__ = ["rows", "GRID"]

DELTA = 1e-5
EPS_ERROR = 0.01
#: (noise multiplier, sampling probability, steps); probability 1 is a plain composition.
GRID = [(1.0, 1.0, 10), (4.0, 1.0, 100), (0.8, 0.004, 1000), (1.1, 0.01, 1000), (1.0, 0.05, 100), (2.0, 0.1, 100)]


def rows(examples: int = 0, quick: bool = False) -> tuple[list[AuditRow], list[str]]:
    require("prv_accountant", "prv-accountant")
    from prv_accountant import PRVAccountant
    from prv_accountant.privacy_random_variables import GaussianMechanism, PoissonSubsampledGaussianMechanism

    out: list[AuditRow] = []
    for sigma, rate, steps in GRID[:3] if quick else GRID:
        if rate == 1.0:
            prv = GaussianMechanism(noise_multiplier=sigma)
            scheme = {"name": "composed", "times": steps}
        else:
            prv = PoissonSubsampledGaussianMechanism(sampling_probability=rate, noise_multiplier=sigma)
            scheme = {"name": "poisson", "rate": rate, "steps": steps}
        accountant = PRVAccountant(prvs=[prv], max_self_compositions=[steps], eps_error=EPS_ERROR, delta_error=DELTA / 1000)
        lower, _, upper = accountant.compute_epsilon(delta=DELTA, num_self_compositions=[steps])
        claim = {"mechanism": {"name": "gaussian", "sigma": sigma}, "scheme": scheme, "delta": DELTA, "epsilon": 1.0}
        out.append(judge("prv_accountant PRVAccountant (upper)", claim, float(upper)))
        out.append(judge("prv_accountant PRVAccountant (lower)", claim, float(lower), side="lower"))
    return out, [f"eps_error = {EPS_ERROR}, delta_error = δ/1000"]
