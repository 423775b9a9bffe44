"""SaslHandshake (v1: tokens follow in SaslAuthenticate) and SaslAuthenticate. A cluster made with
users answers nothing else on a connection until it has logged in (see dispatch)."""

from __future__ import annotations

from typing import Any

from kafkawire.protocol import error_codes as E

from .sasl import MECHANISMS, AuthenticationFailed, ServerConversation
from .world import AUTHENTICATED, Handler, Request, World


def sasl_handshake(world: World, req: Request) -> dict[str, Any]:
    mechanism = req.body.mechanism
    if world.users is None or mechanism not in MECHANISMS:
        return {"error_code": E.UNSUPPORTED_SASL_MECHANISM, "mechanisms": list(MECHANISMS) if world.users else []}
    world.authenticated[req.connection] = ServerConversation(mechanism, world.users)
    return {"error_code": E.NONE, "mechanisms": list(MECHANISMS)}


def sasl_authenticate(world: World, req: Request) -> dict[str, Any]:
    conversation = world.authenticated.get(req.connection)
    if not isinstance(conversation, ServerConversation):
        return {"error_code": E.ILLEGAL_SASL_STATE, "error_message": "SaslHandshake first"}
    try:
        token = conversation.step(bytes(req.body.auth_bytes))
    except AuthenticationFailed as exc:
        world.authenticated.pop(req.connection, None)
        return {"error_code": E.SASL_AUTHENTICATION_FAILED, "error_message": str(exc)}
    if conversation.done:
        world.authenticated[req.connection] = AUTHENTICATED
    return {"error_code": E.NONE, "auth_bytes": token}


HANDLERS: dict[int, tuple[Handler, int, int]] = {
    17: (sasl_handshake, 1, 1),
    36: (sasl_authenticate, 0, 2),
}
