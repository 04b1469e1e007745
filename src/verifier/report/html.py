"""A self-contained HTML report of a verdict: what a reviewer needs to accept it, in one file.

The report holds the verdict and its reasons, the claim and how it was modelled, the best rigorous
bracket per direction on δ(claimed ε) and on ε(claimed δ), every bound every method gave (side,
direction, citation, time), the Monte Carlo evidence (estimates, never bounds), the methods not run
and why, the δ(ε) curves of the methods that ran with the claim marked, optionally the calibration
that chose the claim's parameter, and the versions. Styles are inline and the plot is an inline
base64 PNG: the file loads nothing from the network and can be mailed or archived as it is.
"""

from __future__ import annotations

import base64
import html
import io
import json
import math
from pathlib import Path
from typing import Sequence

import numpy as np

from verifier._files import write_text_atomically
from verifier.certify.calibrate import Calibration
from verifier.certify.certificate import to_certificate, tradeoff_reading
from verifier.certify.verdict import Outcome
from verifier.report.curves import delta_curves, tpr_curves
from verifier.report.plots import plot_delta_curves, plot_tradeoff

__all__ = ["render_report", "write_report", "write_html", "page", "table", "text", "DEFAULT_POINTS"]

#: ε grid points of the report's plot (each costs one run of every plotted method per direction).
DEFAULT_POINTS = 9

_COLOURS = {"CERTIFIED": "#1a7f37", "VIOLATED": "#cf222e", "INCONCLUSIVE": "#9a6700"}

_CSS = """
body { font-family: system-ui, -apple-system, 'Segoe UI', sans-serif; margin: 2em auto; max-width: 1100px;
       color: #1f2328; line-height: 1.45; padding: 0 1em; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; } h2 { font-size: 1.15em; border-bottom: 1px solid #d0d7de;
     padding-bottom: 0.2em; margin-top: 1.6em; }
.verdict { display: inline-block; color: white; font-weight: 700; font-size: 1.6em; padding: 0.25em 0.8em;
           border-radius: 6px; letter-spacing: 0.05em; }
table { border-collapse: collapse; font-size: 0.88em; margin: 0.5em 0; }
th, td { border: 1px solid #d0d7de; padding: 0.25em 0.6em; text-align: left; vertical-align: top; }
th { background: #f6f8fa; } td.num { font-family: ui-monospace, monospace; text-align: right; white-space: nowrap; }
.muted { color: #59636e; font-size: 0.9em; } code, pre { font-family: ui-monospace, monospace; font-size: 0.9em; }
pre { background: #f6f8fa; padding: 0.7em; border-radius: 6px; overflow-x: auto; }
img.plot { max-width: 100%; border: 1px solid #d0d7de; border-radius: 6px; }
"""


def text(value: object) -> str:
    """``value`` as HTML text (escaped)."""
    return html.escape(str(value), quote=True)


def _num(value: object) -> str:
    if value is None:
        return "none computed"
    if isinstance(value, float):
        return "∞" if value == math.inf else ("−∞" if value == -math.inf else f"{value:.10g}")
    if value in ("inf", "-inf"):
        return "∞" if value == "inf" else "−∞"
    return text(value)


