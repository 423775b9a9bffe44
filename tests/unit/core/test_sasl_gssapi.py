"""The GSSAPI conversation's framing and RFC 4752's security-layer step, without a KDC: the GSS-API
calls are a scripted context (kafkawire/security/kerberos.py makes the real ones; tests/broker/security/test_kerberos.py
runs them against an MIT KDC and Kafka 2.3)."""

from __future__ import annotations

import pytest

from kafkawire.core.sasl import NO_SECURITY_LAYER, GssapiClient, SaslError
from kafkawire.security.kerberos import HINTS, KRB_AP_ERR_SKEW, explain, render_command


class ScriptedContext:
    """Answers init_sec_context steps from a script: (server token expected, client token, complete after)."""

    def __init__(self, script: list[tuple[bytes | None, bytes | None, bool]]) -> None:
        self.script = list(script)
        self.complete = False
        self.wrapped: list[bytes] = []

    def step(self, token: bytes | None) -> bytes | None:
        expected, out, complete = self.script.pop(0)
        assert token == expected
        self.complete = complete
        return out

    def unwrap(self, message: bytes) -> bytes:
        assert message.startswith(b"W(") and message.endswith(b")")
        return message[2:-1]

    def wrap(self, payload: bytes) -> bytes:
        self.wrapped.append(payload)
        return b"W(" + payload + b")"


def kerberos_context() -> ScriptedContext:
    """Kerberos with mutual authentication: AP-REQ out, AP-REP in, complete with nothing to send."""
    return ScriptedContext([(None, b"AP-REQ", False), (b"AP-REP", None, True)])


def test_the_exchange_kafka_brokers_speak() -> None:
    context = kerberos_context()
    client = GssapiClient(context)
    assert client.start() == b"AP-REQ"
    assert client.receive(b"AP-REP") == b""  # the context is done here: an empty token asks for the offer
    # The broker offers "no security layer" with a 64 KiB maximum; we take no layer, size 0, no authzid.
    answer = client.receive(b"W(" + bytes([NO_SECURITY_LAYER | 0x02 | 0x04, 0x01, 0x00, 0x00]) + b")")
    assert answer == b"W(\x01\x00\x00\x00)" and not client.done
    assert client.receive(b"") is None and client.done


def test_the_authorization_id_follows_the_layer_octets() -> None:
    context = kerberos_context()
    client = GssapiClient(context, authzid="alice")
    client.start()
    client.receive(b"AP-REP")
    client.receive(b"W(\x01\xff\xff\xff)")
    assert context.wrapped == [b"\x01\x00\x00\x00alice"]


def test_a_first_token_made_beforehand_is_sent_without_a_step() -> None:
    context = ScriptedContext([(b"AP-REP", None, True)])
    client = GssapiClient(context, first=b"made-on-a-worker")
    assert client.start() == b"made-on-a-worker"
    assert client.receive(b"AP-REP") == b""


def test_a_context_of_several_legs_goes_on_until_complete() -> None:
    context = ScriptedContext([(None, b"t1", False), (b"s1", b"t2", False), (b"s2", b"t3", True)])
    client = GssapiClient(context)
    assert client.start() == b"t1"
    assert client.receive(b"s1") == b"t2"
    assert client.receive(b"s2") == b"t3"  # complete with a last token: it goes, the offer follows
    assert client.receive(b"W(\x01\x00\x10\x00)") == b"W(\x01\x00\x00\x00)"
    assert client.receive(b"") is None and client.done


def test_a_context_complete_at_once_takes_the_offer_next() -> None:
    context = ScriptedContext([(None, b"only", True)])
    client = GssapiClient(context)
    assert client.start() == b"only"
    assert client.receive(b"W(\x01\x00\x00\x00)") == b"W(\x01\x00\x00\x00)"


@pytest.mark.parametrize(
    ("offer", "why"),
    [
        (b"\x02\x00\x10\x00", "requires a security layer"),  # integrity only
        (b"\x04\x00\x10\x00", "requires a security layer"),  # privacy only
        (b"\x01\x00\x10", "3 bytes, not 4"),
        (b"\x01\x00\x10\x00\x00", "5 bytes, not 4"),
    ],
)
def test_an_offer_kafka_never_makes_fails_the_conversation(offer: bytes, why: str) -> None:
    client = GssapiClient(kerberos_context())
    client.start()
    client.receive(b"AP-REP")
    with pytest.raises(SaslError, match=why):
        client.receive(b"W(" + offer + b")")


def test_a_failing_gss_call_is_the_conversations_error() -> None:
    class Refusing(ScriptedContext):
        def step(self, token: bytes | None) -> bytes | None:
            raise SaslError("the KDC does not know the client principal")

    client = GssapiClient(Refusing([]))
    with pytest.raises(SaslError, match="client principal"):
        client.start()


def test_kerberos_errors_name_what_to_check() -> None:
    class GSSError(Exception):
        min_code = KRB_AP_ERR_SKEW + (1 << 32)  # gssapi reports minor codes unsigned

        def gen_message(self) -> str:
            return "Major (851968): Unspecified GSS failure.,\n Minor (2529638949): Clock skew too great"

    text = explain(GSSError())
    assert text.startswith(HINTS[KRB_AP_ERR_SKEW]) and "Clock skew too great" in text and "\n" not in text
    assert explain(ValueError("plain words")) == "plain words"


def test_kinit_command_placeholders_as_librdkafka_renders_them() -> None:
    conf = {"sasl.kerberos.keytab": "/etc/k.keytab", "sasl.kerberos.principal": "svc/host@R", "client.id": "c1"}
    command = 'kinit -t "%{sasl.kerberos.keytab}" -k %{sasl.kerberos.principal} # %{client.id} %{unknown.key}'
    assert render_command(command, conf) == 'kinit -t "/etc/k.keytab" -k svc/host@R # c1 '
