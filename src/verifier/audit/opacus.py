"""Audit of Opacus's accountants (``RDPAccountant``, ``PRVAccountant``, ``GaussianAccountant``) on
realistic DP-SGD runs: Poisson sampling at rates 0.4%–5% for 100–2000 steps with noise multipliers
0.8–1.5, add/remove neighbours (Opacus's relation), δ = 1e-5. Nothing is trained: each accountant's
``history`` is filled by ``step()`` calls and its ``get_epsilon`` read, and the claim is built by
:func:`verifier.adapters.from_opacus`.

The GaussianAccountant is Opacus's f-DP central-limit approximation (Bu et al. 2020, μ-GDP from
the CLT of Dong, Roth & Su, Thm 5; Opacus itself warns it "can underestimate"): it is not a bound,
so rows where it falls below verifier's rigorous lower bound are findings about an approximation
used as if it were one. The μ it computes also states a whole trade-off curve (μ-GDP: an attacker at
FPR α has TPR at most Φ(Φ⁻¹(α) + μ)); those TPRs are held against verifier's TPR bracket too (issue 26).

Shuffled runs (``make_private(..., poisson_sampling=False)``: the caller's ``DataLoader(shuffle=True)``
is kept and the history still reads as Poisson at rate 1/len(loader)) are audited too: the ε each
accountant reports for such a history is held against the ``shuffled`` scheme's bracket under
replace-one neighbours (:func:`verifier.adapters.from_opacus` with the loader), whose lower end is
attained by a pair of datasets; a row below it carries the ``verifier certify`` reproducer.
"""

from __future__ import annotations

import warnings

from verifier.adapters.opacus import from_opacus
from verifier.audit import AuditRow, catalogue_rows, judge, judge_tpr, require

__all__ = ["rows", "history_epsilons", "GRID", "QUICK_GRID", "SHUFFLED_GRID", "QUICK_SHUFFLED_GRID", "TPR_FPRS"]

#: False-positive rates at which the GaussianAccountant's implied TPR is checked (issue 26).
TPR_FPRS = (1e-3, 1e-2)

DELTA = 1e-5
#: (noise multiplier, sample rate, steps) of the DP-SGD runs audited.
GRID = [(s, q, t) for s in (0.8, 1.0, 1.5) for q in (0.004, 0.01, 0.05) for t in (100, 1000)]
QUICK_GRID = [(1.0, 0.01, 1000), (1.0, 0.05, 100), (0.8, 0.05, 100)]
#: (noise multiplier, dataset size, batch size, epochs, drop_last) of the shuffled runs audited.
SHUFFLED_GRID = [(1.1, 60000, 256, 10, False), (1.0, 50000, 512, 5, True), (2.0, 51200, 512, 20, False)]
QUICK_SHUFFLED_GRID = SHUFFLED_GRID[:1]


def rows(examples: int = 0, quick: bool = False) -> tuple[list[AuditRow], list[str]]:
    require("opacus", "'verifier[opacus]' (Opacus; it pulls in torch: see the README's set-up)")
    out: list[AuditRow] = []
    for sigma, rate, steps in QUICK_GRID if quick else GRID:
        history = [(sigma, rate, steps)]  # what `steps` calls of step() leave behind
        found = history_epsilons(history, DELTA)
        claim = _claim(history)
        out += [judge(f"opacus {name}", claim, eps) for name, eps in found.items()]
        out += _gdp_tpr_rows(claim, sigma, rate, steps)
    out += _shuffled_rows(QUICK_SHUFFLED_GRID if quick else SHUFFLED_GRID)
    if examples:
        out += _hypothesis_rows(examples)
    notes = [
        "GaussianAccountant is a central-limit approximation (Opacus: 'can underestimate privacy expenditure'), not a bound",
        "PRVAccountant returns its upper estimate (eps_error 0.01 by default); a row below the lower bound is outside its stated error",
        "poisson_sampling=False rows: Opacus accounts a shuffled loader as Poisson sampling at rate 1/len(loader) (add/remove); "
        "verifier holds that ε against the shuffled scheme under replace-one, whose lower end is attained by a pair of datasets",
        "GaussianAccountant (μ-GDP) rows with quantity tpr: the membership attacker's TPR at the stated FPR that μ implies, "
        "Φ(Φ⁻¹(α) + μ), held against verifier's rigorous TPR bracket",
    ]
    return out, notes


