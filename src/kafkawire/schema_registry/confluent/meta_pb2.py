"""``confluent/meta.proto``: the ``Meta`` options (doc, params, tags, rules) that Schema Registry data
contracts attach to files, messages, fields and enums, e.g. ``[(confluent.field_meta).tags = "PII"]``.

Generated code of a ``.proto`` that imports it imports this module (confluent-kafka's path, renamed),
so the file must be in the default descriptor pool first. It is built here from its descriptor, the
same bytes as confluent-kafka 2.16's copy, so both can be loaded in one process. The serializers never
register it as a reference: the registry knows it (`kafkawire.schema_registry._sync.protobuf`).
"""

from __future__ import annotations

from google.protobuf import descriptor_pb2, message_factory

from .descriptor_files import load

_F = descriptor_pb2.FieldDescriptorProto


# The field number of each of the five extensions (protoc's <NAME>_FIELD_NUMBER constants).
META_FIELD_NUMBER = 1088
FILE_META_FIELD_NUMBER = MESSAGE_META_FIELD_NUMBER = FIELD_META_FIELD_NUMBER = META_FIELD_NUMBER
ENUM_META_FIELD_NUMBER = ENUM_VALUE_META_FIELD_NUMBER = META_FIELD_NUMBER


def _file() -> descriptor_pb2.FileDescriptorProto:
    fdp = descriptor_pb2.FileDescriptorProto(
        name="confluent/meta.proto", package="confluent", dependency=["google/protobuf/descriptor.proto"]
    )
    meta = fdp.message_type.add(name="Meta")
    meta.field.add(name="doc", number=1, label=_F.LABEL_OPTIONAL, type=_F.TYPE_STRING)
    meta.field.add(
        name="params", number=2, label=_F.LABEL_REPEATED, type=_F.TYPE_MESSAGE, type_name=".confluent.Meta.ParamsEntry"
    )
    meta.field.add(name="tags", number=3, label=_F.LABEL_REPEATED, type=_F.TYPE_STRING)
    meta.field.add(name="rules", number=4, label=_F.LABEL_REPEATED, type=_F.TYPE_MESSAGE, type_name=".confluent.Rule")
    entry = meta.nested_type.add(name="ParamsEntry")
    entry.field.add(name="key", number=1, label=_F.LABEL_OPTIONAL, type=_F.TYPE_STRING)
    entry.field.add(name="value", number=2, label=_F.LABEL_OPTIONAL, type=_F.TYPE_STRING)
    entry.options.map_entry = True
    rule = fdp.message_type.add(name="Rule")
    for number, name in enumerate(("name", "doc", "expr", "sql"), start=1):
        rule.field.add(name=name, number=number, label=_F.LABEL_OPTIONAL, type=_F.TYPE_STRING)
    for name, options in (
        ("file_meta", "FileOptions"),
        ("message_meta", "MessageOptions"),
        ("field_meta", "FieldOptions"),
        ("enum_meta", "EnumOptions"),
        ("enum_value_meta", "EnumValueOptions"),
    ):
        fdp.extension.add(
            name=name,
            extendee=f".google.protobuf.{options}",
            number=META_FIELD_NUMBER,
            label=_F.LABEL_OPTIONAL,
            type=_F.TYPE_MESSAGE,
            type_name=".confluent.Meta",
        )
    fdp.options.go_package = "../confluent"
    fdp.syntax = "proto3"
    return fdp


DESCRIPTOR = load("confluent/meta.proto", _file)
Meta = message_factory.GetMessageClass(DESCRIPTOR.message_types_by_name["Meta"])
Rule = message_factory.GetMessageClass(DESCRIPTOR.message_types_by_name["Rule"])
file_meta = DESCRIPTOR.extensions_by_name["file_meta"]
message_meta = DESCRIPTOR.extensions_by_name["message_meta"]
field_meta = DESCRIPTOR.extensions_by_name["field_meta"]
enum_meta = DESCRIPTOR.extensions_by_name["enum_meta"]
enum_value_meta = DESCRIPTOR.extensions_by_name["enum_value_meta"]
