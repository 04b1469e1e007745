"""Certification: claims, the method portfolio, verdicts and certificates."""

__all__: list[str] = []
