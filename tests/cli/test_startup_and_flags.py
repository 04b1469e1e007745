"""Start-up and option names (issue 41): ``--version`` and ``--help`` import no command module and
no numerics, options are taken by their full names only, and the peers' names are aliases."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pytest

from verifier.cli import COMMANDS, SUMMARIES, build_parser, main


def _loaded_after(argv: list[str]) -> list[str]:
    code = (
        "import sys\nfrom verifier.cli import main\n"
        f"try:\n    main({argv!r})\nexcept SystemExit:\n    pass\n"
        "print('LOADED', ' '.join(sorted(m for m in sys.modules if m.startswith('verifier.cli._') or m in ('numpy', 'flint'))))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    return out[out.index("LOADED"):].split()[1:]


@pytest.mark.parametrize("argv", [["--version"], ["--help"]])
def test_version_and_help_load_no_command(argv):
    # catches: build_parser registering every command (each importing numpy and the methods) for
    # --version/--help: 0.5 s of start-up instead of ~0.1 s (issue 41)
    assert _loaded_after(argv) == ["verifier.cli._progress"]


def test_help_lists_every_command_with_its_summary(capsys):
    # catches: a command missing from the lazy listing, or a summary that differs from the command's own
    with pytest.raises(SystemExit):
        main(["--help"])
    listing = capsys.readouterr().out
    full = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    for name in COMMANDS:
        assert name in listing
        (pseudo,) = [a for a in full._choices_actions if a.dest == name]
        assert pseudo.help == SUMMARIES[name]


def _parsers():
    full = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(full.choices)


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_no_command_takes_an_abbreviation(name):
    # catches: argparse's default allow_abbrev=True (`--epsilon` read as `--epsilon0`, issue 41)
    assert _parsers()[name].allow_abbrev is False


def test_epsilon_flag_on_the_epsilon_command_says_what_to_do(capsys):
    # the reproducers: `epsilon --mechanism rr --epsilon 1` ran as ε0 = 1, and
    # `epsilon --sigma 1 --delta 1e-5 --epsilon 1` complained about --epsilon0
    for argv in (["epsilon", "--mechanism", "rr", "--epsilon", "1", "--delta", "1e-5"], ["epsilon", "--sigma", "1", "--delta", "1e-5", "--epsilon", "1"]):
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert "verifier certify" in err and err.count("\n") == 1


def test_an_abbreviated_option_is_refused():
    with pytest.raises(SystemExit) as exit_:
        main(["certify", "--sigma", "1", "--eps", "1", "--delta", "1e-5"])
    assert exit_.value.code == 2


def test_peer_names_are_aliases():
    # catches: --noise-multiplier / --sampling-probability / --num-steps landing in another field
    parser = build_parser("epsilon")
    ours = parser.parse_args(["epsilon", "--sigma", "1", "--scheme", "poisson", "--rate", "0.01", "--steps", "10", "--delta", "1e-5"])
    peers = parser.parse_args(
        ["epsilon", "--noise-multiplier", "1", "--scheme", "poisson", "--sampling-probability", "0.01", "--num-steps", "10", "--delta", "1e-5"]
    )
    assert vars(ours) == vars(peers)


def test_version_is_written_once():
    # the version `--version` prints (no importlib.metadata) is the one the package is built with
    import warnings

    from setuptools.config.pyprojecttoml import read_configuration

    import verifier

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # setuptools calls its pyproject support "beta"
        built = read_configuration(Path(__file__).resolve().parents[2] / "pyproject.toml", expand=True)["project"]["version"]
    assert built == verifier.__version__
