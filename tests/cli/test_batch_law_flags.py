"""Truncated Poisson and sampling with replacement from command-line flags (issue 40, item 5:
``verifier tradeoff`` — and every bounding command — on the with-replacement scheme; issue 42): the
flags build the very model a claim file with the same fields gets, the one-step with-replacement claim
of issue 42 is refuted from flags as from its file, and a relation or option the scheme does not take
exits 2 with one line."""

from __future__ import annotations

import argparse

import pytest

from verifier.certify.claim import model_of
from verifier.cli import build_parser, main
from verifier.cli._options import build_scheme

GAUSSIAN = {"name": "gaussian", "sigma": 1.0, "sensitivity": 1.0}


def _flags(scheme: str, direction: str, **values) -> argparse.Namespace:
    """The options ``verifier epsilon`` parses from these flags (``dataset_size`` → ``--dataset-size``)."""
    argv = ["epsilon", "--sigma", "1", "--scheme", scheme, "--neighboring", direction, "--delta", "1e-5"]
    for name, value in values.items():
        argv += [f"--{name.replace('_', '-')}", str(value)]
    return build_parser("epsilon").parse_args(argv)


@pytest.mark.parametrize(
    "scheme, fields, neighboring, direction",
    [
        ("with_replacement", {"dataset_size": 100, "sample_size": 20, "steps": 10}, "replace_one", "replace_one"),
        ("truncated_poisson", {"dataset_size": 1000, "rate": 0.05, "max_batch": 40, "steps": 10}, "add_or_remove", "both"),
        ("truncated_poisson", {"dataset_size": 1000, "rate": 0.05, "max_batch": 40, "steps": 10}, "replace_one", "replace_one"),
    ],
)
def test_flags_build_the_claim_files_model(scheme, fields, neighboring, direction):
    # catches a flag read into the wrong field (n for m, the cap for the rate) or the replace-one
    # doubling lost on the flag path: the models would differ
    assert build_scheme(_flags(scheme, direction, **fields)) == model_of(GAUSSIAN, {"name": scheme, **fields}, neighboring)


def test_one_step_with_replacement_claim_is_violated_from_flags(capsys):
    """Issue 42's one-step claim (n = 100, m = 20, σ = 1, ε = 5.64244, δ = 1e-5): the attained pair
    (every other record at −C) gives ε(1e-5) = 28.8996 by mpmath (tests/certify), so it is false."""
    argv = ["certify", "--mechanism", "gaussian", "--sigma", "1", "--scheme", "with_replacement", "--dataset-size", "100",
            "--sample-size", "20", "--steps", "1", "--neighboring", "replace_one", "--epsilon", "5.64244", "--delta", "1e-5"]
    assert main(argv) == 1
    assert "VIOLATED" in capsys.readouterr().out


@pytest.mark.parametrize(
    "argv, named",
    [
        (["tradeoff", "--sigma", "1", "--scheme", "with_replacement", "--dataset-size", "100", "--sample-size", "20", "--steps", "1"], "neighboring"),
        (["epsilon", "--sigma", "1", "--scheme", "poisson", "--rate", "0.1", "--steps", "3", "--max-batch", "4", "--delta", "1e-5"], "--max-batch"),
        (["epsilon", "--sigma", "1", "--scheme", "truncated_poisson", "--dataset-size", "100", "--rate", "0.1", "--steps", "3",
          "--sample-size", "4", "--delta", "1e-5"], "--sample-size"),
        (["epsilon", "--mechanism", "laplace", "--scale", "1", "--scheme", "truncated_poisson", "--dataset-size", "100", "--rate", "0.1",
          "--max-batch", "5", "--steps", "3", "--delta", "1e-5"], "mechanism"),
    ],
)
def test_what_the_schemes_do_not_take_exits_2_in_one_line(argv, named, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and named in err
