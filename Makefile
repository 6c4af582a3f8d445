# Two commands for a new user: `make run` serves the explorer, `make test` runs the whole suite.
# Both create .venv and install into it; torch is pinned to the CPU wheel (plain `torch` pulls CUDA builds).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
TORCH := torch==2.13.0
CHROMIUM := /usr/bin/chromium
NGINX := /usr/sbin/nginx
PORT ?= 5006
# ADDRESS: where the server listens (this machine only by default). A class on the room's network:
#   make run ADDRESS=0.0.0.0                                 (students open http://THIS-MACHINE'S-IP:5006/explorer)
#   make run ADDRESS=0.0.0.0 ORIGIN="explorer.local:5006"    (the host names and ports students type, space-separated)
# ORIGIN: the websocket origins the server accepts besides localhost (`panel serve --allow-websocket-origin`); a
# page opened from any other address gets no live view. With ADDRESS not local it defaults to this machine's IPv4
# addresses (hostname -I). Never "*". (docs/instructors.md.)
ADDRESS ?= 127.0.0.1
ORIGIN ?= $(if $(filter-out 127.0.0.1 localhost,$(ADDRESS)),$(foreach a,$(shell hostname -I 2>/dev/null),$(if $(findstring :,$(a)),,$(a):$(PORT))))
ORIGINS := localhost:$(PORT) 127.0.0.1:$(PORT) $(ORIGIN)

.PHONY: run test bench install install-test browser nginx clean

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q $(TORCH) -e .
	touch $@

$(VENV)/.installed-test: $(VENV)/.installed
	$(PY) -m pip install -q $(TORCH) -e '.[test]'
	touch $@

install: $(VENV)/.installed
install-test: $(VENV)/.installed-test browser nginx

# $(call apt,PROGRAM,PACKAGE): install Debian's PACKAGE with apt when PROGRAM is missing (RUNLEVEL=1 keeps a
# package's service from starting where that is possible)
apt = test -x $(1) || { SUDO=$$( [ "$$(id -u)" = 0 ] || echo sudo ); \
	$$SUDO apt-get update -qq && $$SUDO env RUNLEVEL=1 apt-get install -y -qq $(2) >/dev/null; }; test -x $(1)

browser:  ## Debian's Chromium for the browser tests (Playwright cannot download browsers here)
	@$(call apt,$(CHROMIUM),chromium)

nginx:  ## Debian's nginx for tests/test_browser_proxy.py, which runs its own in a temporary folder on 127.0.0.1
	@$(call apt,$(NGINX),nginx)

# Session ids are signed (a made-up ?bokeh-session-id= gets 403, so one link cannot put two people in one session),
# with BOKEH_SECRET_KEY when it is set (several servers behind a proxy share one), else a fresh key per run.
run: install  ## serve the explorer at http://localhost:$(PORT)/explorer (ADDRESS, ORIGIN: see above)
	@echo "explorer: listening on $(ADDRESS):$(PORT); pages opened as $(foreach o,$(ORIGINS),http://$(o)/explorer) work"
	BOKEH_SECRET_KEY="$${BOKEH_SECRET_KEY:-$$($(PY) -c 'import secrets; print(secrets.token_urlsafe(32))')}" \
	$(VENV)/bin/panel serve app/explorer.py --setup app/warm.py --address $(ADDRESS) --port $(PORT) --static-dirs course=static \
		--session-ids signed $(foreach o,$(ORIGINS),--allow-websocket-origin=$(o))

# JOBS: pytest-xdist workers; each takes whole test files (--dist loadfile), so a file's server starts once.
JOBS ?= 2
test: install-test
	$(PY) -m pytest -q -n $(JOBS) --dist loadfile --no-loadscope-reorder --durations=30

bench: install-test
	for f in benchmarks/bench_*.py; do $(PY) $$f || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache *.egg-info
