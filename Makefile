# Set-up and everyday commands. `make book` and `make test` each create .venv and install what they need.
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV   ?= .venv
BIN     = $(VENV)/bin
STAMP   = $(VENV)/.probekit-installed
SUDO    = $(shell [ "$$(id -u)" = 0 ] || echo sudo)
PROFILE ?= toy

.PHONY: book html test chromium venv bench clean

book: $(STAMP)                     ## execute every chapter and the summary (toy profile), build _build/html
	$(BIN)/probekit book --profile $(PROFILE)
	@echo "Open $(CURDIR)/_build/html/index.html in a browser."

html: $(STAMP)                     ## build _build/html from the executed notebooks, executing nothing
	$(BIN)/probekit book --no-execute

test: $(STAMP) chromium            ## run the test suite (pytest exit 5, "no tests collected", counts as success)
	$(BIN)/python -m pytest; rc=$$?; [ $$rc -eq 5 ] && rc=0; exit $$rc

venv: $(STAMP)

$(STAMP): pyproject.toml constraints.txt
	[ -x $(BIN)/python ] || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -c constraints.txt -e '.[dev]'
	touch $@

chromium:                          ## Debian's headless browser for the page-load test
	@command -v chromium >/dev/null || { $(SUDO) apt-get update && $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y chromium; }

bench: $(STAMP)
	$(BIN)/python benchmarks/book_build.py

clean:
	rm -rf _build book/chapters/*.ipynb book/chapters/*.results.parquet book/chapters/*.items.parquet
