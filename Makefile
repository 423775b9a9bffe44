# The two set-up commands (see README): `make demo` runs the main job (the two-step Spark pipeline
# on an embedded broker), `make test` the test suite. Each creates its own virtualenv on first use
# and installs what it needs into it. Spark needs Java 17+ (Debian: openjdk-17-jre-headless).

PYTHON ?= python3
DEMO_VENV := .venv-demo
TEST_VENV := .venv

.PHONY: demo pipeline producer-demo java system-deps test test-slow test-all lint clean peer docs

# setup.py builds the C extension (src/kafkawire/native_c/, one file per mechanism) at install time;
# a change to it reinstalls.
NATIVE_SOURCES := $(wildcard src/kafkawire/native_c/*.c)
$(DEMO_VENV)/.installed: pyproject.toml setup.py $(NATIVE_SOURCES)
	$(PYTHON) -m venv $(DEMO_VENV)
	$(DEMO_VENV)/bin/python -m pip install -q --upgrade pip
	$(DEMO_VENV)/bin/python -m pip install -q -e '.[local,spark,connect]'
	touch $@

# (system-deps first, order-only: the gssapi extra builds against libkrb5-dev.)
$(TEST_VENV)/.installed: pyproject.toml setup.py $(NATIVE_SOURCES) | system-deps
	$(PYTHON) -m venv $(TEST_VENV)
	$(TEST_VENV)/bin/python -m pip install -q --upgrade pip
	$(TEST_VENV)/bin/python -m pip install -q -e '.[dev,local,spark,connect]'
	$(TEST_VENV)/bin/python -m pip install -q -e '.[gssapi]' || \
	  echo "gssapi (kafkawire[gssapi]) did not build: install libkrb5-dev; the Kerberos tests will skip" >&2
	$(TEST_VENV)/bin/python -m pip install -q --no-deps 'quixstreams>=3'  # its confluent-kafka<2.13 pin would replace the judge
	$(TEST_VENV)/bin/python -m pip install -q --no-deps 'robotframework-confluentkafkalibrary>=2.4'  # (likewise: it pins one confluent-kafka)
	touch $@

# The demo, on an embedded Tansu broker: Spark generates DEMO_ROWS orders and the kafkawire data
# source writes them to a topic; then a streaming job reads that topic, enriches it with SQL and
# writes a second topic exactly once. Both summaries are printed. With SPARK_REMOTE=sc://host:port
# (or REMOTE=...) both steps run on that Spark Connect server instead, and no Java is needed here.
DEMO_ROWS ?= 250000
REMOTE ?= $(SPARK_REMOTE)

demo: $(if $(REMOTE),,java) $(DEMO_VENV)/.installed
	$(DEMO_VENV)/bin/kafkawire pipeline --demo --generate $(DEMO_ROWS) $(if $(REMOTE),--remote $(REMOTE))

# The file -> topic job on the bundled sample (5,000 orders); SPARK_REMOTE as for the demo.
pipeline: $(if $(REMOTE),,java) $(DEMO_VENV)/.installed
	$(DEMO_VENV)/bin/kafkawire pipeline --sample --topic orders --key-column customer_id $(if $(REMOTE),--remote $(REMOTE))

# The producer alone, without Spark: 100,000 orders through kafkawire's Producer.
producer-demo: $(DEMO_VENV)/.installed
	$(DEMO_VENV)/bin/kafkawire demo

JAVA := $(if $(JAVA_HOME),$(JAVA_HOME)/bin/java,java)

java:
	@command -v $(JAVA) >/dev/null 2>&1 || { \
	  echo "Spark needs Java 17 or newer, and no '$(JAVA)' was found." >&2; \
	  echo "Debian/Ubuntu: sudo apt-get install openjdk-17-jre-headless (or set JAVA_HOME to a JDK 17+)." >&2; \
	  exit 1; }
	@v=$$($(JAVA) -version 2>&1 | sed -n 's/.*version "\([0-9]*\).*/\1/p' | head -n1); \
	if [ -n "$$v" ] && [ "$$v" -lt 17 ]; then \
	  echo "Spark needs Java 17 or newer; $(JAVA) is Java $$v." >&2; \
	  echo "Debian/Ubuntu: sudo apt-get install openjdk-17-jre-headless (or set JAVA_HOME to a JDK 17+)." >&2; \
	  exit 1; fi

# ruff's formatter decides line breaks (`# fmt: skip` only on tables laid out by hand).
lint: $(TEST_VENV)/.installed
	$(TEST_VENV)/bin/ruff check src tests bench
	$(TEST_VENV)/bin/ruff format --check src tests bench
	$(TEST_VENV)/bin/mypy src

# System packages the broker tests need: Debian's ZooKeeper 3.8 jars (the Kafka 2.3 judge on
# Java 17, tests/harness/kafka_broker.py), socat (TLS in front of Tansu) and MIT Kerberos (the KDC
# of the GSSAPI tests, tests/harness/kdc.py; libkrb5-dev to build the gssapi package; faketime for a
# KDC whose clock is off). Installed
# when missing and running as root with apt-get; otherwise the command to run is printed.
SYSTEM_PACKAGES := libzookeeper-java:/usr/share/java/zookeeper-jute-3.8.0.jar socat:/usr/bin/socat \
  krb5-kdc:/usr/sbin/krb5kdc krb5-admin-server:/usr/sbin/kadmin.local krb5-user:/usr/bin/kinit \
  libkrb5-dev:/usr/bin/krb5-config faketime:/usr/bin/faketime \
  libnss-wrapper:/usr/lib/x86_64-linux-gnu/libnss_wrapper.so

system-deps:
	@missing=""; for entry in $(SYSTEM_PACKAGES); do [ -e "$${entry#*:}" ] || missing="$$missing $${entry%%:*}"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing:$$missing"; \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing >/dev/null 2>&1 || \
	    { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q $$missing >/dev/null; }; \
	  else \
	    echo "The broker tests need:$$missing. Install them with: sudo apt-get install -y$$missing" >&2; \
	  fi; \
	fi

# The suite on the C extension (required to have built). Tests marked slow (soaks, long mutation
# runs, most Spark jobs, clients dropped in child processes) and the unit and conformance tests again
# on the pure-Python twins (kafkawire/native.py) are left to `make test-slow`, which CI runs too
# (.ci/run). Workers (pytest-xdist) keep it under 15 minutes on two cores: the unit and conformance tests (CPU-bound) on two, the
# broker tests (mostly waiting on brokers; each worker starts its own, one file per worker) on
# three, the Spark tests on one shared Spark session.
UNIT_TESTS := tests/unit tests/conformance
PYTEST := $(TEST_VENV)/bin/python -m pytest -m "not slow"

test: lint system-deps
	KAFKAWIRE_REQUIRE_NATIVE=1 $(PYTEST) -q -n 2 $(UNIT_TESTS)
	KAFKAWIRE_REQUIRE_NATIVE=1 $(PYTEST) -n 3 --dist loadfile $(addprefix --ignore=,$(UNIT_TESTS) tests/spark)
	KAFKAWIRE_REQUIRE_NATIVE=1 $(PYTEST) tests/spark

# The fault tests again, twice each, with a busy loop on every core (tests/harness/load.py, ~6 min):
# on a busy machine too, a flake is a bug.
FAULT_TESTS := $(addprefix tests/broker/faults/,test_idempotent_producer.py test_producer.py \
	test_transactional_producer.py test_group_coordinator.py test_fetch_engine.py)

test-slow: system-deps $(TEST_VENV)/.installed
	KAFKAWIRE_REQUIRE_NATIVE=1 $(TEST_VENV)/bin/python -m pytest -m slow --durations=40
	KAFKAWIRE_PURE_PYTHON=1 $(PYTEST) -q -n 2 $(UNIT_TESTS)
	KAFKAWIRE_REQUIRE_NATIVE=1 $(PYTEST) -n 2 --dist loadfile --busy-loops --repeat 2 $(FAULT_TESTS)

# Everything CI runs: the README's suite, the documentation's build, the slow tests (with the corpus
# of libraries built on confluent-kafka, tests/frameworks, and the three-broker Kafka 2.3 scenarios,
# tests/broker/faults/test_cluster_kafka23.py; KAFKAWIRE_CLUSTER_SEED picks another fault schedule), then
# the peer suite when it is there. CI runs a rotating share of the heaviest (KAFKAWIRE_SHARE,
# tests/harness/share.py); here they run whole.
test-all: export KAFKAWIRE_SHARE = 1
test-all: test docs test-slow
	@if [ -d $(PEER_DIR) ]; then $(MAKE) peer; else echo "no peer suite at $(PEER_DIR): skipped"; fi

# Drop-in, measured: confluent-kafka-python's own unit tests run on kafkawire with the import renamed
# (../shared/peer, see its README). The rate may only go up: raise PEER_FAIL_UNDER with it. Every file
# counts (--files '*'), the ones the suite stages too: its share-consumer files (KIP-932) wait for a
# package with a ShareConsumer, which kafkawire has. `-v` names each failure in the log.
PEER_DIR ?= ../shared/peer
PEER_VENV := .venv-peer
PEER_FAIL_UNDER ?= 94.8

$(PEER_VENV)/.installed: pyproject.toml setup.py $(NATIVE_SOURCES)
	$(PYTHON) -m venv $(PEER_VENV)
	$(PEER_VENV)/bin/python -m pip install -q --upgrade pip
	$(PEER_VENV)/bin/python -m pip install -q -r $(PEER_DIR)/requirements.txt -e '.[serdes]'
	touch $@

# SIGINT back to its default first: a job started in the background (nohup, `cmd &` in a script)
# inherits it ignored, and then no Python program, confluent-kafka included, can be interrupted
# by it as the suite's poll tests do (contributing/judges.md).
DEFAULT_SIGINT := import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])

