"""The ``verifier`` command. Each sub-command lives in its own module and registers itself in
:data:`COMMANDS`; this module only builds the parser and maps errors to exit statuses.

Exit statuses: 0 success, 2 invalid input (one line naming the parameter, its value and the allowed
range), 4 an internal inconsistency (a rigorous upper bound below a rigorous lower bound). Commands
that decide claims add 1 (VIOLATED) and 3 (INCONCLUSIVE).
"""

from __future__ import annotations

import argparse
import sys
from typing import NoReturn, Sequence

from verifier import __version__
from verifier.cli import _bounds, _certify, _demo, _mc, _profile, _rdp, _compare
from verifier.cli import _zcdp
from verifier.cli import _calibrate
from verifier.errors import InconsistentBounds, InvalidArgument, VerifierError

__all__ = ["main", "build_parser", "COMMANDS", "EXIT_OK", "EXIT_INVALID", "EXIT_INCONSISTENT"]

EXIT_OK = 0
EXIT_INVALID = 2
EXIT_INCONSISTENT = 4

#: Sub-command modules; each exposes ``register(subparsers)`` which sets ``handler`` on its parser.
COMMANDS = [_profile, _certify, _bounds, _demo, _mc, _rdp, _compare]
COMMANDS += [_zcdp]
COMMANDS += [_calibrate]


class _OneLineParser(argparse.ArgumentParser):
    """argparse that reports a usage error in one line (and exit status 2), not a usage block."""

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_INVALID, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    parser = _OneLineParser(
        prog="verifier",
        description="Certify differential-privacy accounting: rigorous upper and lower bounds on "
        "δ(ε) and ε(δ), Monte Carlo estimates, and verdicts on (ε, δ) claims.",
    )
    parser.add_argument("--version", action="version", version=f"verifier {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_OneLineParser)
    subparsers.required = True
    for module in COMMANDS:
        module.register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.handler(args) or EXIT_OK)
    except InvalidArgument as exc:
        print(f"verifier: error: {exc}", file=sys.stderr)
        return EXIT_INVALID
    except InconsistentBounds as exc:
        print(f"verifier: INTERNAL INCONSISTENCY (a defect in verifier, please report): {exc}", file=sys.stderr)
        return EXIT_INCONSISTENT
    except VerifierError as exc:
        print(f"verifier: error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return EXIT_INCONSISTENT
    except KeyboardInterrupt:
        print("verifier: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
