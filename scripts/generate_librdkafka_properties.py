"""Writes src/kafkawire/client/librdkafka_properties.py: every configuration property the installed
librdkafka knows, as data (name, client type, kind, range or choices, default, alias target).

The source is librdkafka itself (``rd_kafka_conf_properties_show``, through the library inside the
confluent-kafka wheel), so a new librdkafka version is one run away; the hidden properties it leaves
out follow, their facts (HIDDEN) checked against the library. Only the facts are kept, not
librdkafka's descriptions. tests/unit/client/test_librdkafka_properties.py fails when the table and the
installed library disagree: run ``python scripts/generate_librdkafka_properties.py`` then.
"""

from __future__ import annotations

import ctypes
import glob
import os
import re
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET = ROOT / "src" / "kafkawire" / "client" / "librdkafka_properties.py"

# librdkafka's "*Type: ...*" words -> the kinds of kafkawire's Option table.
KINDS = {
    "integer": "int",
    "float": "float",
    "boolean": "bool",
    "enum value": "enum",
    "string": "str",
    "CSV flags": "list",
    "pattern list": "list",
    "see dedicated API": "api",
}


def load_librdkafka() -> ctypes.CDLL:
    """The librdkafka inside the confluent-kafka wheel, with the prototypes used here declared."""
    import confluent_kafka

    libs = os.path.join(os.path.dirname(confluent_kafka.__file__), os.pardir, "confluent_kafka.libs")
    found = sorted(glob.glob(os.path.join(libs, "librdkafka*.so*")))
    if not found:
        raise RuntimeError(f"no librdkafka in {libs}")
    lib = ctypes.CDLL(found[0])
    lib.rd_kafka_conf_properties_show.argtypes = [ctypes.c_void_p]
    lib.rd_kafka_version_str.restype = ctypes.c_char_p
    lib.rd_kafka_conf_new.restype = ctypes.c_void_p
    lib.rd_kafka_conf_destroy.argtypes = [ctypes.c_void_p]
    lib.rd_kafka_topic_conf_new.restype = ctypes.c_void_p
    lib.rd_kafka_topic_conf_destroy.argtypes = [ctypes.c_void_p]
    setter = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
    lib.rd_kafka_conf_set.argtypes = setter
    lib.rd_kafka_topic_conf_set.argtypes = setter
    lib.rd_kafka_conf_get.argtypes = [
        ctypes.c_void_p,
        ctypes.c_char_p,
        ctypes.c_char_p,
        ctypes.POINTER(ctypes.c_size_t),
    ]
    lib.path = found[0]
    return lib


def librdkafka_version_and_table() -> tuple[str, str]:
    """The installed librdkafka's version and its property table (markdown), read through ctypes."""
    lib = load_librdkafka()
    libc = ctypes.CDLL(None)
    libc.fopen.restype = ctypes.c_void_p
    libc.fopen.argtypes = [ctypes.c_char_p, ctypes.c_char_p]
    libc.fclose.argtypes = [ctypes.c_void_p]
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "properties.md")
        handle = libc.fopen(path.encode(), b"w")
        lib.rd_kafka_conf_properties_show(handle)
        libc.fclose(handle)
        with open(path, encoding="utf-8") as f:
            return lib.rd_kafka_version_str().decode(), f.read()


# rd_kafka_conf_res_t
CONF_UNKNOWN, CONF_INVALID, CONF_OK = -2, -1, 0


def conf_set(lib: ctypes.CDLL, name: str, value: str) -> int:
    """librdkafka's verdict on ``name=value``: in a global configuration, else in a topic's."""
    err = ctypes.create_string_buffer(512)
    conf = lib.rd_kafka_conf_new()
    try:
        res = lib.rd_kafka_conf_set(conf, name.encode(), value.encode(), err, len(err))
    finally:
        lib.rd_kafka_conf_destroy(conf)
    if res != CONF_UNKNOWN:
        return int(res)
    topic = lib.rd_kafka_topic_conf_new()
    try:
        return int(lib.rd_kafka_topic_conf_set(topic, name.encode(), value.encode(), err, len(err)))
    finally:
        lib.rd_kafka_topic_conf_destroy(topic)


def known_names(lib: ctypes.CDLL) -> set[str]:
    """Every property name librdkafka knows, documented or not: each name-like string of the library
    binary (and each tail of one after a separator, which a linker may share) that conf_set does not
    answer with RD_KAFKA_CONF_UNKNOWN."""
    with open(lib.path, "rb") as f:
        words = {m.decode() for m in re.findall(rb"[A-Za-z][A-Za-z0-9._-]{1,120}", f.read())}
    words |= {word[i + 1 :] for word in words for i, ch in enumerate(word[:-1]) if ch in "._-"}
    return {word for word in words if conf_set(lib, word, "") != CONF_UNKNOWN}


