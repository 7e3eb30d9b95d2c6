# Two commands do everything on a fresh machine (each creates .venv when needed):
#   make course   open the course in JupyterLab
#   make test     lint, layer contract, library tests (JSONL, SQLite and a real PostgreSQL),
#                 reliability suite, notebook regression, browser tests
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: course test test-fast notebooks bench bench-backends voila lint clean-venv

$(STAMP): pyproject.toml constraints.txt
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "memorylib needs Python 3.11+; set PYTHON=python3.11")'
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[dev]'
	@touch $(STAMP)

course: $(STAMP)
	env -u MPLBACKEND $(BIN)/jupyter lab notebooks/00_index.ipynb

test: $(STAMP)
	@bash scripts/ensure-chromium.sh
	@bash scripts/ensure-postgres.sh
	$(BIN)/ruff check .
	$(BIN)/lint-imports
	env -u MPLBACKEND $(BIN)/python -m pytest

test-fast: $(STAMP)
	env -u MPLBACKEND $(BIN)/python -m pytest tests -m "not browser and not slow"

notebooks: $(STAMP)
	env -u MPLBACKEND $(BIN)/python scripts/run_notebooks.py

bench: $(STAMP)
	$(BIN)/python bench/run_bench.py

bench-backends: $(STAMP)
	@bash scripts/ensure-postgres.sh
	$(BIN)/python bench/run_backends.py

voila: $(STAMP)
	env -u MPLBACKEND $(BIN)/voila notebooks/08_query_playground.ipynb

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/lint-imports

clean-venv:
	rm -rf $(VENV)
