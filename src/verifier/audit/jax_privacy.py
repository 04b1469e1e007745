"""Audit of jax_privacy 2.0's DpEvent builders (``jax_privacy.experimental.accounting``):
``dpsgd_event``, ``fixed_dpsgd_event`` (without and with replacement), ``truncated_dpsgd_event``
and ``amplified_bandmf_event`` build dp_accounting events, which jax_privacy accounts with
dp_accounting's accountants; each event is judged as in :mod:`verifier.audit.dp_accounting`
(:func:`~verifier.audit.dp_accounting.judge_event`), grouped by builder. Sampling with replacement,
which verifier bounds but dp_accounting 0.6 does not account, is listed with the reason.

jax_privacy's Monte Carlo accountant (``jax_privacy.experimental.monte_carlo``: privacy-loss
samples of amplified DP-BandMF's dominating pair, δ(ε) estimated by their mean, and Algorithm 5 of
arXiv 2602.09338, which accepts (ε, δ) when the mean is at most ``get_base_delta(N, δ)``, a
Hoeffding/KL tail bound), on balls-in-bins sampling with C = I (1-out-of-t random allocation of a
Gaussian step: verifier's ``allocation`` scheme), both directions (``positive_sample`` True: REMOVE;
False: ADD). Each cell repeats the estimate :data:`MC_REPEATS` times with :data:`MC_SAMPLES` samples
and reports, against verifier's rigorous bracket on δ(ε): how many of the KL-Chernoff upper
confidence bounds at level 1 − :data:`MC_LEVEL` fall below the rigorous lower end (a confidence
bound may, at its stated rate: the row is UNSOUND only when the count exceeds the binomial 99.9%
quantile of that rate), and how often Algorithm 5's check accepts a δ below the rigorous lower end
(against the tail bound it states for that δ).

Its ``CanaryScoreAuditor`` (``jax_privacy.auditing``) turns attack scores of held-in and held-out
canaries into lower bounds on ε; on scores drawn from randomized response and a Gaussian step each
lower bound is held against verifier's rigorous UPPER bound on ε(δ) of that mechanism
(:func:`auditor_rows`).
"""

from __future__ import annotations

import math
from dataclasses import replace

from verifier.audit import AuditRow, require
from verifier.audit.dp_accounting import NOT_ACCEPTED, judge_event

__all__ = ["rows", "monte_carlo_rows", "kl_upper_confidence", "MC_CELLS", "MC_SAMPLES", "MC_REPEATS", "MC_LEVEL", "auditor_rows", "AUDITOR_CELLS", "AUDITOR_REPEATS", "AUDITOR_SIGNIFICANCE"]


def rows(examples: int = 0, quick: bool = False) -> tuple[list[AuditRow], list[str], list[tuple[str, str]]]:
    require("jax_privacy.experimental.accounting", "jax-privacy")
    require("dp_accounting", "dp-accounting")
    from jax_privacy.experimental import accounting as A

    cells = [
        ("dpsgd_event", "add_or_remove", A.dpsgd_event(1.1, 1000, sampling_prob=0.01)),
        ("fixed_dpsgd_event", "replace_one", A.fixed_dpsgd_event(4.0, 100, dataset_size=1000, batch_size=100)),
        ("truncated_dpsgd_event", "add_or_remove", A.truncated_dpsgd_event(2.0, 10, sampling_prob=0.05, num_examples=1000, truncated_batch_size=40)),
        ("amplified_bandmf_event", "add_or_remove", A.amplified_bandmf_event(3.0, 100, num_bands=8, sampling_prob=0.05)),
    ]
    if not quick:
        cells += [
            ("dpsgd_event", "replace_one", A.dpsgd_event(1.1, 1000, sampling_prob=0.01)),
            ("fixed_dpsgd_event", "replace_one", A.fixed_dpsgd_event(1.0, 100, dataset_size=1000, batch_size=1000)),
            ("truncated_dpsgd_event", "replace_one", A.truncated_dpsgd_event(2.0, 10, sampling_prob=0.05, num_examples=1000, truncated_batch_size=40)),
        ]
    refused: dict[str, set[str]] = {}
    out = [row for builder, relation, event in cells for row in judge_event(relation, event, builder, refused)]
    notes = [f"{who} refuses {', '.join(sorted(kinds))}" for who, kinds in sorted(refused.items())]
    unjudged = [("fixed_dpsgd_event(replace=True)", NOT_ACCEPTED["SampledWithReplacementDpEvent"])]
    try:
        import jax_privacy.experimental.monte_carlo  # noqa: F401
    except ImportError:
        notes.append("this jax_privacy has no experimental.monte_carlo: its Monte Carlo accountant was not audited")
    else:
        out += monte_carlo_rows(quick)
    try:
        from jax_privacy.auditing import CanaryScoreAuditor  # noqa: F401
    except ImportError:
        notes.append("this jax_privacy has no auditing.CanaryScoreAuditor: its lower bounds were not audited")
    else:
        out += auditor_rows(quick)
    return out, notes, unjudged


