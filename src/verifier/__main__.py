"""``python -m verifier`` runs the command-line interface (through the import guard of the console script)."""

from verifier._console import run

run()
