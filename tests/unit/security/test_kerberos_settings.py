"""GSSAPI's settings without a KDC: keytab names read from MIT's file format, Java's Krb5LoginModule
options, checks made while the client is built, client.dns.lookup's canonical bootstrap names.
(tests/broker/security/test_kerberos.py runs the mechanism against an MIT KDC and Kafka 2.3.)"""

from __future__ import annotations

import socket
import struct
from pathlib import Path
from typing import Any

import pytest

import kafkawire
from kafkawire import KafkaError, KafkaException
from kafkawire.base.config import CONNECTION_OPTIONS, parse_config
from kafkawire.io import resolve
from kafkawire.security.kerberos import keytab_principals
from kafkawire.security.settings import SecuritySettings


def _entry(realm: str, *components: str, key: bytes = b"K" * 32) -> bytes:
    def counted(text: str | bytes) -> bytes:
        raw = text.encode() if isinstance(text, str) else text
        return struct.pack(">H", len(raw)) + raw

    body = struct.pack(">H", len(components)) + counted(realm) + b"".join(counted(c) for c in components)
    body += struct.pack(">IIB", 1, 1_700_000_000, 2) + struct.pack(">H", 18) + counted(key) + struct.pack(">I", 2)
    return struct.pack(">i", len(body)) + body


def test_keytab_names_are_read_holes_skipped_keys_never(tmp_path: Path) -> None:
    keytab = tmp_path / "k.keytab"
    hole = struct.pack(">i", -7) + b"\0" * 7
    keytab.write_bytes(b"\x05\x02" + _entry("R.TEST", "alice") + hole + _entry("R.TEST", "kafka", "broker1.r.test"))
    assert keytab_principals(str(keytab)) == {"alice@R.TEST", "kafka/broker1.r.test@R.TEST"}
    keytab.write_bytes(b"\x05\x01" + _entry("R.TEST", "alice"))  # version 1: not checked
    assert keytab_principals(str(keytab)) is None
    keytab.write_bytes(b"\x05\x02" + _entry("R.TEST", "alice")[:-20])  # cut short
    assert keytab_principals(str(keytab)) is None


def _settings(**conf: Any) -> SecuritySettings:
    return SecuritySettings(parse_config(conf, CONNECTION_OPTIONS))


def test_construction_checks_what_needs_no_kdc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("gssapi", reason="kafkawire[gssapi] is not installed")
    monkeypatch.setenv("KRB5CCNAME", f"FILE:{tmp_path / 'none'}")
    krb5 = tmp_path / "krb5.conf"
    krb5.write_text("[libdefaults]\n default_realm = R.TEST\n")
    monkeypatch.setenv("KRB5_CONFIG", str(krb5))
    base = {"security.protocol": "sasl_plaintext", "sasl.mechanism": "GSSAPI"}
    with pytest.raises(KafkaException) as exc:
        _settings(**base, **{"sasl.kerberos.keytab": str(tmp_path / "missing.keytab")})
    assert exc.value.args[0].code() == KafkaError._INVALID_ARG and "sasl.kerberos.keytab" in exc.value.args[0].str()
    keytab = tmp_path / "k.keytab"
    keytab.write_bytes(b"\x05\x02" + _entry("R.TEST", "alice"))
    with pytest.raises(KafkaException) as exc:
        _settings(**base, **{"sasl.kerberos.keytab": str(keytab)})  # the default principal, kafkaclient
    assert "holds no key for sasl.kerberos.principal kafkaclient@R.TEST (it holds: alice@R.TEST)" in str(exc.value)
    assert _settings(**base, **{"sasl.kerberos.keytab": str(keytab), "sasl.kerberos.principal": "alice"}).uses_sasl
    # The same through Java's Krb5LoginModule (Spark's kafka.sasl.jaas.config)
    jaas = f'com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true keyTab="{keytab}" principal="bob";'
    with pytest.raises(KafkaException) as exc:
        _settings(**base, **{"sasl.jaas.config": jaas})
    assert "bob@R.TEST" in str(exc.value)
    # No keytab and no ticket cache: named now, with what to set.
    with pytest.raises(KafkaException) as exc:
        _settings(**base)
    err = exc.value.args[0]
    assert err.code() == KafkaError._AUTHENTICATION and "kinit" in err.str() and "sasl.kerberos.keytab" in err.str()


def test_a_kinit_command_is_hidden_like_a_password() -> None:
    conf = parse_config({"sasl.kerberos.kinit.cmd": "echo pw-SECRET | kinit carol"}, CONNECTION_OPTIONS)
    assert "pw-SECRET" not in repr(conf) and "pw-SECRET" not in str(conf)


def test_canonical_bootstrap_names(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each address of a bootstrap name becomes its reverse-resolved name (the address itself when
    it has none), in order, once each; a name that does not resolve stays."""
    addresses = {
        "kafka.example": [
            (socket.AF_INET, ("10.0.0.1", 9092)),
            (socket.AF_INET, ("10.0.0.2", 9092)),
            (socket.AF_INET, ("10.0.0.3", 9092)),
            (socket.AF_INET, ("10.0.0.4", 9092)),
        ],
    }
    names = {"10.0.0.1": "b1.dc.example", "10.0.0.2": "b2.dc.example", "10.0.0.4": "b1.dc.example"}

    def lookup(host: str, port: int, family: int = 0) -> tuple[Any, str | None]:
        return (addresses[host], None) if host in addresses else (None, "no such name")

    def getnameinfo(address: tuple[str, int], flags: int) -> tuple[str, str]:
        assert flags & socket.NI_NAMEREQD
        if address[0] not in names:
            raise socket.gaierror("no name")
        return names[address[0]], str(address[1])

    monkeypatch.setattr(resolve, "lookup", lookup)
    monkeypatch.setattr(resolve.socket, "getnameinfo", getnameinfo)
    assert resolve.canonical_names("kafka.example", 9092) == ["b1.dc.example", "b2.dc.example", "10.0.0.3"]
    assert resolve.canonical_names("nowhere.example", 9092) == ["nowhere.example"]


def test_client_dns_lookup_values_librdkafka_knows_are_taken() -> None:
    for value in ("use_all_dns_ips", "resolve_canonical_bootstrap_servers_only"):
        kafkawire.Producer({"bootstrap.servers": "127.0.0.1:1", "client.dns.lookup": value}).close()


def test_every_client_without_the_extra_names_it(monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    from kafkawire.admin import AdminClient

    monkeypatch.setitem(sys.modules, "gssapi", None)  # import gssapi raises ImportError
    conf = {"bootstrap.servers": "127.0.0.1:1", "security.protocol": "SASL_SSL", "sasl.mechanism": "GSSAPI"}
    makers = {
        "Producer": lambda: kafkawire.Producer(conf),
        "Consumer": lambda: kafkawire.Consumer({**conf, "group.id": "g"}),
        "AdminClient": lambda: AdminClient(conf),
        "ShareConsumer": lambda: kafkawire.ShareConsumer({**conf, "group.id": "g"}),
    }
    for name, make in makers.items():
        with pytest.raises((KafkaException, ValueError)) as exc:  # (ShareConsumer: ValueError, as confluent-kafka's)
            make()
        assert "pip install 'kafkawire[gssapi]'" in str(exc.value), name
