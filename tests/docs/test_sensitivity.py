"""One meaning of ``sensitivity`` (issue 43, item 5): the bound Δ on one record's norm, on every
command and claim field, with the step pair shifted by Δ under add/remove and by 2Δ under replace-one;
what README.md and docs/theory/numbers.md say agrees with what the CLI does.

The reference is the Gaussian's closed form, ε(δ) of N(μ, 1) against N(0, 1) solved in mpmath at 40
digits (Balle & Wang 2018, Thm 8: δ(ε) = Φ(μ/2 − ε/μ) − e^ε Φ(−μ/2 − ε/μ)), not verifier's output.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import mpmath
import pytest

from verifier.cli import main

sys.path.insert(0, str(Path(__file__).resolve().parent))
import doc_blocks  # noqa: E402

ROOT = doc_blocks.ROOT


def _gaussian_epsilon(mu: float, delta: float) -> float:
    """ε(δ) of the Gaussian pair with shift μ (noise 1): δ(ε) decreases in ε, bisected in mpmath at
    40 digits."""
    with mpmath.workdps(40):
        mu = mpmath.mpf(mu)

        def excess(eps):
            return mpmath.ncdf(mu / 2 - eps / mu) - mpmath.exp(eps) * mpmath.ncdf(-mu / 2 - eps / mu) - delta

        low, high = mpmath.mpf(0), mpmath.mpf(60)
        for _ in range(120):
            middle = (low + high) / 2
            low, high = (middle, high) if excess(middle) > 0 else (low, middle)
        return float(low)


def _bracket(argv: list[str], capsys) -> tuple[float, float]:
    assert main(["epsilon", *argv, "--delta", "1e-5", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    return payload["lower"], payload["upper"]


@pytest.mark.parametrize(
    ("relation", "sensitivity", "shift"),
    [("add_or_remove", 1, 1), ("replace_one", 1, 2), ("add_or_remove", 2, 2), ("replace_one", 2, 4)],
)
def test_the_cli_shifts_the_pair_by_the_record_norm_or_twice_it(relation, sensitivity, shift, capsys):
    """Catches: a CLI that reads --sensitivity as the pair's shift under replace_one (shift 1 where 2
    is right: ε 4.38 instead of 10.00), or that doubles it under add/remove."""
    lower, upper = _bracket(["--sigma", "1", "--sensitivity", str(sensitivity), "--neighboring", relation], capsys)
    truth = _gaussian_epsilon(shift, 1e-5)
    assert lower <= truth * (1 + 1e-12) and truth <= upper * (1 + 1e-12)
    assert upper - lower <= 1e-9 * truth


def test_a_claim_file_reads_sensitivity_as_the_flag_does(tmp_path, capsys):
    """The claim field and the flag mean the same: a replace-one claim at the closed form's ε for
    shift 2Δ, 0.1% above and below, is CERTIFIED and VIOLATED from a file as from flags."""
    truth = _gaussian_epsilon(2, 1e-5)
    for factor, status in ((1.001, 0), (0.999, 1)):
        claim = {"mechanism": {"name": "gaussian", "sigma": 1.0, "sensitivity": 1.0}, "scheme": {"name": "single"},
                 "neighboring": "replace_one", "epsilon": truth * factor, "delta": 1e-5}
        path = tmp_path / "claim.json"
        path.write_text(json.dumps(claim), encoding="utf-8")
        assert main(["certify", str(path)]) == status
        flags = ["certify", "--sigma", "1", "--sensitivity", "1", "--neighboring", "replace_one",
                 "--epsilon", repr(truth * factor), "--delta", "1e-5"]
        assert main(flags) == status
    capsys.readouterr()


def _corpus() -> str:
    return "\n".join(page.read_text(encoding="utf-8") for page in doc_blocks.pages())


def test_the_pages_state_the_one_meaning():
    """README.md and the theory page say it (the record's norm, doubled under replace-one), and no page
    says the other reading. Catches: the old check-in sentence ("`--sensitivity` is the step pair's,
    i.e. 2 for the paper's constants"), which made a reader refute true claims."""
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    numbers = " ".join((ROOT / "docs" / "theory" / "numbers.md").read_text(encoding="utf-8").split())
    assert "always the bound on one record's contribution" in readme and "twice it" in readme
    assert "the largest norm of one record's contribution" in numbers and "N(2Δ, σ²) against N(0, σ²)" in numbers
    corpus = _corpus()
    assert not re.search(r"sensitivity`? is the step pair", corpus)
    assert not re.search(r"--sensitivity 2[^\n]*--neighboring replace_one[^\n]*\n[^\n]*\[9\.30", corpus)


def test_the_help_states_the_same_meaning():
    """``--help`` says what the pages say. Catches a help text that leaves the replace-one doubling unsaid."""
    from verifier.cli import build_parser

    parser = build_parser()
    (subparsers,) = [a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction"]
    for name in ("certify", "epsilon", "delta"):
        (option,) = [a for a in subparsers.choices[name]._actions if "--sensitivity" in a.option_strings]
        assert "one record's norm" in option.help and "2Δ under replace_one" in option.help


def test_the_checkin_example_gives_the_papers_bracket(capsys):
    """Done when 6: the check-in example followed as the docs say (records of norm 1, replace-one,
    no doubling by hand) gives [9.304, 9.997]; its upper end is the single Gaussian step with shift 2
    (one user's report alone, by post-processing), here from the closed form."""
    lower, upper = _bracket(["--sigma", "1", "--scheme", "shuffle", "--users", "2", "--neighboring", "replace_one"], capsys)
    assert (round(lower, 3), round(upper, 3)) == (9.304, 9.997)
    assert upper == pytest.approx(_gaussian_epsilon(2, 1e-5), rel=1e-12)
