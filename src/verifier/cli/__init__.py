"""The ``verifier`` command. Each sub-command lives in its own module and registers itself in
:data:`COMMANDS`; this module builds the parser and maps every way a run can end to an exit status.

Exit statuses (the command's API: ``verifier certify … && deploy`` must never deploy on a crash):

- 0 success (a CERTIFIED verdict, or a command that computed what it was asked);
- 1 VIOLATED and 3 INCONCLUSIVE, only from commands that decide claims, only with a verdict
  (``audit``: 1 an unsound number found, 3 nothing checked because the peer is not installed);
- 2 invalid input: one line naming the parameter, its value and the allowed range;
- 4 a defect in verifier: an internal inconsistency (a rigorous upper bound below a rigorous lower
  bound) or any unexpected exception; one line on stderr naming it and how to report it, the
  traceback only with ``--debug``;
- 130 interrupted (SIGINT), 143 terminated (SIGTERM), 141 output pipe closed (SIGPIPE, e.g.
  ``verifier … | head``), each with one line on stderr.

A run longer than a few seconds shows a progress line on stderr when stderr is a terminal
(:mod:`verifier.cli._progress`); stdout carries only the result. An unexpected exception never exits 1 (Python's own status for a traceback), so it can never be
read as VIOLATED.
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import traceback
from typing import NoReturn, Sequence

from verifier.cli._progress import progress_line
from verifier.errors import InconsistentBounds, InvalidArgument, VerifierError

__all__ = [
    "main",
    "build_parser",
    "COMMANDS",
    "SUMMARIES",
    "EXIT_OK",
    "EXIT_INVALID",
    "EXIT_INCONSISTENT",
    "EXIT_DEFECT",
    "EXIT_SIGINT",
    "EXIT_SIGPIPE",
    "EXIT_SIGTERM",
]

EXIT_OK = 0
EXIT_INVALID = 2
EXIT_INCONSISTENT = 4
#: Any unexpected exception: a defect in verifier (same status as an internal inconsistency).
EXIT_DEFECT = 4
#: 128 + signal number, the shell's convention for a process ended by a signal.
EXIT_SIGINT = 128 + 2
EXIT_SIGPIPE = 128 + 13
EXIT_SIGTERM = 128 + 15

REPORT_TO = "rerun with --debug for the traceback and report it with the command line to the verifier maintainers"

#: Sub-command name -> the module that registers it; each module exposes ``register(subparsers)``,
#: which adds its parsers and sets ``handler`` on them. A run imports only its command's module
#: (start-up time is part of what a user waits for: issue 17); ``--help`` imports them all.
COMMANDS = {
    "delta": "verifier.cli._profile",
    "epsilon": "verifier.cli._profile",
    "certify": "verifier.cli._certify",
    "bounds": "verifier.cli._bounds",
    "demo": "verifier.cli._demo",
    "mc": "verifier.cli._mc",
    "rdp": "verifier.cli._rdp",
    "compare": "verifier.cli._compare",
    "zcdp": "verifier.cli._zcdp",
    "calibrate": "verifier.cli._calibrate",
    "sweep": "verifier.cli._sweep",
    "audit": "verifier.cli._audit",
    "check-bound": "verifier.cli._check_bound",
    "tradeoff": "verifier.cli._tradeoff",
}

#: Sub-command name -> its one-line summary (``verifier --help`` lists them without importing the
#: modules; each module registers its parser with the same summary).
SUMMARIES = {
    "delta": "bounds on δ at a given ε",
    "epsilon": "bounds on ε at a given δ",
    "certify": "decide an (ε, δ) claim: CERTIFIED (0), VIOLATED (1), INCONCLUSIVE (3)",
    "bounds": "table (and plot) of every applicable method's bounds on δ(ε) over a grid of ε",
    "demo": "decide a DP-SGD claim, a balls-in-bins claim, a refuted textbook calibration and an undecidable one",
    "mc": "Monte Carlo estimate of δ(ε) with a confidence interval (an estimate, never a bound)",
    "rdp": "the RDP curve (upper bounds on Rényi divergences) of a scheme",
    "compare": "ε against σ for every method (Gaussian random allocation), as a PNG and a table",
    "zcdp": "the zCDP parameter rho of a scheme and the (epsilon, delta) it converts to",
    "calibrate": "smallest σ (or largest rate/steps/epochs) that meets (ε, δ), with a certificate",
    "sweep": "ε(δ) brackets over a grid of parameters, resumable (on dask with --workers > 1)",
    "audit": "run an installed accountant against verifier's rigorous bounds",
    "check-bound": "search for parameters where a candidate bound crosses verifier's rigorous bracket",
    "tradeoff": "bounds on a membership attacker's TPR at given FPRs (the trade-off curve)",
}

_DEBUG_HELP = "on a defect (exit 4), print the Python traceback"


class _OneLineParser(argparse.ArgumentParser):
    """argparse that reports a usage error in one line (and exit status 2), not a usage block, and
    takes options only by their full names: ``--epsilon`` is never read as a prefix of ``--epsilon0``
    (issue 41)."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs["allow_abbrev"] = False
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_INVALID, f"{self.prog}: error: {message}\n")


class _Terminated(BaseException):
    """Raised in the main thread when SIGTERM arrives (a BaseException: no ``except Exception``
    in a method swallows it)."""


class _Version(argparse.Action):
    """``--version``: prints ``verifier <version>`` and exits, reading the version only then."""

    def __init__(self, option_strings, dest=argparse.SUPPRESS, default=argparse.SUPPRESS, help="show the version and exit"):
        super().__init__(option_strings, dest=dest, default=default, nargs=0, help=help)

    def __call__(self, parser, namespace, values, option_string=None):
        import verifier

        print(f"verifier {verifier.__version__}")
        parser.exit()


