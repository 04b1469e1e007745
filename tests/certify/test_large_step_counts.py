"""Step counts up to 10**12 (issue 41): `certify --steps 5000000000` exited 2 with "times=4999999999
… must be below 2**32", a field the user never gave, after 10 s (48 s at 10**12). Now the PLD
method declines at once in the scheme's terms and the other methods answer."""

from __future__ import annotations

import pytest

from verifier.cli import main


@pytest.mark.parametrize("steps", [5_000_000_000, 10**12])
@pytest.mark.parametrize("command", ["certify", "epsilon"])
def test_huge_step_counts_are_answered_in_the_users_terms(command, steps, capsys):
    argv = [command, "--sigma", "1", "--scheme", "poisson", "--rate", "0.01", "--steps", str(steps), "--delta", "1e-5"]
    status = main(argv + (["--epsilon", "1"] if command == "certify" else []))
    out, err = capsys.readouterr()
    assert status == (3 if command == "certify" else 0), err  # not 2: the claim is valid
    assert "times=" not in out + err
    if command == "certify":
        assert f"the scheme has {steps}" in out  # why pld did not run, in the user's count
    assert "rdp" in out  # the RDP upper bound still answers


def test_pld_declines_before_building_anything():
    # the mutant: the check left inside the FFT power (minutes of grid building first)
    from verifier.certify.methods.pld import PLDMethod
    from verifier.pairs import Gaussian
    from verifier.schemes import Poisson

    reason = PLDMethod().declines(Poisson(Gaussian(1.0), 0.01, 2**32), None)
    assert reason is not None and "4294967296" in reason
    at_limit = PLDMethod().declines(Poisson(Gaussian(1.0), 0.01, 2**32 - 1), None)
    assert at_limit is None or "composes at most" not in at_limit  # 2**32 - 1 compositions are within the bound


def test_a_composition_of_compositions_is_powered_level_by_level():
    # the mutant: the counts multiplied (10**10 here), declining a scheme whose two powers
    # (10**5 steps, then 10**5 times) are each within the round-off bound
    from verifier.certify.methods.pld import PLDMethod
    from verifier.pairs import Gaussian
    from verifier.schemes import Composed, Poisson

    reason = PLDMethod().declines(Composed(Poisson(Gaussian(1.0), 0.01, 10**5), 10**5), None)
    assert reason is None or "composes at most" not in reason
