# The two set-up commands (see README): `make demo` runs the main job, `make test` the test suite.
# Each creates its own virtualenv on first use and installs what it needs into it.

PYTHON ?= python3
DEMO_VENV := .venv-demo
TEST_VENV := .venv

.PHONY: demo test lint clean

$(DEMO_VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(DEMO_VENV)
	$(DEMO_VENV)/bin/python -m pip install -q --upgrade pip
	$(DEMO_VENV)/bin/python -m pip install -q -e '.[local]'
	touch $@

$(TEST_VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(TEST_VENV)
	$(TEST_VENV)/bin/python -m pip install -q --upgrade pip
	$(TEST_VENV)/bin/python -m pip install -q -e '.[dev,local,spark]'
	touch $@

demo: $(DEMO_VENV)/.installed
	$(DEMO_VENV)/bin/kafkawire demo

lint: $(TEST_VENV)/.installed
	$(TEST_VENV)/bin/ruff check src tests
	$(TEST_VENV)/bin/mypy src

test: lint
	$(TEST_VENV)/bin/python -m pytest

clean:
	rm -rf $(DEMO_VENV) $(TEST_VENV) build *.egg-info src/*.egg-info
