"""What confluent-kafka has and kafkawire, under the alias, does not (tests/unit/surface/test_alias.py holds
these equal to what it finds: a module or name kafkawire gains must be struck off here)."""

# confluent-kafka's modules with no kafkawire counterpart, so `import confluent_kafka.<module>` fails
# under the alias as on any missing module.
UNIMPORTABLE: frozenset[str] = frozenset()

# Per module (its name after "confluent_kafka"), the names confluent-kafka's gives that kafkawire's
# counterpart does not: ReentryContext alone, the C API's reentrancy gate (see its entry).
KNOWN_MISSING: dict[str, str] = {
    # the identity confluent-kafka's C extension's reentrancy gate reads (cimpl._reentry_identity_var)
    # in its AIOConsumer's calls; kafkawire's consumer has no such gate for it to set
    ".aio._common": ("ReentryContext"),
}
