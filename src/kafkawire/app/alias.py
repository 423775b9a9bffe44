"""kafkawire under the name ``confluent_kafka``, for programs and libraries that import it themselves.

``install_as_confluent_kafka()`` puts an import finder first on ``sys.meta_path``: ``confluent_kafka``
and ``confluent_kafka.<rest>`` become ``kafkawire`` and ``kafkawire.<rest>`` (the same module
objects, so a class is the same class under both names). confluent-kafka's private submodules that
kafkawire has no module of that name for are sent to the kafkawire package that holds the same
names (``NEAREST``). A name found in neither stays unimportable, as on any other missing module.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
from collections.abc import Sequence

ALIAS = "confluent_kafka"
PACKAGE = "kafkawire"

# confluent-kafka's admin types, one private module per family; kafkawire.admin exports them all.
ADMIN_PARTS = frozenset({"_acl", "_cluster", "_config", "_group", "_listoffsets", "_metadata", "_records"})
ADMIN_PARTS |= {"_resource", "_scram", "_topic"}

# confluent-kafka's AIOProducer's batching parts, one module in kafkawire.
AIO_BATCHING = ("_buffer_timeout_manager", "_kafka_batch_executor", "_message_batch", "_producer_batch_processor")

# confluent-kafka's modules that kafkawire has no module of the same name for -> the kafkawire
# module(s) holding their names. Several modules: the alias is a module of their public names
# together (the first one holding a name gives it). A same-named kafkawire module always wins over
# this table (kafkawire.cimpl, once it exists, replaces the cimpl row).
NEAREST: dict[str, tuple[str, ...]] = {
    "confluent_kafka.cimpl": ("kafkawire", "kafkawire.admin"),
    "confluent_kafka._model": ("kafkawire",),
    "confluent_kafka._types": ("kafkawire",),
    "confluent_kafka._serde_builder": ("kafkawire.serialization",),
    "confluent_kafka.deserializing_share_consumer": ("kafkawire.deserializing_consumer",),
    **{f"confluent_kafka.admin.{name}": ("kafkawire.admin",) for name in ADMIN_PARTS},
    "confluent_kafka.aio.producer": ("kafkawire.aio",),
    "confluent_kafka.aio.producer._AIOProducer": ("kafkawire.aio", "kafkawire.aio.batching"),
    **{f"confluent_kafka.aio.producer.{name}": ("kafkawire.aio.batching",) for name in AIO_BATCHING},
    "confluent_kafka.schema_registry.common.avro": ("kafkawire.schema_registry.avro",),
    "confluent_kafka.schema_registry.common.protobuf": ("kafkawire.schema_registry.protobuf",),
    "confluent_kafka.schema_registry.common._oauthbearer": ("kafkawire.schema_registry.common.auth",),
    "confluent_kafka.schema_registry._async.mock_schema_registry_client": ("kafkawire.schema_registry._async",),
    "confluent_kafka.schema_registry._async.serde": ("kafkawire.schema_registry._async",),
    "confluent_kafka.schema_registry._async.avro": ("kafkawire.schema_registry._async",),
    "confluent_kafka.schema_registry._async.json_schema": ("kafkawire.schema_registry._async",),
    "confluent_kafka.schema_registry._async.protobuf": ("kafkawire.schema_registry._async",),
    "confluent_kafka.schema_registry.rules.encryption.localkms.local_client": (
        "kafkawire.schema_registry.rules.encryption.localkms.local_driver",
    ),
}


class ConfluentKafkaAlreadyImported(ImportError):
    """The real confluent_kafka is loaded: aliasing now would leave two of every class in the process."""


def install_as_confluent_kafka() -> None:
    """Make ``import confluent_kafka`` (and its submodules) give kafkawire, for the rest of the process.

    Call it before anything imports confluent_kafka; calling it again does nothing.
    """
    if any(isinstance(finder, _AliasFinder) for finder in sys.meta_path):
        return
    loaded = sorted(name for name, module in list(sys.modules.items()) if _is_real_confluent(name, module))
    if loaded:
        origin = getattr(sys.modules[loaded[0]], "__file__", None) or "?"
        raise ConfluentKafkaAlreadyImported(
            f"confluent_kafka is already imported in this process (from {origin}): "
            "call kafkawire.install_as_confluent_kafka() before anything imports confluent_kafka",
            name=ALIAS,
        )
    sys.meta_path.insert(0, _AliasFinder())
    # Bound at once, as if the program had imported it: import hooks keyed by the module's name
    # (ddtrace's patch(kafka=True)) look in sys.modules when they register, and never see the name
    # on a later import, which gives a module whose __name__ is "kafkawire".
    importlib.import_module(ALIAS)


def kafkawire_modules(fullname: str) -> tuple[str, ...] | None:
    """The kafkawire module(s) that ``confluent_kafka[.rest]`` is, or None if kafkawire has none."""
    if fullname != ALIAS and not fullname.startswith(ALIAS + "."):
        return None
    same = PACKAGE + fullname[len(ALIAS) :]
    try:
        if importlib.util.find_spec(same) is not None:
            return (same,)
    except ImportError:  # its parent package does not exist in kafkawire
        pass
    return NEAREST.get(fullname)


def _is_real_confluent(name: str, module: object) -> bool:
    if name != ALIAS and not name.startswith(ALIAS + "."):
        return False
    if not isinstance(module, types.ModuleType):
        return False
    spec = getattr(module, "__spec__", None)
    own = module.__name__ == PACKAGE or module.__name__.startswith(PACKAGE + ".")
    return not own and not isinstance(getattr(spec, "loader", None), _AliasFinder)


class _AliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``confluent_kafka[.rest]`` and loads it as the kafkawire module(s) it stands for."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: types.ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        names = kafkawire_modules(fullname)
        if names is None:
            return None
        origin = "kafkawire: " + ", ".join(names)
        return importlib.machinery.ModuleSpec(fullname, self, origin=origin, loader_state=names)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        names: tuple[str, ...] = spec.loader_state
        modules = [importlib.import_module(name) for name in names]
        parent, _, child = spec.name.rpartition(".")
        if len(modules) == 1:
            module = modules[0]
        else:
            module = types.ModuleType(spec.name, f"confluent-kafka's {child}: the names of {', '.join(names)}")
            for source in reversed(modules):
                module.__dict__.update({name: getattr(source, name) for name in _public_names(source)})
        if parent:
            # The import system binds the module on its parent (a kafkawire module): never over a
            # name that parent already gives something else.
            held = getattr(sys.modules[parent], child, module)
            if held is not module:
                raise ImportError(f"{spec.name} would replace {parent}'s own {child!r}", name=spec.name)
        spec.loader_state = (names, getattr(module, "__spec__", None))
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        # The import system has set the alias's spec on the module: a kafkawire module keeps its own.
        alias_spec = module.__spec__
        names: tuple[str, ...] = ()
        own_spec = None
        if alias_spec is not None:
            names, own_spec = alias_spec.loader_state
        if own_spec is not None:
            module.__spec__ = own_spec
        if alias_spec is not None and len(names) == 1:
            _bind_shadowed_submodules(alias_spec.name, names[0], module)


def _bind_shadowed_submodules(alias_name: str, name: str, package: types.ModuleType) -> None:
    """Register under the alias the loaded submodules of ``package`` whose name the package gives to
    another object (kafkawire.avro's ``load`` is the function, ``kafkawire.avro.load`` the module, as
    in confluent-kafka): importing them finds them loaded, so nothing rebinds the package's name."""
    prefix = name + "."
    for loaded, submodule in list(sys.modules.items()):
        child = loaded[len(prefix) :]
        if loaded.startswith(prefix) and "." not in child and getattr(package, child, submodule) is not submodule:
            sys.modules.setdefault(f"{alias_name}.{child}", submodule)


def _public_names(module: types.ModuleType) -> list[str]:
    declared = getattr(module, "__all__", None)
    if declared is not None:
        return [name for name in declared if hasattr(module, name)]
    return [name for name in vars(module) if not name.startswith("_")]
