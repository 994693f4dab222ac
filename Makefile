# Two commands: `make reproduce` runs the whole study, `make test` runs the tests.
# Both build .venv from the pinned requirements first.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
CORES ?= 8
export NUMBA_CACHE_DIR := $(CURDIR)/.cache/numba
export MPLBACKEND := Agg

.PHONY: reproduce test lint bench clean venv mutants

venv: $(VENV)/.installed

$(VENV)/.installed: requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -r requirements.txt
	$(BIN)/pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $@

reproduce: venv
	$(BIN)/snakemake --cores $(CORES)
	$(BIN)/snakemake --report results/report.html
	$(BIN)/python -m evalsim.ledger readme

test: venv browser
	$(BIN)/pytest -n 2 --dist loadgroup

# tests/test_report_browser.py opens the report in headless Chromium: install Debian's
# chromium when it is missing and we are root; otherwise that test skips, saying why.
.PHONY: browser
browser:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 \
	  || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1 \
	       && apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } \
	  || echo "chromium not installed: tests/test_report_browser.py will be skipped"

lint: venv
	$(BIN)/ruff check src tests benchmarks workflow/scripts
	$(BIN)/ruff format --check src tests benchmarks workflow/scripts
	$(BIN)/snakefmt --check Snakefile workflow/rules
	$(BIN)/snakemake --lint

# Mutation testing of the verdict modules (issue 17, docs/MUTANTS.md): writes results/mutants.json.
# About 30 min on 2 cores; GROUPS=ledger,kernels runs some groups (tools/mutants.py --list).
GROUPS ?=
comma := ,
mutants: venv
	nice -n 10 $(BIN)/python tools/mutants.py $(subst $(comma), ,$(GROUPS))

bench: venv
	for b in benchmarks/bench_*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf results figures .snakemake .cache .mutmut
