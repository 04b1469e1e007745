"""Claims from the accountants people use: dp_accounting's DpEvent trees, Opacus's accountants, prv_accountant's PRVs and jax_privacy's batch selection strategies.

Each adapter writes the claim a user would write by hand (the JSON of :mod:`verifier.certify.claim`)
and validates it with :func:`~verifier.certify.claim.parse_claim`; ``verifier.certify(claim)`` decides it
(or give the event, accountant or PRVs to ``verifier.certify`` directly: :mod:`verifier.api`). An
event or history the claim language cannot express is refused with an
:class:`~verifier.errors.InvalidArgument` naming the unsupported node; nothing is approximated.
"""

from verifier.adapters.dp_event import claim_object_from_dp_event, dp_event_json, from_dp_event
from verifier.adapters.opacus import from_opacus
from verifier.adapters.prv import from_prv
from verifier.adapters.batch_selection import from_batch_selection

__all__ = ["from_dp_event", "claim_object_from_dp_event", "dp_event_json", "from_opacus", "from_prv", "from_batch_selection"]
