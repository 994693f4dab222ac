# Two commands: `make reproduce` runs the whole study, `make test` runs the tests.
# `make reproduce` builds .venv from the pinned requirements.txt (the study and the command);
# `make test` adds requirements-dev.txt (test, lint and mutation tools).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# The machine's cores by default; `make reproduce CORES=1` to leave the machine to others.
CORES ?= $(shell nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
export NUMBA_CACHE_DIR := $(CURDIR)/.cache/numba
export MPLBACKEND := Agg

.PHONY: reproduce test test-slurm sysdeps lint bench clean venv venv-dev mutants docs

venv: $(VENV)/.installed
venv-dev: $(VENV)/.installed-dev

# A .venv copied with its clone still runs the original's interpreter (its scripts' #! lines)
# and imports the original's src (the editable install's .pth): when the .pth names another
# checkout's src, the venv is removed and rebuilt here.
VENV_SRC := $(shell cat $(VENV)/lib/python*/site-packages/__editable__.evalsim-*.pth 2>/dev/null | head -n 1)
ifneq ($(VENV_SRC),)
ifneq ($(VENV_SRC),$(CURDIR)/src)
VENV_STALE := venv-moved
endif
endif

.PHONY: venv-moved
venv-moved:
	@echo "$(VENV) imports $(VENV_SRC), not $(CURDIR)/src (a copied clone): rebuilding it"
	rm -rf $(VENV)

$(VENV)/.installed: requirements.txt pyproject.toml $(VENV_STALE)
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -r requirements.txt
	$(BIN)/pip install --quiet --disable-pip-version-check --no-deps -e .
	touch $@

$(VENV)/.installed-dev: $(VENV)/.installed requirements-dev.txt $(VENV_STALE)
	$(BIN)/pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $@

# One live progress line (tools/progress.py); Snakemake's per-job blocks go to logs/snakemake/.
reproduce: venv
	$(BIN)/python -m evalsim.sim.calibrate_so101 check
	$(BIN)/python tools/progress.py logs/snakemake/reproduce.log -- \
		$(BIN)/snakemake --profile profiles/local --cores $(CORES)
	$(BIN)/snakemake --report results/report.html
	$(BIN)/python -m evalsim.ledger readme

test: venv-dev sysdeps
	$(BIN)/pytest -n 2 --dist loadgroup --durations=25

# Only the tests that run the workflow on a one-node SLURM cluster (tests/test_slurm.py).
test-slurm: venv-dev sysdeps
	$(BIN)/pytest -m slurm -rs

# System packages some tests need: a one-node SLURM cluster (slurm-wlm, munge), headless
# Chromium for the report check, and Mesa GL (OSMesa, EGL) for MuJoCo's offscreen renderer.
# Installed with apt-get only when missing and running as root; never fails: without them the
# tests that need them skip and say why.
SYSDEPS := slurm-wlm munge chromium libosmesa6 libegl-mesa0 libegl1 libgl1-mesa-dri
sysdeps:
	@missing=$$(for p in $(SYSDEPS); do dpkg-query -W -f='$${Status}' $$p 2>/dev/null | \
		grep -q 'install ok installed' || echo $$p; done); \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then \
		echo "sysdeps: not installing $$missing (needs root and apt-get); tests that need them skip"; \
		exit 0; fi; \
	echo "sysdeps: apt-get install $$missing"; \
	( export DEBIAN_FRONTEND=noninteractive; apt-get update -qq && \
	  apt-get install -y -qq --no-install-recommends $$missing ) >/tmp/evalsim-sysdeps.log 2>&1 || \
		echo "sysdeps: apt-get failed (see /tmp/evalsim-sysdeps.log); tests that need them skip"

# snakemake --lint runs through tests/test_lint.py, which accepts its one lint (no conda env:
# the pinned venv is the environment); the raw command exits 1 on that lint alone.
lint: venv-dev
	$(BIN)/ruff check src tests benchmarks workflow/scripts tools
	$(BIN)/ruff format --check src tests benchmarks workflow/scripts tools
	$(BIN)/snakefmt --check Snakefile workflow/rules
	$(BIN)/lint-imports
	$(BIN)/pytest -q -p no:cacheprovider tests/test_lint.py -k snakemake_lint

# Mutation testing of the verdict modules (issue 17, docs/MUTANTS.md): writes results/mutants.json.
# The groups' wall times on the shared 2-core machine (docs/MUTANTS.md) add up to about 1.5-2 h;
# GROUPS=ledger,kernels runs some groups (tools/mutants.py --list).
GROUPS ?=
comma := ,
mutants: venv-dev
	nice -n 10 $(BIN)/python tools/mutants.py $(subst $(comma), ,$(GROUPS))

bench: venv-dev
	for b in benchmarks/bench_*.py; do $(BIN)/python $$b || exit 1; done

clean:
	rm -rf results figures .snakemake .cache .mutmut

# The docs site (mkdocs-material + mkdocstrings): regenerate the reference pages, build strictly.
docs: venv-dev
	$(BIN)/python tools/gen_docs.py
	NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs build --strict
