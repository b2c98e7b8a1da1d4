# Two commands do all set-up on a fresh machine:
#   make run    - install into .venv and start the service (API + dashboard + embedded worker) on SQLite
#   make test   - install into .venv (with test extras) and run the test suite
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
EXTRAS ?= test,train
# The llm-local extra builds llama.cpp from source. A -march=native build on a CPU with AMX tiles
# segfaults in its first decode where the sandbox does not grant them (measured on a Sapphire Rapids
# VM: SmolLM2 crashed the server with SIGSEGV); a portable build runs everywhere.
export CMAKE_ARGS ?= -DGGML_NATIVE=OFF

.PHONY: run test install bench clean

$(VENV)/.installed-$(EXTRAS): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[$(EXTRAS)]'
	touch $@

install: $(VENV)/.installed-$(EXTRAS)

run: install
	$(VENV)/bin/sld serve

test: install
	$(PY) -m pytest -q $(PYTEST_ARGS)

bench: install
	$(VENV)/bin/sld bench --laws both

clean:
	rm -rf $(VENV) *.egg-info
