"""Issue 40, Done-when 4: ``verifier tradeoff`` (and the trade-off bounds behind it) on batch-sampled
Gaussian sums under replace-one neighbours: fixed-size batches (``without_replacement``), truncated
Poisson and sampling with replacement, against trade-off curves computed independently of verifier.

- Full batches: the record is in every step, so T steps are the T-fold composition of N(2C, σ²)
  against N(0, σ²) under replace-one (N(C, σ²) under add/remove): TPR = Φ(Φ⁻¹(α) + μ) with
  μ = 2C√T/σ (C√T/σ) (Dong, Roth & Su 2022, Cor 3.3).
- One step on one record of two: n = 2 with B = 1 (fixed size), q = 1 and B = 1 (truncated Poisson:
  both records drawn, one kept) or m = 1 (with replacement) all release x_J + N(0, σ²) with J
  uniform, records in [−C, C] (one-dimensional). A pair of datasets (a, z) against (b, z) is then
  ½N(a) + ½N(z) against ½N(b) + ½N(z). The pairs the LOWER ends are attained by (the antipodal
  pair: every record at v = C, the target replaced by −v, in either order; and records +C against
  −C with the other at 0) have likelihood ratios monotone in the output, so their TPR is one
  root-find on Gaussian tails (:func:`monotone_tpr`, monotonicity checked on a grid). Every pair's
  TPR is also estimated by the most powerful test on the output binned at step 0.001 over [−20, 20]
  with exact cell masses (a post-processing, hence a LOWER estimate), which the UPPER end must lie
  above.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy import optimize, special

from verifier._types import Direction, Quantity
from verifier.certify.claim import parse_claim
from verifier.certify.portfolio import collect_bounds
from verifier.cli import main

SIGMA = 2.0
FPRS = (0.01, 0.1, 0.3)
SLACK = 1e-9
#: (a, b, z): H0 the target at a, H1 at b, the other record at z.
PAIRS = ((1.0, -1.0, 1.0), (-1.0, 1.0, 1.0), (1.0, -1.0, 0.0), (1.0, -1.0, -1.0), (0.5, -1.0, 0.2), (1.0, 0.0, -0.5))
#: The pairs the lower ends are attained by: the antipodal pair in both orders, +C against −C with
#: the other record at 0 (truncated Poisson's ATTAINED pair, and with replacement's centred lattice).
ATTAINED = ((1.0, -1.0, 1.0), (-1.0, 1.0, 1.0), (-1.0, 1.0, 0.0))
#: One step on one record of two, for each scheme (claim fields).
ONE_OF_TWO = {
    "without_replacement": {"name": "without_replacement", "dataset_size": 2, "batch_size": 1, "steps": 1},
    "truncated_poisson": {"name": "truncated_poisson", "dataset_size": 2, "rate": 1.0, "max_batch": 1, "steps": 1},
    "with_replacement": {"name": "with_replacement", "dataset_size": 2, "sample_size": 1, "steps": 1},
}


def gauss_tpr(alpha: float, mu: float) -> float:
    return float(special.ndtr(special.ndtri(alpha) + mu))


def monotone_tpr(alpha: float, a: float, b: float, z: float) -> float:
    """The exact TPR of ½N(a) + ½N(z) (H0) against ½N(b) + ½N(z) (H1) where the likelihood ratio is
    monotone in y (checked on a grid): the test rejects y beyond the threshold of size α."""
    y = np.linspace(-30.0, 30.0, 6001)

    def log_density(m: float) -> np.ndarray:
        return np.logaddexp(-0.5 * ((y - m) / SIGMA) ** 2, -0.5 * ((y - z) / SIGMA) ** 2)

    steps = np.diff(log_density(b) - log_density(a))
    sign = 1.0 if b > a else -1.0
    assert np.all(sign * steps >= -1e-12), "likelihood ratio not monotone"

    def tail(m: float, t: float) -> float:  # P(sign·(m + noise) > t)
        return float(special.ndtr((sign * m - t) / SIGMA))

    def size(t: float) -> float:
        return 0.5 * (tail(a, t) + tail(z, t))

    threshold = optimize.brentq(lambda t: size(t) - alpha, -60.0, 60.0, xtol=1e-14, rtol=1e-15)
    return 0.5 * (tail(b, threshold) + tail(z, threshold))


def binned_tpr(alpha: float, a: float, b: float, z: float, step: float = 1e-3, half: float = 20.0) -> float:
    edges = np.concatenate(([-np.inf], np.arange(-half, half + step / 2, step), [np.inf]))

    def law(x: float) -> np.ndarray:
        return 0.5 * (np.diff(special.ndtr((edges - x) / SIGMA)) + np.diff(special.ndtr((edges - z) / SIGMA)))

    p0, p1 = law(a), law(b)
    ratio = np.divide(p1, p0, out=np.full_like(p1, np.inf), where=p0 > 0)
    order = np.argsort(-ratio, kind="stable")
    p0, p1 = p0[order], p1[order]
    size, power = np.cumsum(p0), np.cumsum(p1)
    i = int(np.searchsorted(size, alpha, side="right"))
    before = (size[i - 1], power[i - 1]) if i else (0.0, 0.0)
    return float(before[1] + (alpha - before[0]) / p0[i] * p1[i])


def _bracket(scheme: dict, neighboring: str = "replace_one") -> dict:
    """{direction: [(lower, upper) per FPR]} from every method (what ``verifier tradeoff`` shows)."""
    model = parse_claim({"mechanism": {"name": "gaussian", "sigma": SIGMA}, "scheme": scheme, "neighboring": neighboring, "fpr": 0.1, "tpr": 0.5}).model
    out: dict = {d.value: [] for d in Direction}
    for fpr in FPRS:
        got = collect_bounds(model, Quantity.TPR, fpr, tuple(Direction)).brackets
        for d in Direction:
            out[d.value].append((float(got[d].lower), float(got[d].upper)))
    return out


def test_full_fixed_size_batches_are_the_composed_gaussian(capsys):
    """``verifier tradeoff``, n = B = 4, three steps: the bracket holds Φ(Φ⁻¹(α) + 2√3/σ), 1e-4 wide (relative)."""
    argv = ["tradeoff", "--sigma", str(SIGMA), "--scheme", "without_replacement", "--dataset-size", "4", "--batch-size", "4",
            "--steps", "3", "--neighboring", "replace_one", "--fpr", ",".join(map(str, FPRS)), "--json"]
    assert main(argv) == 0
    for point, alpha in zip(json.loads(capsys.readouterr().out)["points"], FPRS):
        truth = gauss_tpr(alpha, 2 * math.sqrt(3) / SIGMA)
        for ends in point["directions"].values():
            assert ends["lower"] <= truth <= ends["upper"] and ends["upper"] - ends["lower"] <= 1e-4 * truth


@pytest.mark.parametrize("neighboring,mu", [("add_or_remove", math.sqrt(2) / SIGMA), ("replace_one", 2 * math.sqrt(2) / SIGMA)])
def test_untruncated_poisson_at_rate_one_is_the_composed_gaussian(neighboring, mu):
    """Truncated Poisson with q = 1 and B = n: every record in every step, two steps: Φ(Φ⁻¹(α) + μ),
    within 1e-3 (relative)."""
    got = _bracket({"name": "truncated_poisson", "dataset_size": 3, "rate": 1.0, "max_batch": 3, "steps": 2}, neighboring)
    for ends in got.values():
        for (lower, upper), alpha in zip(ends, FPRS):
            truth = gauss_tpr(alpha, mu)
            assert lower <= truth <= upper and upper - lower <= 1e-3 * truth


def test_references_agree():
    """The monotone pairs' exact TPR against the binned reference: binned below, within 1e-6."""
    for alpha in FPRS:
        for pair in ATTAINED:
            truth = monotone_tpr(alpha, *pair)
            assert truth - 1e-6 <= binned_tpr(alpha, *pair) <= truth + SLACK


