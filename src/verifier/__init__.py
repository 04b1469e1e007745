"""verifier: certify differential-privacy accounting.

Rigorous upper and lower bounds, high-confidence Monte Carlo estimates and verdicts for the privacy
of a mechanism (a dominating pair) run through a sampling/composition scheme.
"""

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


def __getattr__(name: str):
    """``verifier.__version__``, looked up on first use (importlib.metadata costs ~50 ms of every
    command's start-up otherwise: issue 17), and ``verifier.calibrate``, imported on first use."""
    if name == "calibrate":  # certified calibration (verifier.certify.calibrate), imported on first use
        from verifier.certify.calibrate import calibrate

        globals()["calibrate"] = calibrate
        return calibrate
    if name != "__version__":
        raise AttributeError(f"module 'verifier' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        value = version("verifier")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree without installing
        value = "0.0.0+unknown"
    globals()["__version__"] = value
    return value

__all__ = [
    "calibrate",
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
