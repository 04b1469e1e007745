"""A scheme option the chosen scheme does not use is refused (exit 2, one line naming it), not
dropped: ``verifier epsilon --sigma 1 --steps 10`` used to answer for ONE step."""

from __future__ import annotations

import pytest

from verifier.certify.claim import SCHEMES
from verifier.cli import main
from verifier.cli._options import SCHEME_OPTIONS, SCHEMES as CLI_SCHEMES


def test_option_table_matches_the_claim_schema():
    # catches an option added to a scheme's claim fields (or to the CLI) without updating the
    # table: it would then be refused where it applies, or accepted and dropped where it does not
    for name, (schemes, _default) in SCHEME_OPTIONS.items():
        for scheme in CLI_SCHEMES:
            assert (scheme in schemes) == (name in SCHEMES[scheme].fields), (name, scheme)


@pytest.mark.parametrize(
    "argv, option",
    [
        (["epsilon", "--sigma", "1", "--steps", "10", "--delta", "1e-5"], "--steps"),
        (["delta", "--sigma", "1", "--scheme", "poisson", "--rate", "0.01", "--steps", "5", "--epochs", "3", "--epsilon", "1"], "--epochs"),
        (["rdp", "--sigma", "1", "--scheme", "composed", "--times", "3", "--rate", "0.1"], "--rate"),
        (["certify", "--sigma", "1", "--scheme", "allocation", "--steps", "10", "--batch-size", "4", "--epsilon", "1", "--delta", "1e-5"], "--batch-size"),
        (["zcdp", "--sigma", "1", "--scheme", "shuffle", "--users", "10", "--bands", "2"], "--bands"),
    ],
)
def test_unused_scheme_option_exits_2_naming_it(argv, option, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and option in err and "does not apply" in err


def test_options_of_the_chosen_scheme_are_accepted(capsys):
    # the check must not refuse what the scheme uses (checkin: users, rate, rounds, aggregation)
    argv = ["rdp", "--sigma", "2", "--scheme", "checkin", "--users", "100", "--rate", "0.5", "--rounds", "2", "--aggregation", "sum", "--orders", "2"]
    assert main(argv) == 0
    assert "does not apply" not in capsys.readouterr().err
