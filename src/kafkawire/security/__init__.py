"""Who a connection is and how it proves it: TLS settings and context, SASL options,
OAuth/OIDC token sources, the JWT assertion, token renewal. Below io/, which uses it."""