def _shuffled_rows(grid: list[tuple[float, int, int, int, bool]]) -> list[AuditRow]:
    """One row per accountant and shuffled run: what the accountant reports for the history that
    ``make_private(..., poisson_sampling=False)`` leaves behind, against the shuffled scheme."""
    import torch

    out: list[AuditRow] = []
    for sigma, n, batch, epochs, drop_last in grid:
        loader = torch.utils.data.DataLoader(torch.utils.data.TensorDataset(torch.zeros(n, 1)), batch_size=batch, shuffle=True, drop_last=drop_last)
        history = [(sigma, 1 / len(loader), epochs * len(loader))]  # what Opacus records for this loader
        claim = _claim(history, loader)
        out += [judge(f"opacus {name} (poisson_sampling=False)", claim, eps) for name, eps in history_epsilons(history, DELTA).items()]
    return out


class _Recorded:
    """An accountant's history alone (what :func:`from_opacus` reads)."""

    def __init__(self, history: list[tuple[float, float, int]]) -> None:
        self.history = history


def _claim(history: list[tuple[float, float, int]], loader=None) -> dict:
    """The claim object of ``history`` (over the shuffling ``loader`` when given) that every
    accountant's ε is judged on."""
    claim = from_opacus(_Recorded(history), delta=DELTA, epsilon=1.0, data_loader=loader).to_dict()
    return {**claim, "source": "opacus accountant history"}


def history_epsilons(history: list[tuple[float, float, int]], delta: float) -> dict[str, float]:
    """The ε each Opacus accountant reports at ``delta`` for ``history`` (phases of (noise
    multiplier, sample rate, steps)), by class name. The GaussianAccountant reads only the last phase
    (and its step() refuses a second noise level), so it is run on one-phase histories only."""
    from opacus.accountants import GaussianAccountant, PRVAccountant, RDPAccountant

    out = {}
    for kind in (RDPAccountant, PRVAccountant, GaussianAccountant):
        if kind is GaussianAccountant and len(history) > 1:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the GDP accountant warns on every construction
            accountant = kind()
            accountant.history = list(history)
            out[kind.__name__] = float(accountant.get_epsilon(delta=delta))
    return out


def _gdp_tpr_rows(claim: dict, sigma: float, rate: float, steps: int) -> list[AuditRow]:
    """The membership-inference TPR the GaussianAccountant's μ implies (μ-GDP: TPR(α) = Φ(Φ⁻¹(α) + μ),
    Dong, Roth & Su 2022, Eq. (2.3)) at each FPR of :data:`TPR_FPRS`, against verifier's TPR bracket."""
    from opacus.accountants.analysis.gdp import compute_mu_poisson
    from scipy.stats import norm

    mu = float(compute_mu_poisson(steps=steps, noise_multiplier=sigma, sample_rate=rate))
    return [
        judge_tpr("opacus GaussianAccountant (μ-GDP)", claim, fpr, float(norm.cdf(norm.ppf(fpr) + mu)), note=f"μ = {mu:.6g}")
        for fpr in TPR_FPRS
    ]


def _hypothesis_rows(examples: int) -> list[AuditRow]:
    """The catalogue on Opacus's RDP and PRV accountants (Poisson-sampled Gaussian runs)."""
    from opacus.accountants import PRVAccountant, RDPAccountant

    from verifier.properties.accountant import Accountant
    from verifier.schemes import Poisson

    out = []
    for kind in (RDPAccountant, PRVAccountant):
        def epsilon(scheme, delta, kind=kind):
            accountant = kind()
            accountant.history = [(scheme.pair.sigma / scheme.pair.sensitivity, scheme.rate, scheme.steps)]
            return float(accountant.get_epsilon(delta=delta))

        out += catalogue_rows(Accountant(f"opacus {kind.__name__}", epsilon, schemes=(Poisson,)), examples)
    return out
