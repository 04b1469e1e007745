"""Adapters that wrap the math layers (pairs, pld, rdp, analytic, montecarlo) as certification
methods. Each adapter module defines ``METHODS``, a list of :class:`~verifier.certify.method.Method`
instances; :mod:`verifier.certify.registry` collects them from the modules listed in ``ADAPTERS``."""

__all__ = ["ADAPTERS"]

ADAPTERS = [
    "verifier.certify.methods.exact",
    "verifier.certify.methods.batch_step",
    "verifier.certify.methods.replacement_runs",
    "verifier.certify.methods.truncated_attained",
    "verifier.certify.methods.truncated_adaptive",
    "verifier.certify.methods.pure",
    "verifier.certify.methods.montecarlo",
    "verifier.certify.methods.rdp",
    "verifier.certify.methods.analytic",
    "verifier.certify.methods.pld",
    "verifier.certify.methods.lattice",
    "verifier.certify.methods.allocation_pld",
    "verifier.certify.methods.composition",
    "verifier.certify.methods.zcdp",
    "verifier.certify.methods.checkin",
    "verifier.certify.methods.shuffled",
    "verifier.certify.methods.shuffle",
    "verifier.certify.methods.matrix_evidence",
    "verifier.certify.methods.matrix_cc",
    "verifier.certify.methods.matrix_partition",
    "verifier.certify.methods.matrix_chain",
    "verifier.certify.methods.banded_poisson",
    "verifier.certify.methods.member",
    "verifier.certify.methods.selection",
    "verifier.certify.methods.profile_tpr",
    "verifier.certify.methods.mmcc",
    "verifier.certify.methods.adaptive_batches",
]
