"""The demo's "why:" lines are built from the outcome they explain (issue 41: a fixed "[0.91872,
0.91901], 0.03% wide" was printed beside a computed [0.913926, 0.919685], 0.626%). Each
explanation is given outcomes with different brackets and must quote each one's own numbers; the
mutant (text written in advance) quotes the same numbers for both."""

from __future__ import annotations

import re

from verifier.certify.examples import DEMO, EXAMPLES, example
from verifier.certify.verdict import certify


def _numbers(text: str) -> list[float]:
    return [float(x) for x in re.findall(r"\d+\.\d+(?:e-?\d+)?", text)]


def test_dp_sgd_explanation_quotes_the_bracket_it_is_given():
    item = example("dp-sgd-opacus")
    loose = certify(item.parsed(), only=["rdp"])  # RDP alone: an upper bound ~1.1, no lower bound
    text = item.explain(loose)
    upper = loose.epsilon.combined.upper
    assert f"{upper:.5g}" in text and f"{upper:.4g}" in text  # the bracket's end and RDP's own bound
    assert "0.91872" not in text and "0.03%" not in text  # nothing written in advance
    assert item.explain(loose) != item.explain(certify(item.parsed(), only=["max_loss", "rdp", "pld"]))


def test_every_explanation_quotes_its_outcome():
    # for the examples decided in milliseconds: each quoted bracket end is the outcome's, rounded
    for item in EXAMPLES:
        outcome = certify(item.parsed())
        text = item.explain(outcome)
        ends = [outcome.epsilon.combined.lower, outcome.epsilon.combined.upper, outcome.delta.combined.lower, outcome.delta.combined.upper]
        for number in _numbers(text):
            if number in (item.claim["epsilon"], item.claim["delta"]) or number == 2.0:
                continue
            assert any(abs(number - end) <= 1e-3 * abs(end) for end in ends), f"{item.name}: {number} is not from the outcome: {text}"


def test_textbook_example_says_above_from_the_numbers():
    item = next(e for e in DEMO if e.name == "classical-gaussian-outside-range")
    outcome = certify(item.parsed())
    assert outcome.epsilon.combined.lower > item.claim["epsilon"] and "above the claimed" in item.explain(outcome)