@pytest.fixture(scope="module")
def references() -> dict:
    return {"worst": [max(binned_tpr(alpha, *pair) for pair in PAIRS) for alpha in FPRS],
            "attained": [max(monotone_tpr(alpha, *pair) for pair in ATTAINED) for alpha in FPRS],
            "antipodal": {"remove": [monotone_tpr(alpha, *ATTAINED[0]) for alpha in FPRS], "add": [monotone_tpr(alpha, *ATTAINED[1]) for alpha in FPRS]}}


@pytest.mark.parametrize("scheme", list(ONE_OF_TWO))
def test_one_step_of_one_record_of_two_holds_every_pair(scheme, references):
    """The UPPER end (both directions) is above every pair's binned TPR; the LOWER end, attained by one
    of the ATTAINED pairs, is below the largest of their exact TPRs. Catches an upper end from one
    orientation only (the antipodal pair's remove order is 2.7 times its add order at FPR 0.01)."""
    got = _bracket(ONE_OF_TWO[scheme])
    for ends in got.values():
        for i, (lower, upper) in enumerate(ends):
            assert upper >= references["worst"][i] - SLACK
            assert lower <= references["attained"][i] + SLACK


def test_fixed_size_lower_ends_match_their_orientation(references):
    """Fixed size: each direction's LOWER end is the antipodal pair in that direction's order, within
    1e-3 below it (catches the two directions' lower ends swapped)."""
    got = _bracket(ONE_OF_TWO["without_replacement"])
    for direction, ends in got.items():
        for (lower, _), own in zip(ends, references["antipodal"][direction]):
            assert own * (1 - 1e-3) <= lower <= own + SLACK
