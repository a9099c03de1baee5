# Every install goes through constraints.txt: an unpinned torch pulls the CUDA build.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(PY) -m pip
STAMP  := $(VENV)/.installed
PYTEST_ARGS ?=

.PHONY: venv test demo docs bench screenshots verify-apis discover-apis test-fast realworld

venv: $(STAMP)

# Rebuilt only when pyproject.toml or constraints.txt change (or .venv is gone).
# --no-build-isolation: build msmagic with the pinned setuptools in the venv instead of
# fetching an unpinned one into a throwaway build environment.
$(STAMP): pyproject.toml constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install --upgrade -c constraints.txt pip setuptools wheel
	$(PIP) install -c constraints.txt --no-build-isolation -e '.[frameworks,test]'
	@if $(PIP) freeze | grep -i '^nvidia-'; then \
		echo "error: CUDA packages were installed; torch must come from the CPU wheel" >&2; exit 1; fi
	$(PY) -c "import torch, mindspore, numpy; print('torch', torch.__version__, '| mindspore', mindspore.__version__, '| numpy', numpy.__version__)"
	touch $@

# pytest exits 5 when it collected no tests; that fails here, like any other failure.
test: venv
	@$(PY) -m pytest $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "make test: pytest collected no tests" >&2; fi; \
	exit $$rc

# The fast tier: before/after text tests that import neither torch nor mindspore (seconds).
test-fast: venv
	$(PY) -m pytest -p no:cacheprovider -q tests/fast $(PYTEST_ARGS)

# The real-browser test (tests/test_browser.py, marker `browser`) is part of `make test`;
# this runs it alone and also refreshes the user guide's screenshots in docs/images/.
# It needs Chromium at /usr/bin/chromium (apt-get install -y chromium) or at $MSMAGIC_CHROMIUM.
screenshots: venv
	MSMAGIC_DOCS_SCREENSHOTS=1 $(PY) -m pytest -m browser -p no:cacheprovider $(PYTEST_ARGS)

demo: venv
	$(PY) scripts/run_demo.py

# Also regenerates msmagic/apis/signatures.json from the installed versions (seconds):
# the signatures the port checks emitted calls against.
docs: venv
	$(PY) -m msmagic.apis.signatures
	$(PY) -m msmagic.apis.names
	$(PY) -m msmagic.docs
	$(PY) -m msmagic.apis.catalog

# Proves every API mapping by running both frameworks on PyTorch's own samples (op_db,
# module_db), hand-written cases and the rule examples; rewrites
# msmagic/apis/verification.json and docs/api_coverage.md and prints the summary.
verify-apis: venv
	$(PY) -m msmagic.apis.harness

# Proposes same-signature mappings for op_db APIs not mapped yet and keeps those that
# verify (msmagic/apis/table.json); then run verify-apis.
discover-apis: venv
	$(PY) -m msmagic.apis.discover

bench: venv
	@set -e; found=0; for f in benchmarks/bench_*.py; do \
		[ -e "$$f" ] || continue; found=1; \
		echo "== $$f"; $(PY) "$$f"; \
	done; \
	if [ $$found -eq 0 ]; then echo "make bench: no benchmarks/bench_*.py" >&2; exit 1; fi

# The acceptance runner on real tutorial code: the shared set (../shared/realworld/cases), then the
# project's own set (benchmarks/realworld/cases). Slow (about a minute per case); per-case outputs go to
# msmagic-realworld-shared and msmagic-realworld-own in the temp folder.
REALWORLD_RUNNER := ../shared/realworld/run.py
realworld: venv
	@if [ ! -f $(REALWORLD_RUNNER) ]; then \
		echo "make realworld: $(REALWORLD_RUNNER) not found (the shared acceptance set lives beside this checkout)" >&2; exit 1; fi
	PYTHONPATH=$(CURDIR) $(PY) $(REALWORLD_RUNNER) --python $(PY) --work $${TMPDIR:-/tmp}/msmagic-realworld-shared; rc1=$$?; \
	PYTHONPATH=$(CURDIR) $(PY) $(REALWORLD_RUNNER) --python $(PY) --cases benchmarks/realworld/cases \
		--work $${TMPDIR:-/tmp}/msmagic-realworld-own; rc2=$$?; \
	exit $$(( rc1 || rc2 ))
