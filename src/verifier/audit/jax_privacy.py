"""Audit of jax_privacy 2.0's DpEvent builders (``jax_privacy.experimental.accounting``):
``dpsgd_event``, ``fixed_dpsgd_event`` (without and with replacement), ``truncated_dpsgd_event``
and ``amplified_bandmf_event`` build dp_accounting events, which jax_privacy accounts with
dp_accounting's accountants; each event is judged as in :mod:`verifier.audit.dp_accounting`
(:func:`~verifier.audit.dp_accounting.judge_event`), grouped by builder. Sampling with replacement,
which verifier bounds but dp_accounting 0.6 does not account, is listed with the reason.
"""

from __future__ import annotations

from verifier.audit import AuditRow, require
from verifier.audit.dp_accounting import NOT_ACCEPTED, judge_event

__all__ = ["rows"]


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
    return out, notes, unjudged