peer: $(PEER_VENV)/.installed
	$(PEER_VENV)/bin/python -c '$(DEFAULT_SIGINT)' $(PEER_VENV)/bin/python $(PEER_DIR)/run --files '*' -v --fail-under $(PEER_FAIL_UNDER)

# The documentation site (docs/, mkdocs.yml) into site/; a warning (a broken link, a docstring the
# API reference cannot read) fails the build. The pages' examples run in the tests (tests/broker/docs/).
DOCS_VENV := .venv-docs

$(DOCS_VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(DOCS_VENV)
	$(DOCS_VENV)/bin/python -m pip install -q --upgrade pip
	$(DOCS_VENV)/bin/python -m pip install -q -e '.[docs]'
	touch $@

docs: $(DOCS_VENV)/.installed
	$(DOCS_VENV)/bin/mkdocs build --strict

clean:
	rm -rf $(DEMO_VENV) $(TEST_VENV) $(PEER_VENV) $(DOCS_VENV) site build *.egg-info src/*.egg-info src/kafkawire/_native*.so

# The benchmark (bench/README.md): kafkawire against confluent-kafka, aiokafka and kafka-python on
# an embedded Tansu broker; prints the table and writes bench/RESULTS.md (about 40 minutes).
# `make bench BENCH_ARGS=--quick` is a smoke run; `BENCH_ARGS="--scenarios latency --rounds 5"` picks.
BENCH_VENV := .venv-bench
BENCH_ARGS ?=

.PHONY: bench

$(BENCH_VENV)/.installed: pyproject.toml setup.py $(NATIVE_SOURCES)
	$(PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/python -m pip install -q --upgrade pip
	$(BENCH_VENV)/bin/python -m pip install -q -e '.[bench]'
	touch $@

bench: java system-deps $(BENCH_VENV)/.installed
	$(BENCH_VENV)/bin/python -m bench $(BENCH_ARGS)
