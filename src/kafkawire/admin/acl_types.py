"""ACL values, named and shaped as in ``confluent_kafka.admin``: `AclBinding`, `AclBindingFilter`
and their enums. Enum values are librdkafka's, which are also Kafka's wire numbers."""

from __future__ import annotations

import functools
from typing import Any, ClassVar

from ..base import model
from .types import ResourceType, _Ordered

__all__ = ["AclBinding", "AclBindingFilter", "AclOperation", "AclPermissionType", "ResourcePatternType"]


class ResourcePatternType(_Ordered):
    """How an ACL's resource name matches: exactly (LITERAL) or as a prefix (PREFIXED); ANY and
    MATCH only in filters (MATCH: whatever would apply to the name, wildcards and prefixes too)."""

    UNKNOWN = model.RESOURCE_PATTERN_UNKNOWN
    ANY = model.RESOURCE_PATTERN_ANY
    MATCH = model.RESOURCE_PATTERN_MATCH
    LITERAL = model.RESOURCE_PATTERN_LITERAL
    PREFIXED = model.RESOURCE_PATTERN_PREFIXED


class AclOperation(_Ordered):
    UNKNOWN = model.ACL_OPERATION_UNKNOWN
    ANY = model.ACL_OPERATION_ANY
    ALL = model.ACL_OPERATION_ALL
    READ = model.ACL_OPERATION_READ
    WRITE = model.ACL_OPERATION_WRITE
    CREATE = model.ACL_OPERATION_CREATE
    DELETE = model.ACL_OPERATION_DELETE
    ALTER = model.ACL_OPERATION_ALTER
    DESCRIBE = model.ACL_OPERATION_DESCRIBE
    CLUSTER_ACTION = model.ACL_OPERATION_CLUSTER_ACTION
    DESCRIBE_CONFIGS = model.ACL_OPERATION_DESCRIBE_CONFIGS
    ALTER_CONFIGS = model.ACL_OPERATION_ALTER_CONFIGS
    IDEMPOTENT_WRITE = model.ACL_OPERATION_IDEMPOTENT_WRITE


class AclPermissionType(_Ordered):
    UNKNOWN = model.ACL_PERMISSION_TYPE_UNKNOWN
    ANY = model.ACL_PERMISSION_TYPE_ANY
    DENY = model.ACL_PERMISSION_TYPE_DENY
    ALLOW = model.ACL_PERMISSION_TYPE_ALLOW


# (attribute, enum) in constructor order; the strings between them are name, principal, host.
_ENUMS = {
    "restype": ResourceType,
    "resource_pattern_type": ResourcePatternType,
    "operation": AclOperation,
    "permission_type": AclPermissionType,
}
_STRINGS = ("name", "principal", "host")


def _enum(cls: Any, value: Any, what: str) -> Any:
    """An enum member from a member, its name (any case) or its value, as confluent-kafka accepts."""
    if isinstance(value, cls):
        return value
    try:
        if isinstance(value, str):
            return cls[value.upper()]
        if isinstance(value, int) and not isinstance(value, bool):
            return cls(value)
    except (KeyError, ValueError):
        pass
    raise ValueError(f"Unknown {what} {value!r}: expected a {cls.__name__}")


