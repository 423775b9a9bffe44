"""The AWS KMS driver (``aws-kms://arn:aws:kms:REGION:ACCOUNT:key/ID``).

Credentials, from the rule configuration (the KEK's KMS properties over it): ``access.key.id``
with ``secret.access.key``, else ``profile``, else boto3's default chain. ``role.arn`` (or
AWS_ROLE_ARN) then assumes a role, named ``role.session.name`` (AWS_ROLE_SESSION_NAME) with
``role.external.id`` (AWS_ROLE_EXTERNAL_ID), refreshed as it expires; with a web identity token
file (AWS_WEB_IDENTITY_TOKEN_FILE) the default chain assumes it instead. boto3 is imported only
when a client is made: ``pip install kafkawire[kms-aws]``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

from ....common.serde import RuleError
from ..kms_driver_registry import KmsClient, KmsDriver, conf_or_env, import_sdk, register_kms_driver

__all__ = ["AwsKmsDriver", "AwsSettings", "aws_settings"]

PREFIX = "aws-kms://"
EXTRA = "kms-aws"
ACCESS_KEY_ID = "access.key.id"
SECRET_ACCESS_KEY = "secret.access.key"
PROFILE = "profile"
ROLE_ARN = "role.arn"
ROLE_SESSION_NAME = "role.session.name"
ROLE_EXTERNAL_ID = "role.external.id"
DEFAULT_SESSION_NAME = "confluent-encrypt"


@dataclass(frozen=True)
class AwsSettings:
    """What a client of one key is made from."""

    key_url: str
    region: str
    access_key_id: str | None
    secret_access_key: str | None = field(repr=False)
    profile: str | None
    role_arn: str | None
    role_session_name: str
    role_external_id: str | None
    web_identity: bool


def aws_settings(conf: dict[str, Any], key_url: str | None) -> AwsSettings:
    """The driver's settings for ``key_url``; a malformed ARN or half a key pair is refused."""
    if key_url is None or not key_url.startswith(PREFIX):
        raise RuleError(f"an AWS KMS key URL starts with {PREFIX}")
    arn = key_url[len(PREFIX) :]
    parts = arn.split(":")
    if len(parts) < 6 or parts[0] != "arn" or not parts[3]:
        raise RuleError(f"{arn!r} is not an AWS KMS key ARN (arn:aws:kms:REGION:ACCOUNT:key/ID)")
    key_id = conf_or_env(conf, ACCESS_KEY_ID)
    secret = conf_or_env(conf, SECRET_ACCESS_KEY)
    if (key_id is None) != (secret is None):
        raise RuleError(f"aws-kms: {ACCESS_KEY_ID} and {SECRET_ACCESS_KEY} are set together or not at all")
    return AwsSettings(
        key_url=key_url,
        region=parts[3],
        access_key_id=key_id,
        secret_access_key=secret,
        profile=conf_or_env(conf, PROFILE),
        role_arn=conf_or_env(conf, ROLE_ARN, "AWS_ROLE_ARN"),
        role_session_name=conf_or_env(conf, ROLE_SESSION_NAME, "AWS_ROLE_SESSION_NAME") or DEFAULT_SESSION_NAME,
        role_external_id=conf_or_env(conf, ROLE_EXTERNAL_ID, "AWS_ROLE_EXTERNAL_ID"),
        web_identity=bool(os.environ.get("AWS_WEB_IDENTITY_TOKEN_FILE")),
    )


class AwsKmsDriver(KmsDriver):
    def get_key_url_prefix(self) -> str:
        return PREFIX

    def new_kms_client(self, conf: dict[str, Any], key_url: str | None) -> KmsClient:
        settings = aws_settings(conf, key_url)
        boto3 = import_sdk("boto3", EXTRA)
        if settings.access_key_id is not None:
            session = boto3.Session(
                region_name=settings.region,
                aws_access_key_id=settings.access_key_id,
                aws_secret_access_key=settings.secret_access_key,
            )
        elif settings.profile is not None:
            session = boto3.Session(region_name=settings.region, profile_name=settings.profile)
        else:
            session = boto3.Session(region_name=settings.region)
        if settings.role_arn is not None and not settings.web_identity:
            credentials = import_sdk("botocore.credentials", EXTRA)
            params = {"RoleArn": settings.role_arn, "RoleSessionName": settings.role_session_name}
            if settings.role_external_id is not None:
                params["ExternalId"] = settings.role_external_id
            refresher = credentials.create_assume_role_refresher(session.client("sts"), params)
            # boto3 has no public hook for refreshable assumed-role credentials on a session.
            session._session._credentials = credentials.DeferredRefreshableCredentials(
                method="sts-assume-role", refresh_using=refresher
            )
        awskms = import_sdk("tink.integration.awskms", EXTRA)
        client: KmsClient = awskms.new_client(boto3_client=session.client("kms"), key_uri=settings.key_url)
        return client

    @classmethod
    def register(cls) -> AwsKmsDriver:
        driver = cls()
        register_kms_driver(driver)
        return driver