def table(header: Sequence[str], rows: Sequence[Sequence[str]], numeric: Sequence[int] = ()) -> str:
    """An HTML table; cells are already escaped; columns in ``numeric`` are right-aligned monospace."""
    head = "".join(f"<th>{h}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f'<td class="num">{c}</td>' if i in numeric else f"<td>{c}</td>" for i, c in enumerate(row)) + "</tr>"
        for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _brackets(certificate: dict) -> str:
    rows = []
    for direction, entry in certificate["directions"].items():
        for key, label in (("delta_at_epsilon", "δ(claimed ε)"), ("epsilon_at_delta", "ε(claimed δ)"), ("rho", "ρ"), ("tpr_at_fpr", "TPR(claimed FPR)")):
            if key not in entry:
                continue
            b = entry[key]
            rows.append([text(direction), label, _num(b["lower"]), text(b["lower_method"] or "—"), _num(b["upper"]), text(b["upper_method"] or "—")])
    return table(["direction", "quantity", "lower bound", "from", "upper bound", "from"], rows, numeric=(2, 4))


def _bounds(certificate: dict) -> str:
    """Every bound, one row each; citations are numbered once below the table."""
    citations: list[str] = []
    rows = []
    for b in certificate["bounds"]:
        if b["citation"] not in citations:
            citations.append(b["citation"])
        rows.append(
            [
                text(b["quantity"]),
                _num(b["at"]),
                text(b["direction"]),
                text(b["side"]),
                _num(b["value"]),
                text(b["method"]),
                "yes" if b["rigorous"] else "no (not used in the verdict)",
                f"{b['seconds']:.3g}" if b.get("seconds") is not None else "—",
                f"[{citations.index(b['citation']) + 1}]",
            ]
        )
    header = ["quantity", "at", "direction", "side", "value", "method", "rigorous", "seconds", "citation"]
    notes = "".join(f"<li>{text(c)}</li>" for c in citations)
    return table(header, rows, numeric=(1, 4, 7)) + f'<ol class="muted">{notes}</ol>'


def _estimates(certificate: dict) -> str:
    if not certificate["estimates"]:
        return '<p class="muted">No Monte Carlo method ran for this claim.</p>'
    rows = [
        [text(e["direction"]), _num(e["at"]), _num(e["estimate"]), f"[{_num(e['lower'])}, {_num(e['upper'])}]", f"{e['confidence']:.0%}", text(e["samples"]), text(", ".join(filter(None, (e["method"], e.get("note")))))]
        for e in certificate["estimates"]
    ]
    note = '<p class="muted">Estimates with confidence intervals: evidence beside the verdict, never part of it.</p>'
    return note + table(["direction", "ε", "δ estimate", "interval", "confidence", "samples", "method"], rows, numeric=(1, 2, 3))


def _png(draw) -> str:
    """``draw(buffer)`` as base64 PNG data."""
    buffer = io.BytesIO()
    draw(buffer)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def _tradeoff_plot(outcome: Outcome, points: int) -> str:
    """A trade-off claim's curve: TPR against FPR, the band between the bounds shaded, claim marked."""
    claim = outcome.claim
    fprs = np.unique(np.concatenate([np.logspace(np.log10(min(1e-5, claim.fpr) if claim.fpr > 0 else 1e-5), 0.0, 4 * points), [claim.fpr]]))
    fprs = fprs[fprs > 0]
    curves = tpr_curves(claim.model, claim.directions, fprs, outcome.tpr.ran if outcome.tpr else None, focus=claim.fpr or 1e-2)
    if not curves:
        return '<p class="muted">No trade-off curve: no rigorous method bounds TPR here.</p>'
    data = _png(lambda buffer: plot_tradeoff(fprs, curves, buffer, claim=(claim.fpr, claim.tpr), title=f"TPR against FPR, {claim.neighboring}"))
    alt = f"upper and lower bounds on the attacker's TPR against FPR with the claim (TPR <= {claim.tpr:g} at FPR {claim.fpr:g}) marked"
    return f'<img class="plot" alt="{text(alt)}" src="data:image/png;base64,{data}">'


def _plot(outcome: Outcome, points: int) -> str:
    """The δ(ε) curves of the rigorous methods that ran, claim marked, as an inline PNG (for a
    trade-off claim the TPR curve, :func:`_tradeoff_plot`)."""
    claim = outcome.claim
    if claim.tpr is not None:
        return _tradeoff_plot(outcome, points)
    if claim.epsilon is None or outcome.delta is None:
        return '<p class="muted">No δ(ε) curve: the claim states no (ε, δ).</p>'
    ran = [name for name in outcome.delta.ran if any(b.method.split(":")[0] == name for b in outcome.delta.bounds)]
    if not ran:
        return '<p class="muted">No δ(ε) curve: no rigorous method gave a bound.</p>'
    epsilon_upper = max((b.value for b in (outcome.epsilon.bounds if outcome.epsilon else ()) if math.isfinite(b.value)), default=claim.epsilon)
    high = max(2.0 * max(claim.epsilon, epsilon_upper), 1e-3)
    epsilons = np.linspace(min(0.0, claim.epsilon), high, points)
    curves = delta_curves(claim.model, claim.directions, epsilons, ran, focus=claim.epsilon)
    buffer = io.BytesIO()
    plot_delta_curves(epsilons, curves, buffer, claim=(claim.epsilon, claim.delta), title=f"δ(ε) bounds, {claim.neighboring}")
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    alt = f"δ(ε) upper and lower bounds of {', '.join(ran)} with the claim (ε={claim.epsilon:g}, δ={claim.delta:g}) marked"
    return f'<img class="plot" alt="{text(alt)}" src="data:image/png;base64,{data}">'


def _calibration(calibration: Calibration | None) -> str:
    if calibration is None:
        return ""
    c = calibration.to_dict()
    low_high = "not bracketed (no value proven unsafe)" if c["unsafe"] is None else f"[{_num(min(c['safe'], c['unsafe']))}, {_num(max(c['safe'], c['unsafe']))}], gap {c['gap']:.3%}"
    rows = [[_num(p["value"]), text(p["verdict"]), _num(p["seconds"])] for p in c["probes"]]
    return (
        f"<h2>Calibration of {text(c['parameter'])}</h2>"
        f"<p>{text(c['parameter'])} = <code>{_num(c['safe'])}</code> is certified; the best possible value lies in {low_high} "
        f"(found in {len(rows)} certifier runs, {c['seconds']:.3g} s).</p>" + table(["value", "verdict", "seconds"], rows, numeric=(0, 2))
    )


def page(title: str, body: str) -> str:
    """A complete HTML document: ``title`` (plain text) and ``body`` (HTML), the house styles inline."""
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{text(title)}</title>
<style>{_CSS}</style></head><body>
{body}
</body></html>
"""


def _reading(outcome: Outcome) -> str:
    """A trade-off claim in one sentence (the certificate's reading)."""
    return f"<p>Reading: {text(tradeoff_reading(outcome))}</p>" if outcome.tpr is not None else ""


def _headline(outcome: Outcome) -> str:
    """ε(claimed δ) in words: the bracket per direction and its relative width (a trade-off claim:
    :func:`_reading`)."""
    if outcome.tpr is not None:
        return _reading(outcome)
    if outcome.epsilon is None:
        return ""
    parts = []
    for direction, b in outcome.epsilon.brackets.items():
        width = (b.upper - b.lower) / abs(b.upper) if math.isfinite(b.upper) and b.upper != 0 else math.inf
        shown = f"{width:.3%}" if math.isfinite(width) else "unbounded"
        parts.append(f"{text(direction.value)}: ε ∈ [{_num(b.lower)}, {_num(b.upper)}] (width {shown})")
    return f"<p>At the claimed δ = {_num(outcome.claim.delta)}: " + "; ".join(parts) + "</p>"


def _subject(claim) -> str:
    """``gaussian under poisson``; for a sequence, each phase's mechanism and scheme in order."""
    phases = claim.scheme.get("phases")
    if phases is None:
        return f"{claim.mechanism['name']} under {claim.scheme['name']}"
    return "sequence: " + ", then ".join(f"{p['mechanism']['name']} under {p['name']}" for p in phases)


def render_report(outcome: Outcome, *, calibration: Calibration | None = None, points: int = DEFAULT_POINTS) -> str:
    """The report of ``outcome`` as one HTML document (see the module docstring)."""
    certificate = to_certificate(outcome)
    verdict = certificate["verdict"]
    claim = outcome.claim
    stated = (
        f"ρ = {claim.rho!r} (zCDP)" if claim.rho is not None
        else f"TPR <= {claim.tpr!r} at FPR {claim.fpr!r} (trade-off)" if claim.tpr is not None
        else f"(ε = {claim.epsilon!r}, δ = {claim.delta!r})"
    )
    reasons = "".join(f"<li>{text(r)}</li>" for r in certificate["reasons"])
    skipped = "".join(f"<li>{text(s)}</li>" for s in certificate["skipped"]) or "<li>none</li>"
    versions = table(["package", "version"], [[text(k), text(v)] for k, v in certificate["versions"].items()])
    body = f"""<h1>verifier report</h1>
<p class="muted">{text(certificate['format'])}, created {text(certificate['created'])}, {certificate['seconds']:.3g} s</p>
<p><span class="verdict" id="verdict" style="background:{_COLOURS[verdict]}">{text(verdict)}</span>
&nbsp; exit status {certificate['exit_status']}</p>
{_headline(outcome)}
<h2>Claim</h2>
<p>{text(_subject(claim))}, {text(claim.neighboring)} neighbours: claimed <b>{text(stated)}</b></p>
<p class="muted">model: <code>{text(certificate['model']['scheme'])}</code>; {text(certificate['model']['neighboring'])}</p>
<pre>{text(json.dumps(certificate['claim'], indent=2, ensure_ascii=False))}</pre>
<h2>Why</h2><ul>{reasons}</ul>
<h2>Brackets per direction (best rigorous bounds)</h2>{_brackets(certificate)}
<h2>{"Trade-off curve (TPR at FPR)" if claim.tpr is not None else "δ(ε) curves"}</h2>{_plot(outcome, points)}
<h2>Every bound</h2>{_bounds(certificate)}
<h2>Monte Carlo evidence</h2>{_estimates(certificate)}
<h2>Methods not run</h2><ul>{skipped}</ul>
{_calibration(calibration)}
<h2>Versions</h2>{versions}
"""
    return page(f"verifier: {verdict} {stated}", body)


def write_report(path: str | Path, outcome: Outcome, *, calibration: Calibration | None = None, points: int = DEFAULT_POINTS) -> Path:
    """Write :func:`render_report` to ``path`` (see :func:`write_html`)."""
    return write_html(path, render_report(outcome, calibration=calibration, points=points))


def write_html(path: str | Path, document: str) -> Path:
    """Write ``document`` to ``path``; a path that cannot be written is an invalid ``report``
    option (exit status 2 on the command line)."""
    target = Path(path)
    write_text_atomically(target, document, "report")  # an interrupted run leaves no partial report
    return target