@functools.total_ordering
class AclBinding:
    """One ACL: who (principal, host) may or may not (permission) do what (operation) on which
    resource (type, name, pattern). Filters' wildcards (ANY, MATCH) are refused here."""

    _nullable: ClassVar[tuple[str, ...]] = ()
    _forbidden: ClassVar[dict[str, tuple[Any, ...]]] = {
        "restype": (ResourceType.ANY,),
        "resource_pattern_type": (ResourcePatternType.ANY, ResourcePatternType.MATCH),
        "operation": (AclOperation.ANY,),
        "permission_type": (AclPermissionType.ANY,),
    }

    def __init__(
        self,
        restype: ResourceType | str | int,
        name: str | None,
        resource_pattern_type: ResourcePatternType | str | int,
        principal: str | None,
        host: str | None,
        operation: AclOperation | str | int,
        permission_type: AclPermissionType | str | int,
    ) -> None:
        given = {
            "restype": restype,
            "name": name,
            "resource_pattern_type": resource_pattern_type,
            "principal": principal,
            "host": host,
            "operation": operation,
            "permission_type": permission_type,
        }
        for attr, value in given.items():
            if value is None and attr not in self._nullable:
                raise ValueError(f"{attr} must not be None")
            if attr in _STRINGS and value is not None and not isinstance(value, str):
                raise TypeError(f"Expected {attr} to be a string, not {type(value).__name__}")
        self.restype: ResourceType = _enum(ResourceType, restype, "restype")
        self.name = name
        self.resource_pattern_type: ResourcePatternType = _enum(
            ResourcePatternType, resource_pattern_type, "resource_pattern_type"
        )
        self.principal = principal
        self.host = host
        self.operation: AclOperation = _enum(AclOperation, operation, "operation")
        self.permission_type: AclPermissionType = _enum(AclPermissionType, permission_type, "permission_type")
        for attr, forbidden in self._forbidden.items():
            value = getattr(self, attr)
            if value in forbidden:
                raise ValueError(f"{type(value).__name__}.{value.name} is not accepted by {type(self).__name__}")
        self.restype_int = self.restype.value
        self.resource_pattern_type_int = self.resource_pattern_type.value
        self.operation_int = self.operation.value
        self.permission_type_int = self.permission_type.value

    def _key(self) -> tuple[Any, ...]:
        return (
            self.restype,
            self.name,
            self.resource_pattern_type,
            self.principal,
            self.host,
            self.operation,
            self.permission_type,
        )

    def _sort_key(self) -> tuple[Any, ...]:
        return tuple(v.value if isinstance(v, _Ordered) else (v or "") for v in self._key())

    def __hash__(self) -> int:
        return hash(self._key())

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AclBinding) or type(self) is not type(other):
            return NotImplemented
        return self._key() == other._key()

    def __lt__(self, other: AclBinding) -> bool:
        if not isinstance(other, AclBinding):
            return NotImplemented
        return self._sort_key() < other._sort_key()

    def __repr__(self) -> str:
        shown = [str(v) for v in self._key()]
        return f"{type(self).__name__}({','.join(shown)})"

    __str__ = __repr__

    def wire(self) -> dict[str, Any]:
        """The fields a CreateAcls creation, DescribeAcls or DeleteAcls filter carries."""
        return {
            "resource_type": self.restype.value,
            "resource_name": self.name,
            "resource_pattern_type": self.resource_pattern_type.value,
            "principal": self.principal,
            "host": self.host,
            "operation": self.operation.value,
            "permission_type": self.permission_type.value,
        }

    def filter_wire(self) -> dict[str, Any]:
        """The same fields under a filter's names (DescribeAcls, DeleteAcls)."""
        return {
            "resource_type_filter": self.restype.value,
            "resource_name_filter": self.name,
            "pattern_type_filter": self.resource_pattern_type.value,
            "principal_filter": self.principal,
            "host_filter": self.host,
            "operation": self.operation.value,
            "permission_type": self.permission_type.value,
        }


class AclBindingFilter(AclBinding):
    """Matches ACLs for describe_acls() and delete_acls(): None name, principal or host match any;
    ANY (and MATCH for the pattern type) are allowed."""

    _nullable: ClassVar[tuple[str, ...]] = _STRINGS
    _forbidden: ClassVar[dict[str, tuple[Any, ...]]] = {}


def binding_from_wire(entry: Any, restype: int, name: str, pattern: int) -> AclBinding:
    """An AclBinding from an answer's entry (unknown numbers read as UNKNOWN, never fail)."""

    def known(cls: Any, value: int) -> Any:
        try:
            return cls(value)
        except ValueError:
            return cls.UNKNOWN

    return AclBinding(
        known(ResourceType, restype),
        name,
        known(ResourcePatternType, pattern),
        entry.principal,
        entry.host,
        known(AclOperation, entry.operation),
        known(AclPermissionType, entry.permission_type),
    )


NO_OPERATIONS = -(2**31)  # an authorized-operations field the broker left unset


def operations_from_bits(bits: int) -> list[AclOperation] | None:
    """Kafka's authorized-operations bit field (bit n: operation n) as AclOperations; None when absent.

    As librdkafka reads it: any negative field is "not asked" (Kafka leaves INT_MIN, Tansu -1), and
    the bits of UNKNOWN, ANY and ALL, which KIP-430 keeps unset, are not operations."""
    if bits < 0:
        return None
    return [op for op in AclOperation if op.value >= AclOperation.READ.value and bits >> op.value & 1]
