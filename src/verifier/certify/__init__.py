"""Certification: claims, the method portfolio, verdicts and certificates."""
