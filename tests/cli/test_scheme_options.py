"""A mechanism or scheme option the chosen mechanism and scheme do not use is refused (exit 2, one line naming it), not
dropped: ``verifier epsilon --sigma 1 --steps 10`` used to answer for ONE step."""

from __future__ import annotations

import pytest

from verifier.certify.claim import MECHANISMS, SCHEMES
from verifier.cli import main
from verifier.cli._options import MECHANISMS as CLI_MECHANISMS, OPTION_USES, SCHEMES as CLI_SCHEMES


def test_option_table_matches_the_claim_schema():
    # catches an option added to a mechanism's or scheme's claim fields (or to the CLI) without
    # updating the table: it would be refused where it applies, or accepted and dropped elsewhere
    kinds = {"mechanism": (MECHANISMS, CLI_MECHANISMS), "scheme": (SCHEMES, CLI_SCHEMES)}
    for name, (uses, _default) in OPTION_USES.items():
        for selector, (schema, choices) in kinds.items():
            for choice in choices:
                assert (choice in uses.get(selector, ())) == (name in schema[choice].fields), (name, choice)


@pytest.mark.parametrize(
    "argv, option",
    [
        (["epsilon", "--sigma", "1", "--steps", "10", "--delta", "1e-5"], "--steps"),
        (["delta", "--sigma", "1", "--scheme", "poisson", "--rate", "0.01", "--steps", "5", "--epochs", "3", "--epsilon", "1"], "--epochs"),
        (["rdp", "--sigma", "1", "--scheme", "composed", "--times", "3", "--rate", "0.1"], "--rate"),
        (["certify", "--sigma", "1", "--scheme", "allocation", "--steps", "10", "--batch-size", "4", "--epsilon", "1", "--delta", "1e-5"], "--batch-size"),
        (["zcdp", "--sigma", "1", "--scheme", "shuffle", "--users", "10", "--bands", "2"], "--bands"),
        (["epsilon", "--mechanism", "laplace", "--scale", "1", "--sigma", "3", "--delta", "1e-5"], "--sigma"),
        (["epsilon", "--mechanism", "rr", "--epsilon0", "1", "--sensitivity", "2", "--delta", "1e-5"], "--sensitivity"),
        (["epsilon", "--sigma", "1", "--k", "3", "--delta", "1e-5"], "--k"),
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
