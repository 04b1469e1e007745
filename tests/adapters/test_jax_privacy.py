"""jax_privacy 2.0's DpEvent builders (jax_privacy.experimental.accounting) read through
from_dp_event map to the schemes they describe (issue 25, Done-when 4). Skipped without
jax_privacy; in the default run because the peers extra installs it on CPU (~20 s, mostly importing jax)."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.peer

accounting = pytest.importorskip("jax_privacy.experimental.accounting")

from verifier.adapters import from_dp_event  # noqa: E402
from verifier.errors import InvalidArgument  # noqa: E402
from verifier.pairs import Gaussian  # noqa: E402
from verifier.schemes import Poisson, TruncatedPoisson, WithoutReplacement, WithReplacement  # noqa: E402


def test_dpsgd_event_is_poisson_sampling():
    claim = from_dp_event(accounting.dpsgd_event(1.1, 1000, sampling_prob=0.01), epsilon=1.0, delta=1e-5)
    assert claim.model == Poisson(Gaussian(1.1), 0.01, 1000)


def test_fixed_dpsgd_event_is_fixed_size_batches_under_replace_one():
    event = accounting.fixed_dpsgd_event(2.0, 50, dataset_size=1000, batch_size=100)
    claim = from_dp_event(event, epsilon=1.0, delta=1e-5, neighboring="replace_one")
    assert claim.model == WithoutReplacement(Gaussian(2.0, 2.0), 1000, 100, 50)  # a replacement moves the sum by 2C
    with pytest.raises(InvalidArgument, match="neighboring"):  # fixed-size batches have no add/remove version
        from_dp_event(event, epsilon=1.0, delta=1e-5)


def test_with_replacement_and_truncated_batches_map_to_their_schemes():
    with_replacement = accounting.fixed_dpsgd_event(2.0, 50, dataset_size=1000, batch_size=100, replace=True)
    claim = from_dp_event(with_replacement, epsilon=1.0, delta=1e-5, neighboring="replace_one")
    assert claim.model == WithReplacement(Gaussian(2.0, 2.0), 1000, 100, 50)  # one copy moves the sum by 2C
    with pytest.raises(InvalidArgument, match="neighboring"):  # n public: replace-one only
        from_dp_event(with_replacement, epsilon=1.0, delta=1e-5)
    truncated = accounting.truncated_dpsgd_event(1.0, 100, sampling_prob=0.05, num_examples=1000, truncated_batch_size=40)
    assert from_dp_event(truncated, epsilon=1.0, delta=1e-5).model == TruncatedPoisson(Gaussian(1.0), 1000, 0.05, 40, 100)
    assert from_dp_event(truncated, epsilon=1.0, delta=1e-5, neighboring="replace_one").model == TruncatedPoisson(Gaussian(1.0), 1000, 0.05, 40, 100, replace_one=True)


def test_amplified_bandmf_event_is_poisson_over_rounds():
    """jax_privacy accounts b-banded MF with b-min-separated participation as ⌈T/b⌉ Poisson rounds
    (Choquette-Choo et al. 2023, arXiv 2306.08153); verifier reads that event as such."""
    claim = from_dp_event(accounting.amplified_bandmf_event(3.0, 100, num_bands=8, sampling_prob=0.05), epsilon=1.0, delta=1e-5)
    assert claim.model == Poisson(Gaussian(3.0), 0.05, 13)


def test_audit_finds_the_fixed_batch_rdp_understatement():
    """jax_privacy documents fixed_dpsgd_event for dp_accounting's RDP accountant under REPLACE_ONE;
    that accountant understates it (#378: σ = 4, n = 1000, B = 100, 100 steps: 2.2941 < 2.3373).
    Where Opacus is installed its accountants run beside dp_accounting's on the Poisson-sampled events,
    and its GDP approximation is the only other accountant finding (below the rigorous lower bound there
    too). jax_privacy's own CanaryScoreAuditor.epsilon_from_gdp, a LOWER bound in audits, is the one
    finding on its side: it lands above verifier's upper end on randomized response (a peer's lower bound
    has no claim to refute, so no verdict; tests/audit/test_audit.py checks its values)."""
    from verifier.audit import audit

    report = audit("jax_privacy", quick=True)
    found = {(r.group, r.accountant) for r in report.findings}
    assert {f for f in found if f[1].startswith("dp_accounting")} == {("fixed_dpsgd_event", "dp_accounting RdpAccountant")}
    accountants = {accountant for _, accountant in found if not accountant.startswith("dp_accounting")}
    assert accountants <= {"opacus GaussianAccountant", "jax_privacy CanaryScoreAuditor.epsilon_from_gdp"}
    assert all(r.verdict == "VIOLATED" for r in report.findings if r.group != "CanaryScoreAuditor")
    events = {"dpsgd_event", "fixed_dpsgd_event", "truncated_dpsgd_event", "amplified_bandmf_event"}
    assert events <= {r.group for r in report.rows} <= events | {"CanaryScoreAuditor", "monte_carlo (balls-in-bins, C = I)"}
