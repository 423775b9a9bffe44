"""The token source: AWS STS ``GetWebIdentityToken`` through boto3, whose credential chain (the
environment, shared files, an EC2 instance profile, EKS IRSA, an ECS task role, ...) signs the
request. Imported only when ``aws_iam`` is configured: boto3 is an optional dependency."""

from __future__ import annotations

import logging
from typing import Any

import boto3  # type: ignore[import-untyped]

from . import jwt_extractor
from .aws_oauthbearer_config import AWS_DEBUG_CONSOLE, AwsOAuthBearerConfig

__all__ = ["MINIMUM_BOTO3_VERSION", "AwsStsTokenProvider"]

# The first boto3 whose STS client has GetWebIdentityToken.
MINIMUM_BOTO3_VERSION = "1.42.25"


def _numeric_version(version: str) -> tuple[int, ...]:
    """Each dotted part's leading digits (``"1.42.0rc1"`` -> ``(1, 42, 0)``; none -> 0)."""
    parts = []
    for part in version.split("."):
        digits = len(part) - len(part.lstrip("0123456789"))
        parts.append(int(part[:digits]) if digits else 0)
    return tuple(parts)


def _require_boto3_version() -> None:
    if _numeric_version(boto3.__version__) < _numeric_version(MINIMUM_BOTO3_VERSION):
        raise ImportError(
            f"The AWS IAM OAUTHBEARER path requires boto3>={MINIMUM_BOTO3_VERSION} (for the STS "
            f"GetWebIdentityToken operation), but found boto3 {boto3.__version__}. Upgrade with: "
            "pip install -U 'kafkawire[oauthbearer-aws]'."
        )


class AwsStsTokenProvider:
    """``token()`` asks STS for a new JWT each call (the client calls it again before expiry)."""

    def __init__(self, config: AwsOAuthBearerConfig, sts_client: Any = None) -> None:
        """``sts_client``: an STS client to use instead of boto3's for the configured region and
        endpoint (tests hand one in)."""
        if config is None:
            raise TypeError("config must not be None")
        self._cfg = config
        if config.aws_debug == AWS_DEBUG_CONSOLE:
            # For the whole process, as asked: botocore's requests, credential look-ups and
            # signing on stderr.
            boto3.set_stream_logger("botocore", logging.DEBUG)
        if sts_client is None:
            _require_boto3_version()
            options: dict[str, Any] = {"region_name": config.region}
            if config.sts_endpoint:
                options["endpoint_url"] = config.sts_endpoint
            sts_client = boto3.Session(region_name=config.region).client("sts", **options)
        self._sts = sts_client

    def token(self, oauthbearer_config: str = "") -> tuple[str, float, str, dict[str, str]]:
        """``oauth_cb``'s answer: the JWT, its expiry (seconds since the epoch), its ``sub`` as the
        principal, and the SASL extensions. ``oauthbearer_config`` (what the client passes each
        call) is not read again: the configuration was parsed once. STS's refusal is raised as
        botocore raises it; ValueError for an answer without a token or an expiry."""
        request: dict[str, Any] = {
            "Audience": [self._cfg.audience],
            "SigningAlgorithm": self._cfg.signing_algorithm,
            "DurationSeconds": self._cfg.duration_seconds,
        }
        if self._cfg.tags:
            request["Tags"] = [{"Key": k, "Value": v} for k, v in self._cfg.tags.items()]
        answer = self._sts.get_web_identity_token(**request)
        jwt = answer.get("WebIdentityToken")
        if not isinstance(jwt, str) or not jwt:
            raise ValueError("STS response missing WebIdentityToken; cannot mint OAUTHBEARER token.")
        expiration = answer.get("Expiration")
        if expiration is None:
            raise ValueError("STS response missing Expiration; cannot compute token lifetime.")
        # boto3 gives a timezone-aware datetime.
        return jwt, expiration.timestamp(), jwt_extractor.extract_sub(jwt), dict(self._cfg.sasl_extensions or {})
