# Two commands for a new user: `make run` serves the explorer, `make test` runs the whole suite.
# Both create .venv and install into it; torch is pinned to the CPU wheel (plain `torch` pulls CUDA builds).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
TORCH := torch==2.13.0
CHROMIUM := /usr/bin/chromium
NGINX := /usr/sbin/nginx
PORT ?= 5006
# this machine only; serving others needs --allow-websocket-origin too (README, For instructors)
ADDRESS ?= 127.0.0.1

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
run: install  ## serve the explorer at http://localhost:$(PORT)/explorer
	BOKEH_SECRET_KEY="$${BOKEH_SECRET_KEY:-$$($(PY) -c 'import secrets; print(secrets.token_urlsafe(32))')}" \
	$(VENV)/bin/panel serve app/explorer.py --address $(ADDRESS) --port $(PORT) --static-dirs course=static \
		--session-ids signed

test: install-test
	$(PY) -m pytest -q

bench: install-test
	for f in benchmarks/bench_*.py; do $(PY) $$f || exit 1; done

clean:
	rm -rf $(VENV) .pytest_cache *.egg-info
