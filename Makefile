# Two commands do everything on a fresh machine (each creates .venv when needed):
#   make course   open the course in JupyterLab
#   make test     lint, library tests, reliability suite, notebook regression, browser tests
#   make slides   every notebook as an offline reveal.js deck + HTML page in exports/
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: course test test-fast notebooks slides bench voila lint clean-venv

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
	$(BIN)/ruff check .
	env -u MPLBACKEND $(BIN)/python -m pytest

test-fast: $(STAMP)
	env -u MPLBACKEND $(BIN)/python -m pytest tests -m "not browser and not slow"

notebooks: $(STAMP)
	env -u MPLBACKEND $(BIN)/python scripts/run_notebooks.py

# offline exports (committed outputs, reveal.js inlined, no CDN): exports/slides, exports/pages
slides: $(STAMP)
	$(BIN)/python scripts/export_slides.py

bench: $(STAMP)
	$(BIN)/python bench/run_bench.py

voila: $(STAMP)
	env -u MPLBACKEND $(BIN)/voila notebooks/08_query_playground.ipynb

lint: $(STAMP)
	$(BIN)/ruff check .

clean-venv:
	rm -rf $(VENV)
