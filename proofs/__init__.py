"""Sympy derivations of the closed forms that the verifier's numeric code is tested against.

One module per result; each has ``derive(claimed=None)`` that derives the expressions from the
definitions, raises ``proofs._common.DerivationFailed`` on any mismatch, and returns the verified
sympy expressions (names and free symbols in the module docstring and ``EXPORT_SYMBOLS``).
Run them all with ``python proofs/run_all.py``.
"""