def build_parser(command: str | None = None, *, listing: bool = False) -> argparse.ArgumentParser:
    """The parser of ``command`` alone when it names a sub-command (only its module is imported),
    else of every sub-command; with ``listing``, every sub-command by name and summary only, none
    of their modules imported (``verifier --help``, ``--version`` and a usage error listing the
    choices start in a fraction of the time: issue 41)."""
    parser = _OneLineParser(
        prog="verifier",
        description="Certify differential-privacy accounting: rigorous upper and lower bounds on "
        "δ(ε) and ε(δ), Monte Carlo estimates, and verdicts on (ε, δ) claims.",
    )
    parser.add_argument("--version", action=_Version)
    parser.add_argument("--debug", action="store_true", help=_DEBUG_HELP)
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_OneLineParser)
    subparsers.required = True
    names = [command] if command in COMMANDS else COMMANDS
    if listing and command not in COMMANDS:
        for name in COMMANDS:
            subparsers.add_parser(name, help=SUMMARIES[name])
        return parser
    for module in dict.fromkeys(COMMANDS[name] for name in names):
        importlib.import_module(module).register(subparsers)
    for sub in set(subparsers.choices.values()):  # accepted after the command name as well
        sub.add_argument("--debug", action="store_true", default=argparse.SUPPRESS, help=_DEBUG_HELP)
    return parser


def _raise_terminated(signum, frame) -> NoReturn:
    raise _Terminated()


def _silence_stdout() -> None:
    """After a broken pipe, point stdout at /dev/null so the interpreter's final flush is quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # stdout replaced by an object without a file
        pass


def _say(line: str) -> None:
    try:
        print(line, file=sys.stderr)
    except (OSError, ValueError):  # stderr itself is gone: the exit status still speaks
        pass


#: Options that name a file a command writes (any command, present or future, that uses these names):
#: each is checked before the computation, so a run of minutes does not end in "cannot be written".
OUTPUT_OPTIONS = ("output", "report", "plot", "out", "csv", "parquet")


def _check_output_paths(args: argparse.Namespace) -> None:
    """Status 2 now, naming the option, for an output path that cannot be written (issue 32)."""
    from verifier._files import check_writable

    for option in OUTPUT_OPTIONS:
        path = getattr(args, option, None)
        if isinstance(path, str) and path:  # '' is "none" (demo --report '')
            check_writable(path, option)


def _budget_of(args: argparse.Namespace) -> float | None:
    """The run's ``--time-budget`` in seconds, when the command has one and it is a usable number."""
    budget = getattr(args, "time_budget", None)
    return budget if isinstance(budget, (int, float)) and 0 < budget < float("inf") else None


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the console script; returns the exit status (see the module docstring)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    debug = "--debug" in argv
    in_main_thread = hasattr(signal, "SIGTERM") and _is_main_thread()
    previous = signal.signal(signal.SIGTERM, _raise_terminated) if in_main_thread else None
    try:
        args = build_parser(_command_of(argv), listing=True).parse_args(argv)
        _check_output_paths(args)
        with progress_line(budget=_budget_of(args)):
            status = int(args.handler(args) or EXIT_OK)
        sys.stdout.flush()  # a closed pipe shows here, inside the handlers below, not at exit
        return status
    except InvalidArgument as exc:
        _say(f"verifier: error: {_one_line(str(exc))}")
        return EXIT_INVALID
    except InconsistentBounds as exc:
        _say(f"verifier: INTERNAL INCONSISTENCY (a defect in verifier, please report): {exc}")
        _maybe_traceback(debug)
        return EXIT_INCONSISTENT
    except KeyboardInterrupt:
        _say("verifier: interrupted (SIGINT); nothing partial was written")
        return EXIT_SIGINT
    except _Terminated:
        _say("verifier: terminated (SIGTERM); nothing partial was written")
        return EXIT_SIGTERM
    except BrokenPipeError:
        _silence_stdout()
        _say("verifier: output pipe closed before the result was written (SIGPIPE)")
        return EXIT_SIGPIPE
    except SystemExit:
        raise  # argparse's --help/--version (0) and usage errors (2)
    except MemoryError:
        _say(f"verifier: DEFECT: out of memory (a method should have declined by its cost estimate); {REPORT_TO}")
        _maybe_traceback(debug)
        return EXIT_DEFECT
    except Exception as exc:  # noqa: BLE001 - the point: no exception may exit 1 (= VIOLATED)
        kind = "error" if isinstance(exc, VerifierError) else "DEFECT"
        message = _one_line(str(exc))[:300]
        _say(f"verifier: {kind}: {type(exc).__name__}: {message} (a defect in verifier; {REPORT_TO})")
        _maybe_traceback(debug)
        return EXIT_DEFECT
    finally:
        if in_main_thread:
            signal.signal(signal.SIGTERM, previous)


def _command_of(argv: Sequence[str]) -> str | None:
    """The sub-command named in ``argv``: its first word that is not an option (the top-level
    options, ``--debug`` and ``--version``, take no value)."""
    return next((word for word in argv if not word.startswith("-")), None)


def _one_line(text: str) -> str:
    """``text`` with line breaks turned into spaces (a status-2 or status-4 answer is one line)."""
    return " ".join(text.splitlines())


def _is_main_thread() -> bool:
    import threading

    return threading.current_thread() is threading.main_thread()


def _maybe_traceback(debug: bool) -> None:
    if debug:
        traceback.print_exc(file=sys.stderr)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
