# Two commands do everything on a fresh machine (each creates .venv when needed):
#   make course   open the course in JupyterLab (as root too: containers, cloud VMs); installs
#                 the light set, .[course]: what notebooks 00-11 run on their default path
#   make test     installs the rest, .[dev]; lint, layer contract, library tests (JSONL,
#                 SQLite and a real PostgreSQL), reliability suite, notebook regression,
#                 browser tests, then the slide limits over every exported deck
#   make check    the pre-flight check: every notebook runs top to bottom (light set)
#   make slides   every notebook as an offline reveal.js deck + HTML page in exports/
# Both README commands are scripts/course.py (stdlib only; Windows runs it without make):
# make adds nothing of its own, so the two cannot drift. One stamp per set in the venv
# (.installed-course, .installed-dev): `make course` then `make test` adds the dev set;
# `make test` then `make course` installs nothing. docs/setup.md has the details.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-dev
COURSE := $(PYTHON) scripts/course.py --venv $(VENV) $(COURSE_FLAGS)
# COURSE_FLAGS ?= (--dry-run: print the commands, run none; --no-install: use the venv as is)

.PHONY: course check test test-fast notebooks slides bench bench-backends benchmark-runs voila lint clean-venv

# the other targets need the dev set too
$(STAMP): pyproject.toml constraints.txt
	@$(COURSE) install dev

# JupyterLab refuses to start as root without --allow-root, and containers and cloud VMs
# run as root: the flag is added only when the effective uid is 0; for every other user the
# command is the plain one. Token auth stays JupyterLab's default. Without a browser
# (headless server, container) JupyterLab prints the URL with its token and keeps serving.
# Extra `jupyter lab` options: make course ARGS="--port 8899 --no-browser"
# tests/test_course_command.py runs this very recipe, as root and as not-root.
ARGS ?=

course:
	@$(COURSE) course $(ARGS)

# the pre-flight check: every notebook top to bottom with the light set, nothing written
check:
	@$(COURSE) check

test:
	@$(COURSE) test

test-fast: $(STAMP)
	env -u MPLBACKEND $(BIN)/python -m pytest tests -m "not browser and not slow"

notebooks: $(STAMP)
	env -u MPLBACKEND $(BIN)/python scripts/run_notebooks.py

# offline exports (committed outputs, reveal.js inlined, no CDN): exports/slides, exports/pages
slides: $(STAMP)
	$(BIN)/python scripts/export_slides.py

bench: $(STAMP)
	$(BIN)/python bench/run_bench.py

bench-backends: $(STAMP)
	@bash scripts/ensure-postgres.sh
	$(BIN)/python bench/run_backends.py

# The benchmark runs notebook 10 reads (data/benchmark-runs/README.md): the configurations it
# shows on both development halves, every question's hits and metrics (a few minutes: the
# hybrid embeds every turn once).
RUN_CONFIGS = --config coverage --config bm25 --config bm25+recency --config bm25-stem-stop \
	--config bm25-zh-seg --config bm25-dialogue --config bm25-context --config bm25-full \
	--config hybrid
benchmark-runs: $(STAMP)
	$(BIN)/python -m memorylib eval --benchmark locomo data/locomo-dev $(RUN_CONFIGS) --json \
		--per-query > data/benchmark-runs/locomo-dev.json
	$(BIN)/python -m memorylib eval --benchmark madial data/madial-zh-dev $(RUN_CONFIGS) --json \
		--per-query > data/benchmark-runs/madial-zh-dev.json
	gzip -n -9 -f data/benchmark-runs/locomo-dev.json data/benchmark-runs/madial-zh-dev.json

voila: $(STAMP)
	env -u MPLBACKEND $(BIN)/voila notebooks/08_query_playground.ipynb

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

clean-venv:
	rm -rf $(VENV)