#: (claim mechanism, canaries of each kind, δ) of the auditor cells: randomized response (scores the
#: released bit, ties broken by independent uniform noise) and the Gaussian mechanism (the score is the output).
AUDITOR_CELLS = (({"name": "rr", "epsilon0": 1.0}, 10_000, 1e-5), ({"name": "gaussian", "sigma": 1.0}, 10_000, 1e-5))
#: Runs per cell and the auditor's significance (its stated failure probability).
AUDITOR_REPEATS = 10
AUDITOR_SIGNIFICANCE = 0.05


def _canaries(mechanism: dict, count: int, rng) -> tuple:
    """Scores of ``count`` held-in and ``count`` held-out canaries, drawn from the mechanism's pair."""
    if mechanism["name"] == "rr":
        keep = math.exp(mechanism["epsilon0"]) / (1 + math.exp(mechanism["epsilon0"]))
        return (rng.random(count) < keep) + 1e-6 * rng.random(count), (rng.random(count) >= keep) + 1e-6 * rng.random(count)
    return rng.normal(1.0 / mechanism["sigma"], 1.0, count), rng.normal(0.0, 1.0, count)


def auditor_rows(quick: bool) -> list[AuditRow]:
    """jax_privacy's CanaryScoreAuditor (``epsilon_clopper_pearson``, a lower bound on ε at its
    significance, and ``epsilon_from_gdp``, "an estimate" by its docstring, used as a lower bound in
    audits) on canary scores drawn from a mechanism verifier brackets: per method, how many of
    :data:`AUDITOR_REPEATS` runs land above verifier's rigorous UPPER bound on ε(δ) (UNSOUND above the
    binomial 99.9% quantile of the significance; the largest value shown)."""
    import numpy as np
    from scipy import stats

    from jax_privacy.auditing import CanaryScoreAuditor

    from verifier.audit import judge

    repeats = AUDITOR_REPEATS // 2 if quick else AUDITOR_REPEATS
    allowed = int(stats.binom.ppf(0.999, repeats, AUDITOR_SIGNIFICANCE))
    out = []
    for mechanism, count, delta in AUDITOR_CELLS:
        claim = {"mechanism": mechanism, "scheme": {"name": "single"}, "neighboring": "remove", "delta": delta}
        values: dict[str, list[float]] = {"epsilon_clopper_pearson": [], "epsilon_from_gdp": []}
        rng = np.random.default_rng(40)
        for _ in range(repeats):
            auditor = CanaryScoreAuditor(*_canaries(mechanism, count, rng))
            values["epsilon_clopper_pearson"].append(float(auditor.epsilon_clopper_pearson(AUDITOR_SIGNIFICANCE, delta)))
            values["epsilon_from_gdp"].append(float(auditor.epsilon_from_gdp(AUDITOR_SIGNIFICANCE, delta)))
        for name, found in values.items():
            row = judge(f"jax_privacy CanaryScoreAuditor.{name}", claim, max(found), side="lower", group="CanaryScoreAuditor")
            above = sum(v > row.bracket.upper for v in found)
            note = (f"{above} of {repeats} runs ({count} canaries each, significance {AUDITOR_SIGNIFICANCE:g}) above verifier's upper end; "
                    f"the stated rate allows {allowed} at 99.9%; largest shown")
            out.append(replace(row, status="UNSOUND" if above > allowed else "sound", note=note))
    return out


#: (σ, steps t of one cycle, ε) of the Monte Carlo cells: balls-in-bins over t steps, C = I.
MC_CELLS = ((1.0, 10, 0.25), (2.0, 10, 0.1))
#: Samples per estimate, estimates per cell, and the confidence bounds' error rate.
MC_SAMPLES = 2000
MC_REPEATS = 20
MC_LEVEL = 0.05


def _kl(q: float, p: float) -> float:
    from scipy import special

    return float(special.rel_entr(q, p) + special.rel_entr(1 - q, 1 - p))


