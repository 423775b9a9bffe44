"""What confluent-kafka has and kafkawire, under the alias, does not (tests/unit/surface/test_alias.py holds
these equal to what it finds: a module or name kafkawire gains must be struck off here)."""

# confluent-kafka's modules with no kafkawire counterpart, so `import confluent_kafka.<module>` fails
# under the alias as on any missing module.
UNIMPORTABLE = frozenset(
    {
        # confluent-kafka's AIOProducer's batching machinery, private modules of a design kafkawire's
        # AIOProducer does not have (it queues each record at once, README "differs on purpose"):
        # nothing outside that producer calls them
        *(".aio.producer._buffer_timeout_manager", ".aio.producer._kafka_batch_executor"),
        *(".aio.producer._message_batch", ".aio.producer._producer_batch_processor"),
        *(".schema_registry.common._httpx_compat",),
        # Confluent's Variant protobuf type (the Spark/Parquet Variant binary codec)
        *(".schema_registry.confluent.type.variant_pb2", ".schema_registry.confluent.type.variant_utils"),
        # CEL helpers kafkawire's rules do not have as modules
        *(".schema_registry.rules.cel.cel_field_presence", ".schema_registry.rules.cel.constraints"),
        *(".schema_registry.rules.cel.decimal_funcs", ".schema_registry.rules.cel.protobuf_result_writer"),
        *(".schema_registry.rules.cel.string_format", ".schema_registry.rules.cel.timestamp_funcs"),
        *(".schema_registry.rules.cel.variant_funcs", ".schema_registry.rules.cel.variant_path"),
        # the cloud KMS SDKs' wrappers (kafkawire's drivers hold their own)
        *(
            ".schema_registry.rules.encryption.azurekms.azure_aead",
            ".schema_registry.rules.encryption.gcpkms.gcp_client",
        ),
    }
)

