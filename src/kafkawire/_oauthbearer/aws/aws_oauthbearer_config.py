"""``sasl.oauthbearer.config`` for AWS IAM, parsed and checked while the client is made.

Comma-separated ``key=value`` pairs split as librdkafka splits them (``\\,`` for a comma inside a
value; a value may hold ``=``; the last of a repeated key wins):

    region=<AWS region>                  required
    audience=<the token's audience>      required
    duration_seconds=<60..3600>          300
    signing_algorithm=ES384|RS256        ES384
    sts_endpoint=<url>                   boto3's (a FIPS or PrivateLink endpoint)
    aws_debug=none|console               none (console: botocore's debug log on stderr)
    tag_<name>=<value>                   custom claims of the token, at most 50

Any other key is refused, SASL extensions included (they have ``sasl.oauthbearer.extensions``).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..._util.librdkafka_string_parser import parse_key_values

__all__ = [
    "ALLOWED_AWS_DEBUG_VALUES",
    "ALLOWED_SIGNING_ALGORITHMS",
    "AWS_DEBUG_CONSOLE",
    "AWS_DEBUG_NONE",
    "CONFIG_KEY",
    "DEFAULT_DURATION_SECONDS",
    "DEFAULT_SIGNING_ALGORITHM",
    "MAX_DURATION_SECONDS",
    "MAX_TAGS",
    "MIN_DURATION_SECONDS",
    "TAG_KEY_PREFIX",
    "AwsOAuthBearerConfig",
]

CONFIG_KEY: str = "sasl.oauthbearer.config"
DEFAULT_SIGNING_ALGORITHM: str = "ES384"
ALLOWED_SIGNING_ALGORITHMS = ("ES384", "RS256")  # what GetWebIdentityToken signs with
# The token lifetimes STS grants, in seconds.
MIN_DURATION_SECONDS: int = 60
MAX_DURATION_SECONDS: int = 3600
DEFAULT_DURATION_SECONDS: int = 300
TAG_KEY_PREFIX: str = "tag_"
MAX_TAGS: int = 50  # STS's limit per request
AWS_DEBUG_NONE: str = "none"
AWS_DEBUG_CONSOLE: str = "console"
ALLOWED_AWS_DEBUG_VALUES = (AWS_DEBUG_NONE, AWS_DEBUG_CONSOLE)

_NOT_EMPTY = frozenset({"region", "audience", "signing_algorithm", "sts_endpoint", "aws_debug"})


@dataclass(frozen=True)
class AwsOAuthBearerConfig:
    """What the token provider asks STS for; checked when made (ValueError naming the key)."""

    region: str
    audience: str
    signing_algorithm: str = DEFAULT_SIGNING_ALGORITHM
    duration_seconds: int = DEFAULT_DURATION_SECONDS
    sts_endpoint: str | None = None
    aws_debug: str = AWS_DEBUG_NONE
    tags: dict[str, str] | None = None
    sasl_extensions: dict[str, str] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.region, str) or self.region == "":
            raise ValueError(f"{CONFIG_KEY} 'region' must not be empty.")
        if not isinstance(self.audience, str) or self.audience == "":
            raise ValueError(f"{CONFIG_KEY} 'audience' must not be empty.")
        if self.signing_algorithm not in ALLOWED_SIGNING_ALGORITHMS:
            raise ValueError(
                f"{CONFIG_KEY} 'signing_algorithm' must be 'ES384' or 'RS256'; got {self.signing_algorithm!r}."
            )
        # A bool is an int to Python, not to STS.
        if not isinstance(self.duration_seconds, int) or isinstance(self.duration_seconds, bool):
            raise ValueError(f"{CONFIG_KEY} 'duration_seconds' must be an integer.")
        if not MIN_DURATION_SECONDS <= self.duration_seconds <= MAX_DURATION_SECONDS:
            raise ValueError(
                f"{CONFIG_KEY} 'duration_seconds' must be between {MIN_DURATION_SECONDS} and "
                f"{MAX_DURATION_SECONDS} inclusive; got {self.duration_seconds}."
            )
        if self.sts_endpoint == "":
            raise ValueError(f"{CONFIG_KEY} 'sts_endpoint' must not be empty.")
        if self.aws_debug not in ALLOWED_AWS_DEBUG_VALUES:
            raise ValueError(f"{CONFIG_KEY} 'aws_debug' must be one of: none, console. Got {self.aws_debug!r}.")
        if self.tags is not None:
            if not isinstance(self.tags, dict):
                raise ValueError(f"{CONFIG_KEY} 'tags' must be a dict.")
            if len(self.tags) > MAX_TAGS:
                raise ValueError(f"{CONFIG_KEY} has {len(self.tags)} tags; AWS allows at most {MAX_TAGS}.")
        if self.sasl_extensions is not None and not isinstance(self.sasl_extensions, dict):
            raise ValueError("sasl_extensions, if set, must be a dict.")

    @classmethod
    def parse(cls, raw: str, sasl_extensions: dict[str, str] | None = None) -> AwsOAuthBearerConfig:
        """The configuration ``raw`` (``sasl.oauthbearer.config``) says, with the extensions parsed
        from ``sasl.oauthbearer.extensions``. TypeError for None; ValueError for anything wrong."""
        if raw is None:
            raise TypeError("raw must not be None")
        fields: dict[str, object] = {}
        tags: dict[str, str] | None = None
        for key, value in parse_key_values(raw, ",", CONFIG_KEY):
            if key in _NOT_EMPTY and value == "":
                raise ValueError(f"{CONFIG_KEY} {key!r} must not be empty.")
            if key == "duration_seconds":
                try:
                    fields[key] = int(value)
                except ValueError as exc:
                    raise ValueError(f"{CONFIG_KEY} 'duration_seconds' must be an integer; got {value!r}.") from exc
            elif key == "aws_debug":
                fields[key] = value.lower()
            elif key in ("region", "audience", "signing_algorithm", "sts_endpoint"):
                fields[key] = value
            elif key.startswith(TAG_KEY_PREFIX):
                name = key[len(TAG_KEY_PREFIX) :]
                if name == "":
                    raise ValueError(f"{CONFIG_KEY} tag key {key!r} has empty name.")
                tags = {} if tags is None else tags
                tags[name] = value
            else:
                raise ValueError(f"Unknown key {key!r} in {CONFIG_KEY}.")
        for required in ("region", "audience"):
            if required not in fields:
                raise ValueError(f"{required!r} is required in {CONFIG_KEY}.")
        return cls(**fields, tags=tags, sasl_extensions=sasl_extensions)  # type: ignore[arg-type]
