"""The version of verifier: the one place it is written (pyproject.toml reads it from here), so that
``verifier --version`` needs no importlib.metadata (~70 ms of start-up: issue 41)."""

__all__ = ["__version__"]

__version__ = "0.1.0"