# Per module (its name after "confluent_kafka"), the names confluent-kafka's gives that kafkawire's
# counterpart does not.
KNOWN_MISSING: dict[str, str] = {
    # the batching machinery's classes, which confluent-kafka's _AIOProducer imports (see UNIMPORTABLE)
    ".aio.producer._AIOProducer": ("BufferTimeoutManager ProducerBatchExecutor ProducerBatchManager"),
    # the identity confluent-kafka's C extension's reentrancy gate reads (cimpl._reentry_identity_var)
    # in its AIOConsumer's calls; kafkawire's consumer has no such gate for it to set
    ".aio._common": ("ReentryContext"),
    ".schema_registry._async.avro": (
        "AVRO_TYPE AsyncAvroDeserializerBuilder AsyncAvroSerializerBuilder AsyncSchemaRegistryClient "
        "DeserializerBuilder MessageField ParsedSchemaCache RuleMode RulePhase RuleRegistry Schema SchemaId "
        "SerializationContext SerializationError SerializerBuilder ValidationRulesExecution "
        "_resolve_named_schema async_build_serde asyncinit clear_original_key dual_schema_id_deserializer "
        "get_inline_tags parse_schema_with_repo prefix_schema_id_serializer set_original_key transform "
        "validate_message"
    ),
    ".schema_registry._async.json_schema": (
        "AsyncJSONDeserializerBuilder AsyncJSONSerializerBuilder AsyncSchemaRegistryClient "
        "DeserializerBuilder JSON_TYPE MessageField ParsedSchemaCache RuleMode RulePhase RuleRegistry Schema "
        "SchemaId SerializationContext SerializationError SerializerBuilder ValidationRulesExecution "
        "_resolve_named_schema async_build_serde asyncinit clear_original_key dual_schema_id_deserializer "
        "prefix_schema_id_serializer set_original_key transform validate_message"
    ),
    ".schema_registry._async.mock_schema_registry_client": (
        "Association AssociationCreateOrUpdateRequest AssociationInfo AssociationResponse RegisteredSchema "
        "Schema SchemaRegistryError ServerConfig"
    ),
    ".schema_registry._async.protobuf": (
        "AsyncProtobufDeserializerBuilder AsyncProtobufSerializerBuilder AsyncSchemaRegistryClient "
        "DeserializerBuilder MessageField PROTOBUF_TYPE ParsedSchemaCache RuleMode RulePhase RuleRegistry "
        "Schema SchemaId SchemaReference SerializationContext SerializationError SerializerBuilder "
        "ValidationRulesExecution _resolve_named_schema async_build_serde asyncinit clear_original_key "
        "dual_schema_id_deserializer prefix_schema_id_serializer reference_subject_name_strategy "
        "set_original_key transform validate_message"
    ),
    ".schema_registry._async.schema_registry_client": (
        "Association AssociationCreateOrUpdateRequest AssociationResponse OAuthTokenError RegisteredSchema "
        "Schema SchemaRegistryError SchemaVersion ServerConfig _AsyncBaseRestClient _AsyncCustomOAuthClient "
        "_AsyncOAuthClient _AsyncRestClient _urlencode full_jitter is_retriable is_success version"
    ),
    ".schema_registry._async.serde": (
        "AsyncAssociatedNameStrategy DEFAULT_CACHE_CAPACITY DLQ_RULE_NAME_HEADER ErrorAction FALLBACK_TYPE "
        "KAFKA_CLUSTER_ID MessageField Migration NAMESPACE_WILDCARD NoneAction RegisteredSchema Rule "
        "RuleAction RuleConditionError RuleContext RuleError RuleKind RuleMode RulePhase RuleSet "
        "STRATEGY_TYPE_MAP Schema SchemaId SchemaRegistryError SerializationError SubjectNameStrategyType "
        "ValidationRuleError ValidationRuleExecutor ValidationRulesExecution async_build_serde "
        "default_validation_rule_executor get_original_key topic_subject_name_strategy"
    ),
    ".schema_registry._sync.avro": (
        "AVRO_TYPE AvroDeserializerBuilder AvroSerializerBuilder DeserializerBuilder ParsedSchemaCache "
        "RuleRegistry SchemaId SerializerBuilder ValidationRulesExecution _resolve_named_schema build_serde "
        "clear_original_key get_inline_tags parse_schema_with_repo set_original_key transform "
        "validate_message"
    ),
    ".schema_registry._sync.json_schema": (
        "DeserializerBuilder JSONDeserializerBuilder JSONSerializerBuilder JSON_TYPE MessageField "
        "ParsedSchemaCache RuleRegistry SchemaId SerializerBuilder ValidationRulesExecution "
        "_resolve_named_schema build_serde clear_original_key dual_schema_id_deserializer "
        "prefix_schema_id_serializer set_original_key transform validate_message"
    ),
    ".schema_registry._sync.mock_schema_registry_client": ("AssociationInfo"),
    ".schema_registry._sync.protobuf": (
        "DeserializerBuilder MessageField PROTOBUF_TYPE ParsedSchemaCache ProtobufDeserializerBuilder "
        "ProtobufSerializerBuilder RuleRegistry SerializerBuilder ValidationRulesExecution "
        "_resolve_named_schema build_serde clear_original_key dual_schema_id_deserializer "
        "prefix_schema_id_serializer set_original_key transform validate_message"
    ),
    ".schema_registry._sync.schema_registry_client": (
        "OAuthTokenError SchemaRegistryError _BaseRestClient _CustomOAuthClient _OAuthClient _urlencode version"
    ),
    ".schema_registry._sync.serde": (
        "BaseSerde DEFAULT_CACHE_CAPACITY DLQ_RULE_NAME_HEADER ErrorAction Migration "
        "NAMESPACE_WILDCARD NoneAction Rule RuleAction RuleConditionError RuleContext RuleError RuleKind "
        "RuleMode RulePhase RuleSet STRATEGY_TYPE_MAP SubjectNameStrategyType ValidationRuleError "
        "ValidationRuleExecutor ValidationRulesExecution build_serde default_validation_rule_executor "
        "get_original_key topic_subject_name_strategy"
    ),
    ".schema_registry.avro": (
        "AsyncAvroDeserializerBuilder AsyncAvroSerializerBuilder AvroDeserializerBuilder "
        "AvroSerializerBuilder LocalSchemaRepository get_inline_tags get_type parse_schema_with_repo "
        "transform validate_message"
    ),
    ".schema_registry.common": ("asyncinit"),
    ".schema_registry.common._oauthbearer": (
        "_AbstractCustomOAuthBearerFieldProviderBuilder _AbstractOAuthBearerFieldProviderBuilder "
        "_AbstractOAuthBearerOIDCAzureIMDSFieldProviderBuilder _AbstractOAuthBearerOIDCFieldProviderBuilder "
        "_AsyncBearerFieldProvider _BearerFieldProvider _StaticFieldProvider "
        "_StaticOAuthBearerFieldProviderBuilder"
    ),
    ".schema_registry.common.avro": (
        "AVRO_TYPE AvroMessage AvroSchema FieldType LocalSchemaRepository RuleConditionError RuleContext "
        "RuleKind Schema VALIDATION_RULES_PROP ValidationRule ValidationRuleError ValidationRuleExecutor "
        "Variant _collapse_schema _disjoint _get_inline_tags_recursively _implied_namespace _resolve_union "
        "_schema_loads _transform_field evaluate_validation_rule get_inline_tags get_type "
        "parse_schema_with_repo parse_validation_rules transform validate_message"
    ),
    ".schema_registry.common.json_schema": (
        "DEFAULT_SPEC FieldType JSON_TYPE JsonMessage JsonSchema RuleConditionError RuleContext RuleKind "
        "VALIDATION_RULES_PROP ValidationRule ValidationRuleError ValidationRuleExecutor _disjoint "
        "_retrieve_via_httpx _transform_field _validate_subschemas evaluate_validation_rule get_inline_tags "
        "get_type parse_validation_rules transform validate_message"
    ),
    ".schema_registry.common.protobuf": (
        "DECIMAL_TYPE_NAME FieldType MAX_EMAX MAX_ENCODABLE_COEFFICIENT_DIGITS MAX_PREC MIN_EMIN "
        "PROTOBUF_MAJOR_VERSION PROTOBUF_TYPE ROUND_HALF_UP RuleConditionError RuleContext RuleError RuleKind "
        "SerializationError TIMESTAMP_TYPE_NAME ValidationRule ValidationRuleError ValidationRuleExecutor "
        "Variant _bytes _disjoint _init_pool _is_builtin _is_repeated _proto_to_str _set_field _str_to_proto "
        "_transform_field evaluate_validation_rule get_inline_tags get_type is_cel_leaf_message "
        "is_map_field protobuf_to_variant rebuild_value_type set_decimal_message "
        "set_timestamp_message transform unscaled_to_bytes validate_message variant_pb2 variant_to_protobuf"
    ),
    ".schema_registry.common.schema_registry_client": ("_AsyncStaticFieldProvider _SchemaCache _StaticFieldProvider"),
    ".schema_registry.common.serde": (
        "ErrorAction FieldContext FieldRuleExecutor FieldTransform FieldTransformer FieldType Migration "
        "NoneAction ParsedSchemaCache RegisteredSchema Rule RuleAction RuleBase RuleContext RuleExecutor "
        "RuleKind RuleMode STRATEGY_TYPE_MAP Schema VALIDATION_RULES_PROP ValidationRule ValidationRuleError "
        "ValidationRuleExecutor ValidationRulesExecution default_validation_rule_executor "
        "evaluate_validation_rule parse_validation_rules wildcard_match"
    ),
    ".schema_registry.confluent.type": ("variant_pb2 variant_utils"),
    ".schema_registry.error": ("OAuthTokenError"),
    ".schema_registry.json_schema": (
        "AsyncJSONDeserializerBuilder AsyncJSONSerializerBuilder JSONDeserializerBuilder "
        "JSONSerializerBuilder get_inline_tags get_type transform validate_message"
    ),
    ".schema_registry.protobuf": (
        "AsyncProtobufDeserializerBuilder AsyncProtobufSerializerBuilder ProtobufDeserializerBuilder "
        "ProtobufSerializerBuilder get_inline_tags get_type is_map_field protobuf_to_variant transform "
        "validate_message variant_to_protobuf"
    ),
    ".schema_registry.rules.cel.cel_executor": (
        "DAYS_SHIFT EXTRA_FUNCS FieldContext InterpretedRunner Schema field_value_to_cel msg_to_cel "
        "protobuf_result_writer"
    ),
    ".schema_registry.rules.cel.cel_field_executor": ("field_value_to_cel msg_to_cel"),
    ".schema_registry.rules.cel.cel_validator": (
        "CelValidator EXTRA_FUNCS InterpretedRunner RuleError ValidationRule ValidationRuleExecutor "
        "decimal_boundary_value"
    ),
    ".schema_registry.rules.cel.extra_func": ("EXTRA_FUNCS make_extra_funcs string_format"),
    ".schema_registry.rules.encryption.dek_registry.dek_registry_client": ("CreateDekRequest CreateKekRequest"),
    ".schema_registry.rules.encryption.dek_registry.mock_dek_registry_client": ("Dek DekId Kek KekId KekKmsProps"),
    ".schema_registry.rules.encryption.encrypt_executor": (
        "AeadWrapper DekId EncryptionExecutorTransform FieldEncryptionExecutorTransform KekId KmsDriver"
    ),
    ".schema_registry.rules.encryption.kms_driver_registry": ("reset_kms_drivers"),
    ".schema_registry.serde": (
        "AssociatedNameStrategy AsyncAssociatedNameStrategy BaseSerde FALLBACK_TYPE KAFKA_CLUSTER_ID "
        "ParsedSchemaCache STRATEGY_TYPE_MAP VALIDATION_RULES_PROP ValidationRule ValidationRuleError "
        "ValidationRuleExecutor ValidationRulesExecution async_build_serde build_serde "
        "default_validation_rule_executor evaluate_validation_rule parse_validation_rules"
    ),
}
