"""Fixtures for the analytic-bound tests: Poisson profile sources that do not need the PLD engine."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))  # poisson_references.py
