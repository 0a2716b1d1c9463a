# The browser the browser-answerer tests drive: Debian's chromium (/usr/bin/chromium),
# through the playwright package from PyPI (in the `dev` extra, so the venv has it).
# Playwright's own browser downloads (`playwright install`) are never used: they cannot be
# fetched here, and Debian's build is the one every machine of this project can install.
# Include from the Makefile and make `install` depend on `browser`.
#
# * Installed with apt-get only when /usr/bin/chromium is missing, non-interactively and
#   without recommended packages. Not root: through sudo.
# * Not Debian/Ubuntu (no apt-get): the target says what is missing and goes on; the tests
#   that need a browser then skip with the reason (tests/support/browser.py).
# * MCP_ELICIT_CHROMIUM names another Chromium for the tests and the screenshots script.

BROWSER_SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
CHROMIUM := /usr/bin/chromium

.PHONY: browser screenshots

browser:
	@if [ -x $(CHROMIUM) ]; then exit 0; fi; \
	if ! command -v apt-get >/dev/null 2>&1; then \
		echo "browser: no $(CHROMIUM) and no apt-get here; install Chromium yourself (the browser tests skip)"; \
		exit 0; \
	fi; \
	echo "browser: installing Debian's chromium"; \
	$(BROWSER_SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	$(BROWSER_SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium
	@$(CHROMIUM) --version 2>/dev/null || true

# The README's screenshots of the browser answerer (docs/screenshots/*.png).
screenshots: browser $(STAMP_PY)
	$(BIN)/python docs/screenshots/make_screenshots.py
