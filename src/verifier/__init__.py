"""verifier: certify differential-privacy accounting.

Rigorous upper and lower bounds, high-confidence Monte Carlo estimates and verdicts for the privacy
of a mechanism (a dominating pair) run through a sampling/composition scheme.
"""

from importlib.metadata import PackageNotFoundError as _PackageNotFoundError
from importlib.metadata import version as _version

from verifier._types import Bound, Bracket, Direction, Dominance, Estimate, Measure, Quantity, Side, directions_for
from verifier.errors import (
    AccuracyNotReachable,
    IncompatibleObjects,
    InconsistentBounds,
    InvalidArgument,
    NotApplicable,
    NotCertified,
    NumericalFailure,
    VerifierError,
)
from verifier.pairs import DiscretePair, DominatingPair, Gaussian, Laplace, RandomizedResponse

try:
    __version__ = _version("verifier")
except _PackageNotFoundError:  # pragma: no cover - running from a source tree without installing
    __version__ = "0.0.0+unknown"

__all__ = [
    "Bound",
    "Bracket",
    "Direction",
    "Dominance",
    "Estimate",
    "Measure",
    "Quantity",
    "Side",
    "directions_for",
    "AccuracyNotReachable",
    "IncompatibleObjects",
    "InconsistentBounds",
    "InvalidArgument",
    "NotApplicable",
    "NotCertified",
    "NumericalFailure",
    "VerifierError",
    "DominatingPair",
    "DiscretePair",
    "Gaussian",
    "Laplace",
    "RandomizedResponse",
    "__version__",
]
