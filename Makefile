# Two commands: `make run` and `make test`. Each one sets itself up on a fresh machine.
# `make lint`: ruff's checks and formatting, and the import contracts of pyproject.toml.
VENV := .venv
STAMP := $(VENV)/.installed
PY := $(VENV)/bin/python

.PHONY: run test setup lint bench clean golden mutate

$(STAMP): pyproject.toml tools/setup.sh
	bash tools/setup.sh
	touch $(STAMP)

setup: $(STAMP)

run: $(STAMP)
	@if [ -n "$$DISPLAY" ]; then \
		$(PY) -m app; \
	else \
		bash tools/with_display.sh $(PY) -m app --screenshot shellscope.png && echo "wrote shellscope.png"; \
	fi

# Two test processes (pytest-xdist; CI has 2 cores), each test file whole in one of them so
# module and session fixtures are made once per file; files go out in the order collected,
# the slowest first (tests/conftest.py SLOW_FILES), so both processes end together.
# TEST_WORKERS=0: one process. The kernels' cache is filled first, here, when it is empty:
# after a kernel's source changed (codec.jit drops the stale cache as it is imported) both
# test processes compiled every kernel at once, minutes each on 2 cores.
# The sources are compiled to bytecode once, here, and the run may write bytecode (an empty
# PYTHONDONTWRITEBYTECODE is unset): with it set, as on these machines, every process the
# suite starts (hundreds: reader children, `python -m app`, Dask workers, traced children)
# compiled each module it imported from source, and each test process rewrote every test
# module's asserts (a third of a reader child's start, over half of a collection's CPU).
TEST_WORKERS ?= 2
test: $(STAMP)
	@if $(PY) -c "import sys, codec.jit as j; sys.exit(any(j.PACKAGE.rglob('*/*.nbi')))"; \
	then $(PY) -m codec warm-up; fi
	$(PY) -m compileall -q -j 0 codec app tests tools > /dev/null
	PYTHONDONTWRITEBYTECODE= bash tools/with_display.sh $(PY) -m pytest -q -p no:cacheprovider \
		-n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder $(PYTEST_ARGS)

LINTED := codec app tests tools bench

lint: $(STAMP)
	$(VENV)/bin/ruff check $(LINTED)
	$(VENV)/bin/ruff format --check $(LINTED)
	$(VENV)/bin/lint-imports --no-logo --no-cache

# After a deliberate change of the .ssc bytes: write tests/data/golden/ssc-vN/ again.
golden: $(STAMP)
	$(PY) tools/regen_golden.py

bench: $(STAMP)
	$(PY) -m codec bench

clean:
	rm -rf $(VENV)

# Plant each known bug in a temporary copy of the tree and check a test catches it.
mutate: $(STAMP)
	bash tools/with_display.sh $(PY) tools/mutate.py
