"""``--neighboring`` (alias of ``--direction``) on the commands that bound a scheme without a claim:
``replace_one`` gets the model a claim file with the same fields gets (issue 13: CLI flags mirror the
claim fields), checked against closed forms and dp_accounting's REPLACE_ONE accountant; ``verifier mc``
draws replace-one subsampling through the attained pair and says when that is not the worst case."""

from __future__ import annotations

import json
import math

import pytest
from scipy import integrate, stats

from verifier.cli import main
from verifier.reference.pairs import gaussian_delta


def _json(argv, capsys) -> dict:
    assert main([*argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_single_gaussian_under_replace_one_has_the_doubled_shift(capsys):
    # catches --neighboring being ignored (shift 1: δ = 0.0278 instead of 0.1269)
    got = _json(["delta", "--sigma", "2", "--neighboring", "replace_one", "--epsilon", "1"], capsys)
    exact = float(gaussian_delta(2.0, 1.0, "remove", sensitivity=2.0))  # the shift 2C, mpmath quadrature
    assert got["lower"] <= exact <= got["upper"] and got["upper"] - got["lower"] < 1e-6
    assert got["direction"] == "replace_one"


def test_direction_spelling_still_works(capsys):
    got = _json(["delta", "--sigma", "2", "--direction", "remove", "--epsilon", "1"], capsys)
    assert got["lower"] <= float(gaussian_delta(2.0, 1.0, "remove")) <= got["upper"]


def test_replace_one_where_a_claim_may_not_state_it_exits_2(capsys):
    argv = ["epsilon", "--sigma", "1", "--scheme", "allocation", "--steps", "10", "--neighboring", "replace_one", "--delta", "1e-5"]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "neighboring" in err and "allocation" in err


def test_mc_of_fixed_batches_is_labelled_as_the_attained_pair(capsys):
    # `verifier mc --scheme without_replacement` used to stop on an unsupported scheme
    argv = ["mc", "--sigma", "1", "--scheme", "without_replacement", "--dataset-size", "100", "--batch-size", "10",
            "--steps", "1", "--epsilon", "0.05", "--direction", "remove", "--samples", "40000"]  # fmt: skip
    got = _json(argv, capsys)
    (estimate,) = got["estimates"]
    assert "attained pair" in estimate["note"]
    # the attained pair: 0.1·N(2) + 0.9·N(0) against N(0) (records clipped at 1, replacement moves 2)
    mixture = lambda y: 0.1 * stats.norm.pdf(y, 2.0) + 0.9 * stats.norm.pdf(y)  # noqa: E731
    exact, _ = integrate.quad(lambda y: max(mixture(y) - math.exp(0.05) * stats.norm.pdf(y), 0.0), -12, 14, limit=200)
    assert estimate["lower"] <= exact <= estimate["upper"]


def test_mc_of_poisson_replace_one_is_the_antipodal_pair(capsys):
    # the worst case (proofs/antipodal_dominance.py), so no label; quadrature of that pair
    argv = ["mc", "--sigma", "1", "--scheme", "poisson", "--rate", "0.1", "--steps", "1", "--neighboring", "replace_one",
            "--epsilon", "0.05", "--samples", "40000"]  # fmt: skip
    got = _json(argv, capsys)
    first = lambda y: 0.1 * stats.norm.pdf(y, 1.0) + 0.9 * stats.norm.pdf(y)  # noqa: E731
    second = lambda y: 0.1 * stats.norm.pdf(y, -1.0) + 0.9 * stats.norm.pdf(y)  # noqa: E731
    exact, _ = integrate.quad(lambda y: max(first(y) - math.exp(0.05) * second(y), 0.0), -12, 12, limit=200)
    assert got["lower"] <= exact <= got["upper"]
    assert all(not e.get("note") for e in got["estimates"])


def test_poisson_replace_one_matches_dp_accountings_replace_one(capsys):
    # catches Poisson + replace_one modelled as add/remove at C (ε too small) or at 2C (too large)
    pytest.importorskip("dp_accounting")
    from dp_accounting.pld import privacy_loss_distribution as pld
    from dp_accounting.privacy_accountant import NeighboringRelation

    def theirs(pessimistic: bool) -> float:
        one = pld.from_gaussian_mechanism(1.1, sampling_prob=0.05, value_discretization_interval=1e-3,
                                          pessimistic_estimate=pessimistic, neighboring_relation=NeighboringRelation.REPLACE_ONE)  # fmt: skip
        return one.self_compose(50).get_epsilon_for_delta(1e-5)

    argv = ["epsilon", "--sigma", "1.1", "--scheme", "poisson", "--rate", "0.05", "--steps", "50", "--neighboring", "replace_one", "--delta", "1e-5"]
    got = _json(argv, capsys)
    assert theirs(False) * 0.99 <= got["lower"] <= got["upper"] <= theirs(True) * 1.01
