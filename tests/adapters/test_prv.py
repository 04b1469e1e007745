"""from_prv gives the hand-written claims for prv_accountant's PRVs; its audit finds both ends of
its (lower, estimate, upper) inside verifier's rigorous bracket's reach on the DP-SGD grid."""

from __future__ import annotations

import pytest

prv_accountant = pytest.importorskip("prv_accountant")
from prv_accountant.privacy_random_variables import GaussianMechanism, PoissonSubsampledGaussianMechanism  # noqa: E402

from verifier.adapters import from_prv  # noqa: E402
from verifier.audit import audit  # noqa: E402
from verifier.certify.claim import parse_claim  # noqa: E402
from verifier.errors import InvalidArgument  # noqa: E402

pytestmark = pytest.mark.peer


def test_prvs_are_the_hand_written_claims():
    one = from_prv([PoissonSubsampledGaussianMechanism(0.01, 1.1)], [1000], epsilon=1.6, delta=1e-5)
    assert one.model == parse_claim(
        {"mechanism": {"name": "gaussian", "sigma": 1.1}, "scheme": {"name": "poisson", "rate": 0.01, "steps": 1000}, "epsilon": 1.6, "delta": 1e-5}
    ).model
    two = from_prv([GaussianMechanism(4.0), PoissonSubsampledGaussianMechanism(0.1, 2.0)], [10, 100], epsilon=3, delta=1e-5)
    assert [p["name"] for p in two.scheme["phases"]] == ["composed", "poisson"]
    assert two.scheme["phases"][0]["mechanism"]["sigma"] == pytest.approx(4.0, rel=1e-15)
    with pytest.raises(InvalidArgument, match="num_self_compositions"):
        from_prv([GaussianMechanism(1.0)], [1, 2], epsilon=1, delta=1e-5)


def test_audit_both_ends_sound():
    report = audit("prv_accountant", quick=True)
    assert len(report.rows) == 6 and not report.findings
    for row in report.rows:  # its stated error 0.01 in ε: both ends within it of verifier's bracket
        assert abs(row.peer_epsilon - row.bracket.upper) <= 0.011 * max(1.0, row.bracket.upper) + 0.02
