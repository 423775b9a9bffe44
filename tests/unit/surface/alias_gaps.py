"""What confluent-kafka has and kafkawire, under the alias, does not (tests/unit/surface/test_alias.py holds
these equal to what it finds: a module or name kafkawire gains must be struck off here)."""

# confluent-kafka's modules with no kafkawire counterpart, so `import confluent_kafka.<module>` fails
# under the alias as on any missing module.
UNIMPORTABLE = frozenset(
    {
        # Confluent's Variant codec (the Spark/Parquet Variant binary encoding, 1,200 lines in
        # confluent-kafka): the Variant protobuf type is here (confluent.type.variant_pb2), its codec not yet
        ".schema_registry.confluent.type.variant_utils",
        # CEL helpers (decimal, timestamp, string-format, variant and field-presence functions, the
        # protovalidate-style constraints, the protobuf result writer) kafkawire's CEL rules do not have yet
        ".schema_registry.rules.cel.cel_field_presence",
        ".schema_registry.rules.cel.constraints",
        ".schema_registry.rules.cel.decimal_funcs",
        ".schema_registry.rules.cel.protobuf_result_writer",
        ".schema_registry.rules.cel.string_format",
        ".schema_registry.rules.cel.timestamp_funcs",
        ".schema_registry.rules.cel.variant_funcs",
        ".schema_registry.rules.cel.variant_path",
        # the cloud KMS SDKs' wrappers (kafkawire's drivers call the SDKs themselves)
        ".schema_registry.rules.encryption.azurekms.azure_aead",
        ".schema_registry.rules.encryption.gcpkms.gcp_client",
    }
)

# Per module (its name after "confluent_kafka"), the names confluent-kafka's gives that kafkawire's
# counterpart does not. What stays, by kind:
# - the Variant codec's names (Variant, protobuf_to_variant, variant_to_protobuf, variant_utils) and the
#   CEL helpers' (EXTRA_FUNCS, make_extra_funcs, string_format, msg_to_cel, field_value_to_cel,
#   InterpretedRunner, DAYS_SHIFT, protobuf_result_writer, is_cel_leaf_message, set_decimal_message,
#   set_timestamp_message, rebuild_value_type): see UNIMPORTABLE;
# - protobuf's get_type and transform (the field walk, which reports each field's type):
#   confluent-kafka types a repeated field by its element and a Decimal/Timestamp field as BYTES/LONG,
#   kafkawire's rule walk as ARRAY and RECORD (a difference to settle first);
#   MAX_ENCODABLE_COEFFICIENT_DIGITS (kafkawire encodes a decimal of any width) and
#   PROTOBUF_MAJOR_VERSION (kafkawire detects the descriptor API instead);
# - private classes and functions of confluent-kafka's implementation (underscored: its REST and OAuth
#   clients, field providers and their builders, _SchemaCache, schema-walk helpers), which no
#   program is meant to import;
# - ReentryContext: the C API's reentrancy gate (see its entry).
KNOWN_MISSING: dict[str, str] = {
    # the identity confluent-kafka's C extension's reentrancy gate reads (cimpl._reentry_identity_var)
    # in its AIOConsumer's calls; kafkawire's consumer has no such gate for it to set
    ".aio._common": ("ReentryContext"),
    ".schema_registry._async.avro": ("_resolve_named_schema"),
    ".schema_registry._async.json_schema": ("_resolve_named_schema"),
    ".schema_registry._async.protobuf": ("_resolve_named_schema transform"),
    ".schema_registry._async.schema_registry_client": (
        "_AsyncBaseRestClient _AsyncCustomOAuthClient _AsyncOAuthClient _AsyncRestClient _urlencode"
    ),
    ".schema_registry._sync.avro": ("_resolve_named_schema"),
    ".schema_registry._sync.json_schema": ("_resolve_named_schema"),
    ".schema_registry._sync.protobuf": ("_resolve_named_schema transform"),
    ".schema_registry._sync.schema_registry_client": ("_BaseRestClient _CustomOAuthClient _OAuthClient _urlencode"),
    ".schema_registry.common._oauthbearer": (
        "_AbstractCustomOAuthBearerFieldProviderBuilder _AbstractOAuthBearerFieldProviderBuilder "
        "_AbstractOAuthBearerOIDCAzureIMDSFieldProviderBuilder _AbstractOAuthBearerOIDCFieldProviderBuilder "
        "_AsyncBearerFieldProvider _BearerFieldProvider _StaticFieldProvider "
        "_StaticOAuthBearerFieldProviderBuilder"
    ),
    ".schema_registry.common.avro": (
        "Variant _collapse_schema _disjoint _get_inline_tags_recursively _implied_namespace _schema_loads"
    ),
    ".schema_registry.common.json_schema": ("_disjoint _retrieve_via_httpx _transform_field _validate_subschemas"),
    ".schema_registry.common.protobuf": (
        "MAX_ENCODABLE_COEFFICIENT_DIGITS PROTOBUF_MAJOR_VERSION Variant _bytes _disjoint _init_pool "
        "_is_builtin _proto_to_str _set_field _str_to_proto _transform_field get_type is_cel_leaf_message "
        "protobuf_to_variant rebuild_value_type set_decimal_message set_timestamp_message transform "
        "variant_to_protobuf"
    ),
    ".schema_registry.common.schema_registry_client": ("_AsyncStaticFieldProvider _SchemaCache _StaticFieldProvider"),
    ".schema_registry.confluent.type": ("variant_utils"),
    ".schema_registry.protobuf": ("get_type protobuf_to_variant transform variant_to_protobuf"),
    ".schema_registry.rules.cel.cel_executor": (
        "DAYS_SHIFT EXTRA_FUNCS InterpretedRunner field_value_to_cel msg_to_cel protobuf_result_writer"
    ),
    ".schema_registry.rules.cel.cel_field_executor": ("field_value_to_cel msg_to_cel"),
    ".schema_registry.rules.cel.cel_validator": ("EXTRA_FUNCS InterpretedRunner"),
    ".schema_registry.rules.cel.extra_func": ("EXTRA_FUNCS make_extra_funcs string_format"),
}
