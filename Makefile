# The two commands of the README. Both install missing Debian packages,
# configure and build first, so they work on a fresh Debian 12 machine.
#   make run   - the main job on the bundled default profiles
#   make test  - the whole test suite (ctest)
PRESET ?= dev
BUILD_DIR := build/$(PRESET)
# CI sets CI=true: warnings become errors there.
WERROR := $(if $(filter true 1 yes,$(CI)),ON,OFF)
JOBS ?= 2
STOWAGE := $(BUILD_DIR)/cli/stowage

DEFAULT_MACHINE ?= workstation-24gb-1nvme
DEFAULT_MODEL ?= llama-2-13b

.PHONY: run test deps configure build clean

# Debian's simdjson source, for stowage-standalone (cmake/debian_libraries.cmake);
# without it the build goes on without that program, except in CI.
deps:
	@scripts/install-deps
	@scripts/fetch-debian-source libsimdjson-dev build/debian-source || \
	  { test "$(WERROR)" = OFF && echo "make: building without stowage-standalone"; }

configure: deps
	@mkdir -p build
	@cmake --preset $(PRESET) -DSTOWAGE_WARNINGS_AS_ERRORS=$(WERROR) > $(BUILD_DIR).configure.log 2>&1 || \
	  { cat $(BUILD_DIR).configure.log; exit 1; }

build: configure
	@cmake --build --preset $(PRESET) -j $(JOBS)

# The main job: plan the default model on the default machine, write the
# plan and its simulated timeline, and compare with the standard baselines.
# Then train the tiny GPT for real under an offloading plan (optimizer
# states on NVMe, the device capped so that offload is needed), writing the
# measured timeline beside the predicted one.
TINY_STEPS ?= 60
# This machine as `stowage profile --quick` measured it; delete it to measure again.
THIS_MACHINE ?= $(BUILD_DIR)/this-machine.yaml
run: build
	$(STOWAGE) plan --machine $(DEFAULT_MACHINE) --model $(DEFAULT_MODEL) \
	  -o $(BUILD_DIR)/plan.yaml --trace $(BUILD_DIR)/plan-trace.json
	@echo
	@# --- issue 14: a profile of this machine (measured once, then reused) ---
	@mkdir -p $(BUILD_DIR)/nvme
	@test -f $(THIS_MACHINE) || $(STOWAGE) profile --quick --nvme-dir $(BUILD_DIR)/nvme -o $(THIS_MACHINE)
	$(STOWAGE) run plans/tiny-gpt-nvme.yaml --steps $(TINY_STEPS) --device-memory 100MiB \
	  --nvme-dir $(BUILD_DIR)/nvme --trace $(BUILD_DIR)/tiny-measured.json \
	  --predicted-trace $(BUILD_DIR)/tiny-predicted.json
	@echo
	@echo "The same run predicted for this machine ($(THIS_MACHINE), the CPU backend as it measured):"
	$(STOWAGE) compare --machine $(THIS_MACHINE) $(BUILD_DIR)/tiny-measured.json \
	  --predicted-trace $(BUILD_DIR)/tiny-predicted-here.json | sed -n '1,14p;/most wrong lane/p'
	@# --- GUI (issue 6): show the plan and its trace; never blocks make ---
	@gui=$(BUILD_DIR)/gui/stowage-gui; files="$(BUILD_DIR)/plan.yaml $(BUILD_DIR)/plan-trace.json"; \
	if [ ! -x "$$gui" ]; then \
	  echo "GUI not built (STOWAGE_WITH_GUI is off or Qt6 was not found): open $(BUILD_DIR)/plan-trace.json in https://ui.perfetto.dev"; \
	elif [ -n "$$DISPLAY$$WAYLAND_DISPLAY" ]; then \
	  echo "opening the GUI: $$gui $$files"; \
	  nohup "$$gui" $$files > $(BUILD_DIR)/gui.log 2>&1 & \
	else \
	  echo "no display: to see the timeline, run $$gui $$files"; \
	  echo "  and the tiny run, measured against predicted for this machine: $$gui $(BUILD_DIR)/tiny-predicted-here.json --compare $(BUILD_DIR)/tiny-measured.json"; \
	fi
	@# --- end GUI ---

test: build
	ctest --preset $(PRESET) -j $(JOBS)

clean:
	rm -rf build
