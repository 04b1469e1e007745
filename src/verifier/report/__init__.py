"""Reports: plots of the bounds verifier computes (matplotlib, optional: ``pip install 'verifier[plot]'``)."""

from verifier.report.plots import Curve, plot_delta_curves

__all__ = ["Curve", "plot_delta_curves"]