# librdkafka's hidden properties: known to conf_set, left out of rd_kafka_conf_properties_show (so
# of its CONFIGURATION.md). The facts are rdkafka_conf.c's, written in the same row shape;
# `check_hidden` holds them against the installed library.
HIDDEN: tuple[tuple[str, str, str, str, str, str], ...] = (
    ("client.software.name", "*", "str", "", "librdkafka", ""),
    ("client.software.version", "*", "str", "", "", ""),
    ("enable.sparse.connections", "*", "bool", "true, false", "true", ""),
    ("metadata.request.timeout.ms", "*", "int", "10 .. 900000", "10", ""),
    ("enable_sasl_queue", "*", "bool", "true, false", "false", ""),
    ("test.mock.num.brokers", "*", "int", "0 .. 10000", "0", ""),
    ("test.mock.broker.rtt", "*", "int", "0 .. 3600000", "0", ""),
    # A unit-test hook (a C function pointer) that conf_set takes as any string.
    ("ut_handle_ProduceResponse", "*", "str", "", "", ""),
    # Java client properties librdkafka knows only to refuse every value of (kafkawire implements them).
    ("sasl.jaas.config", "*", "str", "", "", ""),
    ("ssl.truststore.location", "*", "str", "", "", ""),
)
_REFUSED_BY_LIBRDKAFKA = {"sasl.jaas.config", "ssl.truststore.location"}


def check_hidden(lib: ctypes.CDLL, documented: set[str]) -> None:
    """HIDDEN against the library: exactly the known names that are not documented, each with the
    default conf_get reports, an integer's range's ends accepted and their neighbours refused, a
    bool's non-bool refused."""
    hidden = {row[0] for row in HIDDEN}
    missing = known_names(lib) - documented - hidden
    if missing or hidden & documented:
        raise RuntimeError(f"HIDDEN is out of date: add {sorted(missing)}, drop {sorted(hidden & documented)}")
    for name, _scope, kind, rng, default, _alias in HIDDEN:
        if name in _REFUSED_BY_LIBRDKAFKA:
            if conf_set(lib, name, "x") != CONF_INVALID:
                raise RuntimeError(f"{name}: librdkafka now takes a value")
            continue
        size = ctypes.c_size_t(512)
        buf = ctypes.create_string_buffer(512)
        conf = lib.rd_kafka_conf_new()
        try:
            got = lib.rd_kafka_conf_get(conf, name.encode(), buf, ctypes.byref(size))
        finally:
            lib.rd_kafka_conf_destroy(conf)
        if kind != "str" or default:
            if got != CONF_OK or buf.value.decode() != default:
                raise RuntimeError(f"{name}: librdkafka's default is {buf.value!r}, not {default!r}")
        if kind == "int":
            low, high = (int(end) for end in rng.split(" .. "))
            verdicts = [conf_set(lib, name, str(v)) for v in (low, high, low - 1, high + 1)]
            if verdicts != [CONF_OK, CONF_OK, CONF_INVALID, CONF_INVALID]:
                raise RuntimeError(f"{name}: librdkafka's range is not {rng}")
        elif kind == "bool":
            if [conf_set(lib, name, v) for v in ("true", "false", "maybe")] != [CONF_OK, CONF_OK, CONF_INVALID]:
                raise RuntimeError(f"{name}: not a bool in librdkafka")
        elif conf_set(lib, name, "any text") != CONF_OK:
            raise RuntimeError(f"{name}: librdkafka refuses a string")


_ALIAS = re.compile(r"^Alias for `([^`]+)`")
_TYPE = re.compile(r"\*Type: ([^*]+)\*")


def parse(table: str) -> list[tuple[str, str, str, str, str, str]]:
    """(name, scope, kind, range, default, alias_of) per row; topic-level rows keep their scope."""
    rows: list[tuple[str, str, str, str, str, str]] = []
    seen: set[str] = set()
    for line in table.splitlines():
        cells = [c.strip() for c in line.split("|")]
        if len(cells) < 6 or cells[0] in ("Property", "") or cells[0].startswith("-"):
            continue
        name, scope, rng, default, _importance, text = cells[:6]
        if name in seen:  # a topic-level row repeating a global one (compression.codec): keep the first
            continue
        seen.add(name)
        kind = _TYPE.search(text)
        alias = _ALIAS.search(text)
        rows.append((name, scope, KINDS[kind.group(1).strip()] if kind else "str", rng, default,
                     alias.group(1) if alias else ""))  # fmt: skip
    return rows


def render(version: str, rows: list[tuple[str, str, str, str, str, str]]) -> str:
    lines = [
        f'"""librdkafka {version}\'s configuration properties (generated by',
        "scripts/generate_librdkafka_properties.py from the installed library; do not edit).",
        "",
        "Each row: name, the client type that reads it ('*' both, 'P' producer, 'C' consumer), its kind,",
        "its range ('low .. high') or choices ('a, b'), its default as librdkafka prints it, and the",
        'property it is an alias of ("" if none). The documented rows come first, then the hidden ones',
        "(known to rd_kafka_conf_set, left out of librdkafka's CONFIGURATION.md). kafkawire's option tables",
        'answer for every name here."""',
        "",
        "from typing import Final",
        "",
        f'LIBRDKAFKA_VERSION: Final = "{version}"',
        "",
        "PROPERTIES: Final[tuple[tuple[str, str, str, str, str, str], ...]] = (",
    ]
    lines += [f"    {row!r}," for row in rows]
    lines += [")", ""]
    return "\n".join(lines)


def catalog() -> tuple[str, list[tuple[str, str, str, str, str, str]]]:
    """The installed librdkafka's version and every property it knows: the documented rows, then HIDDEN."""
    version, table = librdkafka_version_and_table()
    rows = parse(table)
    check_hidden(load_librdkafka(), {row[0] for row in rows})
    return version, rows + list(HIDDEN)


if __name__ == "__main__":
    version, rows = catalog()
    TARGET.write_text(render(version, rows))
    print(f"wrote {TARGET.relative_to(ROOT)}")
