"""What confluent-kafka has and kafkawire, under the alias, does not (tests/unit/surface/test_alias.py holds
these equal to what it finds: a module or name kafkawire gains must be struck off here)."""

# confluent-kafka's modules with no kafkawire counterpart, so `import confluent_kafka.<module>` fails
# under the alias as on any missing module.
UNIMPORTABLE: frozenset[str] = frozenset()

# Per module (its name after "confluent_kafka"), the names confluent-kafka's gives that kafkawire's
# counterpart does not. What stays, by kind:
# - confluent-kafka's REST client bases (see their entries);
# - ReentryContext: the C API's reentrancy gate (see its entry).
KNOWN_MISSING: dict[str, str] = {
    # the identity confluent-kafka's C extension's reentrancy gate reads (cimpl._reentry_identity_var)
    # in its AIOConsumer's calls; kafkawire's consumer has no such gate for it to set
    ".aio._common": ("ReentryContext"),
    # _BaseRestClient(conf) is confluent-kafka's parse of the registry configuration; kafkawire's
    # (common/rest.py) answers otherwise on purpose for some configurations: it refuses a url that is
    # not http(s) with a host ("mock://", "httpx://h": mock:// is SchemaRegistryClient.new_client's), a
    # non-int max.retries/retries.*/cache.capacity (a float or bool: confluent-kafka truncates) and a
    # non-number timeout; it keeps the url's userinfo out of base_urls (confluent-kafka's keeps the
    # password there); it takes basic.auth.credentials.source (USER_INFO, SASL_INHERIT). The async
    # client runs the sync REST client in worker threads, so it has no _AsyncRestClient of its own.
    ".schema_registry._async.schema_registry_client": ("_AsyncBaseRestClient _AsyncRestClient"),
    ".schema_registry._sync.schema_registry_client": ("_BaseRestClient"),
}
