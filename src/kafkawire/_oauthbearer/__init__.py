"""OAUTHBEARER token providers a configuration selects, at confluent-kafka's module path (``aws``:
AWS IAM through STS, chosen by ``sasl.oauthbearer.metadata.authentication.type=aws_iam``)."""
