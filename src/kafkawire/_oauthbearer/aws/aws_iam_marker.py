"""The property and value that select the AWS IAM token provider."""

__all__ = ["AWS_IAM_MARKER_KEY", "AWS_IAM_MARKER_VALUE"]

AWS_IAM_MARKER_KEY: str = "sasl.oauthbearer.metadata.authentication.type"
AWS_IAM_MARKER_VALUE: str = "aws_iam"
