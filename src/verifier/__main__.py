"""``python -m verifier`` runs the command-line interface."""

import sys

from verifier.cli import main

sys.exit(main())
