"""ACL calls (create, describe, delete), each one request to any broker (the authorizer answers).

A broker without an authorizer answers SECURITY_DISABLED, final for the call.
"""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any

from ..client import routers
from ..core.policy.admin import ADMIN_READ
from ..protocol.apis import CREATE_ACLS, DELETE_ACLS, DESCRIBE_ACLS
from ..protocol.codec import Struct
from .acl_types import AclBinding, AclBindingFilter, binding_from_wire
from .base import AdminBase, _error


def _bindings(value: Any, cls: type[AclBinding], what: str) -> list[Any]:
    """confluent-kafka's checks: None is a TypeError, anything else wrong a ValueError."""
    if value is None:
        raise TypeError(f"Expected a list of {what}, not None")
    if not isinstance(value, list):
        raise ValueError(f"Expected a list of {what}, not {type(value).__name__}")
    if not value:
        raise ValueError(f"Expected non-empty list of {what}")
    seen: set[AclBinding] = set()
    for item in value:
        if type(item) is not cls:
            raise ValueError(f"Expected list of {what}, got an element of type {type(item).__name__}")
        if item in seen:
            raise ValueError(f"Duplicate {what} not allowed: {item}")
        seen.add(item)
    return value


class AclCalls(AdminBase):
    """Access-control lists."""

    def create_acls(self, acls: list[AclBinding], **kwargs: Any) -> dict[AclBinding, Future[None]]:
        """Create each ACL; a future per binding (None, or its KafkaException)."""
        bindings = _bindings(acls, AclBinding, "AclBinding objects")
        request_s, _, _ = self._options(kwargs)

        def body(keys: list[AclBinding], version: int) -> dict[str, Any]:
            return {"creations": [k.wire() for k in keys]}

        def parse(response: Struct, keys: list[AclBinding], node: int | None) -> dict[AclBinding, Any]:
            return {k: _error(r.error_code, r.error_message) for k, r in zip(keys, response.results, strict=False)}

        return self._run(bindings, CREATE_ACLS, routers.ANY_BROKER, body, parse, request_s)

    def describe_acls(self, acl_binding_filter: AclBindingFilter, **kwargs: Any) -> Future[list[AclBinding]]:
        """The ACLs matching the filter: a future of a list of `AclBinding`."""
        if type(acl_binding_filter) is not AclBindingFilter:
            raise TypeError(f"Expected an AclBindingFilter, not {type(acl_binding_filter).__name__}")
        request_s, _, _ = self._options(kwargs)

        def body(keys: list[AclBindingFilter], version: int) -> dict[str, Any]:
            return keys[0].filter_wire()

        def parse(response: Struct, keys: list[AclBindingFilter], node: int | None) -> dict[AclBindingFilter, Any]:
            error = _error(response.error_code, response.error_message)
            if error is not None:
                return {keys[0]: error}
            return {
                keys[0]: [
                    binding_from_wire(acl, r.resource_type, r.resource_name, r.pattern_type)
                    for r in response.resources
                    for acl in r.acls
                ]
            }

        futures = self._run(
            [acl_binding_filter], DESCRIBE_ACLS, routers.ANY_BROKER, body, parse, request_s, policy=ADMIN_READ
        )
        return futures[acl_binding_filter]

    def delete_acls(
        self, acl_binding_filters: list[AclBindingFilter], **kwargs: Any
    ) -> dict[AclBindingFilter, Future[list[AclBinding]]]:
        """Delete the ACLs matching each filter; each future gives the bindings it deleted."""
        filters = _bindings(acl_binding_filters, AclBindingFilter, "AclBindingFilter objects")
        request_s, _, _ = self._options(kwargs)

        def body(keys: list[AclBindingFilter], version: int) -> dict[str, Any]:
            return {"filters": [k.filter_wire() for k in keys]}

        def parse(response: Struct, keys: list[AclBindingFilter], node: int | None) -> dict[AclBindingFilter, Any]:
            out: dict[AclBindingFilter, Any] = {}
            for key, r in zip(keys, response.filter_results, strict=False):
                error = _error(r.error_code, r.error_message)
                failed = next((m for m in r.matching_acls if m.error_code), None)
                if error is None and failed is not None:  # a matching ACL the broker could not delete
                    error = _error(failed.error_code, failed.error_message)
                out[key] = (
                    error
                    if error is not None
                    else [
                        binding_from_wire(m, m.resource_type, m.resource_name, m.pattern_type) for m in r.matching_acls
                    ]
                )
            return out

        return self._run(filters, DELETE_ACLS, routers.ANY_BROKER, body, parse, request_s)