def kl_upper_confidence(mean: float, samples: int, level: float) -> float:
    """The largest p >= ``mean`` with exp(−N·KL(mean‖p)) >= ``level``: the KL-Chernoff (Hoeffding)
    upper confidence bound at level 1 − ``level`` on the mean of [0, 1]-valued samples (the tail
    bound jax_privacy's ``_hoeffding_bound`` states, Fact 4.2 of arXiv 2412.16802)."""
    from scipy import optimize

    target = math.log(1.0 / level) / samples
    if _kl(mean, 1.0 - 1e-15) <= target:
        return 1.0
    return float(optimize.brentq(lambda p: _kl(mean, p) - target, mean, 1.0 - 1e-15, xtol=1e-15))


def monte_carlo_rows(quick: bool) -> list[AuditRow]:
    """One row per cell and direction for the confidence bounds, one for Algorithm 5's check (module doc)."""
    import numpy as np
    from scipy import stats

    from jax_privacy import batch_selection
    from jax_privacy.experimental.monte_carlo import delta_calculation, sample_generation

    from verifier._types import Bracket, Direction, Quantity
    from verifier.audit import describe
    from verifier.certify.claim import parse_claim
    from verifier.certify.portfolio import collect_bounds

    repeats = MC_REPEATS // 2 if quick else MC_REPEATS
    allowed = int(stats.binom.ppf(0.999, repeats, MC_LEVEL))
    out = []
    for sigma, steps, epsilon in MC_CELLS[:1] if quick else MC_CELLS:
        strategy = batch_selection.BallsInBinsSampling(iterations=steps, cycle_length=steps)
        claim = parse_claim({"mechanism": {"name": "gaussian", "sigma": sigma}, "scheme": {"name": "allocation", "steps": steps},
                             "neighboring": "add_or_remove", "epsilon": epsilon, "delta": 0.5})
        for direction, positive in ((Direction.REMOVE, True), (Direction.ADD, False)):
            found = collect_bounds(claim.model, Quantity.DELTA, epsilon, (direction,)).brackets[direction]
            bracket = Bracket(float(found.lower), float(found.upper))
            means = []
            for seed in range(repeats):
                loss, _ = sample_generation.get_privacy_loss_sample(strategy, sigma, np.array([1.0]), seed=seed, positive_sample=positive,
                                                                    num_samples=MC_SAMPLES)
                means.append(float(delta_calculation.delta_from_epsilon_and_samples(epsilon, loss)))
            uppers = [kl_upper_confidence(m, MC_SAMPLES, MC_LEVEL) for m in means]
            wrong = sum(u < bracket.lower for u in uppers)
            case = describe(claim).replace("δ=0.5", f"δ(ε={epsilon:g})")
            note = (f"{wrong} of {repeats} upper confidence bounds ({1 - MC_LEVEL:.0%}, {MC_SAMPLES} samples each) below verifier's "
                    f"lower end; the stated rate allows {allowed} at 99.9%; smallest shown")
            out.append(AuditRow("jax_privacy monte_carlo (KL-Hoeffding UCB)", direction.value, case, min(uppers), bracket,
                                "UNSOUND" if wrong > allowed else "sound", check="confidence_rate", note=note, quantity="delta",
                                group="monte_carlo (balls-in-bins, C = I)"))
            # Algorithm 5's check for a δ just below the rigorous lower end: accepted means a false (ε, δ) claim.
            target = 0.9 * bracket.lower
            try:
                base = float(delta_calculation.get_base_delta(MC_SAMPLES, target)) if target > 0 else None
            except ValueError:  # too few samples for any base delta at this target
                base = None
            if base is not None:
                accepted = sum(m <= base for m in means)
                stated = math.exp(-MC_SAMPLES * _kl(base, bracket.lower)) if bracket.lower > base else 1.0
                note = (f"accepted (eps, {target:.4g}) in {accepted} of {repeats} runs (mean <= base_delta {base:.4g}) although "
                        f"delta(eps) >= {bracket.lower:.4g}; its tail bound states a rate <= {stated:.3g}")
                expected = int(stats.binom.ppf(0.999, repeats, min(stated, 1.0)))
                out.append(AuditRow("jax_privacy monte_carlo (Algorithm 5 check)", direction.value, case, base, bracket,
                                    "UNSOUND" if accepted > expected else "sound", check="confidence_rate", note=note, quantity="delta",
                                    group="monte_carlo (balls-in-bins, C = I)"))
    return out
