"""Claims from the accountants people use: dp_accounting's DpEvent trees, Opacus's accountants and prv_accountant's PRVs.

Each adapter writes the claim a user would write by hand (the JSON of :mod:`verifier.certify.claim`)
and validates it with :func:`~verifier.certify.claim.parse_claim`, so ``certify`` decides it. An
event or history the claim language cannot express is refused with an
:class:`~verifier.errors.InvalidArgument` naming the unsupported node; nothing is approximated.
"""

from verifier.adapters.dp_event import claim_object_from_dp_event, dp_event_json, from_dp_event
from verifier.adapters.opacus import from_opacus
from verifier.adapters.prv import from_prv

__all__ = ["from_dp_event", "claim_object_from_dp_event", "dp_event_json", "from_opacus", "from_prv"]
