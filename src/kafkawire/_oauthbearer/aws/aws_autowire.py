"""From the configuration's strings to the ``oauth_cb`` a client calls for AWS IAM tokens: what
the client does when ``sasl.oauthbearer.metadata.authentication.type=aws_iam`` is set and no
``oauth_cb`` is given (security/settings.py)."""

from __future__ import annotations

from collections.abc import Callable

from . import sasl_extensions_parser
from .aws_iam_marker import AWS_IAM_MARKER_KEY, AWS_IAM_MARKER_VALUE
from .aws_oauthbearer_config import CONFIG_KEY, AwsOAuthBearerConfig
from .aws_sts_token_provider import AwsStsTokenProvider

__all__ = ["OAuthBearerCallback", "create_handler"]

OAuthBearerCallback = Callable[[str], tuple[str, float, str, dict[str, str]]]


def create_handler(sasl_oauthbearer_config: str, sasl_oauthbearer_extensions: str | None) -> OAuthBearerCallback:
    """The ``oauth_cb`` for these ``sasl.oauthbearer.config`` and ``sasl.oauthbearer.extensions``
    values. ValueError for a missing or malformed configuration; ImportError for a boto3 too old."""
    if not sasl_oauthbearer_config:
        raise ValueError(
            f"'{AWS_IAM_MARKER_KEY}={AWS_IAM_MARKER_VALUE}' is set but '{CONFIG_KEY}' is missing or empty. "
            f"The AWS IAM autowire path requires region and audience to be supplied via {CONFIG_KEY} "
            '(e.g. "region=us-east-1,audience=https://...").'
        )
    extensions = sasl_extensions_parser.parse(sasl_oauthbearer_extensions)
    return AwsStsTokenProvider(AwsOAuthBearerConfig.parse(sasl_oauthbearer_config, extensions)).token
