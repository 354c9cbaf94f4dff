# Two commands: `make run` and `make test`. Each one sets itself up on a fresh machine.
VENV := .venv
STAMP := $(VENV)/.installed
PY := $(VENV)/bin/python

.PHONY: run test setup lint bench clean

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

test: $(STAMP)
	bash tools/with_display.sh $(PY) -m pytest -q -p no:cacheprovider $(PYTEST_ARGS)

lint: $(STAMP)
	$(VENV)/bin/ruff check codec app tests tools bench

bench: $(STAMP)
	$(PY) -m codec bench

clean:
	rm -rf $(VENV)
