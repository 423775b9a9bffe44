"""Confluent's own .proto files, as the modules protoc would generate for them (see meta_pb2)."""
