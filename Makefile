# The two set-up commands (see README): `make demo` runs the main job (the two-step Spark pipeline
# on an embedded broker), `make test` the test suite. Each creates its own virtualenv on first use
# and installs what it needs into it. Spark needs Java 17+ (Debian: openjdk-17-jre-headless).

PYTHON ?= python3
DEMO_VENV := .venv-demo
TEST_VENV := .venv

.PHONY: demo pipeline producer-demo java system-deps test test-slow test-all lint clean peer

# setup.py builds the C extension (src/kafkawire/_native.c) at install time; a change to it reinstalls.
$(DEMO_VENV)/.installed: pyproject.toml setup.py src/kafkawire/_native.c
	$(PYTHON) -m venv $(DEMO_VENV)
	$(DEMO_VENV)/bin/python -m pip install -q --upgrade pip
	$(DEMO_VENV)/bin/python -m pip install -q -e '.[local,spark]'
	touch $@

$(TEST_VENV)/.installed: pyproject.toml setup.py src/kafkawire/_native.c
	$(PYTHON) -m venv $(TEST_VENV)
	$(TEST_VENV)/bin/python -m pip install -q --upgrade pip
	$(TEST_VENV)/bin/python -m pip install -q -e '.[dev,local,spark]'
	$(TEST_VENV)/bin/python -m pip install -q --no-deps 'quixstreams>=3'  # its confluent-kafka<2.13 pin would replace the judge
	touch $@

# The demo, on an embedded Tansu broker: Spark generates DEMO_ROWS orders and the kafkawire data
# source writes them to a topic; then a streaming job reads that topic, enriches it with SQL and
# writes a second topic exactly once. Both summaries are printed.
DEMO_ROWS ?= 250000

demo: java $(DEMO_VENV)/.installed
	$(DEMO_VENV)/bin/kafkawire pipeline --demo --generate $(DEMO_ROWS)

# The file -> topic job on the bundled sample (5,000 orders).
pipeline: java $(DEMO_VENV)/.installed
	$(DEMO_VENV)/bin/kafkawire pipeline --sample --topic orders --key-column customer_id

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

lint: $(TEST_VENV)/.installed
	$(TEST_VENV)/bin/ruff check src tests
	$(TEST_VENV)/bin/mypy src

# System packages the broker tests need: Debian's ZooKeeper 3.8 jars (the Kafka 2.3 judge on
# Java 17, tests/harness/kafka_broker.py) and socat (TLS in front of Tansu). Installed when missing
# and running as root with apt-get; otherwise the command to run is printed.
SYSTEM_PACKAGES := libzookeeper-java:/usr/share/java/zookeeper-jute-3.8.0.jar socat:/usr/bin/socat

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

# The suite on the C extension (required to have built), then the unit and conformance tests
# again on its pure-Python twins (kafkawire/native.py). Tests marked slow (soaks, long mutation runs,
# most Spark jobs) are left to `make test-slow`, which CI runs too (.ci/run). Workers (pytest-xdist)
# keep it under 15 minutes on two cores: the unit and conformance tests (CPU-bound) on two, the
# broker tests (mostly waiting on brokers; each worker starts its own, one file per worker) on
# three, the Spark tests on one shared Spark session.
UNIT_TESTS := tests/unit tests/conformance
PYTEST := $(TEST_VENV)/bin/python -m pytest -m "not slow"

test: lint system-deps
	KAFKAWIRE_REQUIRE_NATIVE=1 $(PYTEST) -q -n 2 $(UNIT_TESTS)
	KAFKAWIRE_REQUIRE_NATIVE=1 $(PYTEST) -n 3 --dist loadfile $(addprefix --ignore=,$(UNIT_TESTS) tests/spark)
	KAFKAWIRE_REQUIRE_NATIVE=1 $(PYTEST) tests/spark
	KAFKAWIRE_PURE_PYTHON=1 $(PYTEST) -q -n 2 $(UNIT_TESTS)

test-slow: system-deps $(TEST_VENV)/.installed
	KAFKAWIRE_REQUIRE_NATIVE=1 $(TEST_VENV)/bin/python -m pytest -m slow

# Everything: the suite, then the slow tests (the three-broker Kafka 2.3 scenarios included,
# tests/broker/test_cluster_kafka23.py; KAFKAWIRE_CLUSTER_SEED picks another fault schedule).
test-all: test test-slow

# Drop-in, measured: confluent-kafka-python's own unit tests run on kafkawire with the import renamed
# (../shared/peer, see its README). The rate may only go up: raise PEER_FAIL_UNDER with it.
PEER_DIR ?= ../shared/peer
PEER_VENV := .venv-peer
PEER_FAIL_UNDER ?= 93.6

$(PEER_VENV)/.installed: pyproject.toml setup.py src/kafkawire/_native.c
	$(PYTHON) -m venv $(PEER_VENV)
	$(PEER_VENV)/bin/python -m pip install -q --upgrade pip
	$(PEER_VENV)/bin/python -m pip install -q -r $(PEER_DIR)/requirements.txt -e '.[serdes]'
	touch $@

peer: $(PEER_VENV)/.installed
	$(PEER_VENV)/bin/python $(PEER_DIR)/run --fail-under $(PEER_FAIL_UNDER)

clean:
	rm -rf $(DEMO_VENV) $(TEST_VENV) $(PEER_VENV) build *.egg-info src/*.egg-info src/kafkawire/_native*.so

# The benchmark (bench/README.md): kafkawire against confluent-kafka, aiokafka and kafka-python on
# an embedded Tansu broker; prints the table and writes bench/RESULTS.md (about 40 minutes).
# `make bench BENCH_ARGS=--quick` is a smoke run; `BENCH_ARGS="--scenarios latency --rounds 5"` picks.
BENCH_VENV := .venv-bench
BENCH_ARGS ?=

.PHONY: bench

$(BENCH_VENV)/.installed: pyproject.toml setup.py src/kafkawire/_native.c
	$(PYTHON) -m venv $(BENCH_VENV)
	$(BENCH_VENV)/bin/python -m pip install -q --upgrade pip
	$(BENCH_VENV)/bin/python -m pip install -q -e '.[bench]'
	touch $@

bench: java $(BENCH_VENV)/.installed
	$(BENCH_VENV)/bin/python -m bench $(BENCH_ARGS)
