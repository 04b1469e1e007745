"""A run imports only its own sub-command's module (start-up time, issue 17), and the name table
that makes this possible agrees with what the modules register."""

from __future__ import annotations

import subprocess
import sys

from verifier.cli import COMMANDS, build_parser


def test_table_matches_registered_commands():
    # catches a module that registers a command missing from the table (it would be unreachable
    # by name) or a table entry pointing at the wrong module (its name would be an invalid choice)
    subparsers = next(a for a in build_parser()._actions if a.dest == "command")
    assert sorted(subparsers.choices) == sorted(COMMANDS)
    for name in COMMANDS:
        alone = next(a for a in build_parser(name)._actions if a.dest == "command")
        assert name in alone.choices


def test_a_command_imports_only_its_module():
    # catches a return to importing every sub-command at start-up
    code = (
        "import sys; from verifier.cli import main\n"
        "status = main(['zcdp', '--sigma', '2', '--delta', '1e-5'])\n"
        "loaded = sorted(m for m in sys.modules if m.startswith('verifier.cli._') and m != 'verifier.cli._progress')\n"
        "print('LOADED', status, ' '.join(loaded))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    out = out[out.index("LOADED"):].split()[1:]
    assert out[0] == "0"
    assert "verifier.cli._zcdp" in out
    for other in ("verifier.cli._mc", "verifier.cli._sweep", "verifier.cli._audit", "verifier.cli._certify"):
        assert other not in out
