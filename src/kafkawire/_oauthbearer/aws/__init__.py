"""AWS IAM for OAUTHBEARER (what AWS MSK and Confluent Cloud on AWS users configure): the client
asks AWS STS ``GetWebIdentityToken`` (through boto3 and its credential chain) for a signed JWT and
hands it to the broker, renewed before it expires. Chosen by configuration alone::

    sasl.oauthbearer.method=oidc
    sasl.oauthbearer.metadata.authentication.type=aws_iam
    sasl.oauthbearer.config=region=us-east-1,audience=https://...   (see aws_oauthbearer_config)
    sasl.oauthbearer.extensions=logicalCluster=lkc-1,...            (optional)

`aws_autowire.create_handler` turns those strings into the ``oauth_cb`` the client calls. Needs
boto3 (``pip install 'kafkawire[oauthbearer-aws]'``); nothing here is imported otherwise.
"""
