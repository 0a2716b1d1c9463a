# The browser the browser-answerer tests drive: Debian's chromium (/usr/bin/chromium),
# through the playwright package from PyPI (in the `dev` extra, so the venv has it).
# Playwright's own browser downloads (`playwright install`) are never used: they cannot be
# fetched here, and Debian's build is the one every machine of this project can install.
# Include from the Makefile and make `install` depend on `browser` and `axe`.
#
# * Installed with apt-get only when /usr/bin/chromium is missing, non-interactively and
#   without recommended packages. Not root: through sudo.
# * Not Debian/Ubuntu (no apt-get): the target says what is missing and goes on; the tests
#   that need a browser then skip with the reason (tests/support/browser.py).
# * MCP_ELICIT_CHROMIUM names another Chromium for the tests and the screenshots script.
#
# `axe`: axe-core, the WCAG rule engine the accessibility tests run in the pages
# (tests/ui/test_web_axe.py), pinned by tests/ui/axe/package-lock.json and installed there
# with Node 22. Tests only: nothing of it reaches the package. Without it those tests skip.
# Include after NODE22_BIN and STAMP_NODE are set.

BROWSER_SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
CHROMIUM := /usr/bin/chromium

.PHONY: browser screenshots axe

AXE_DIR := tests/ui/axe
AXE_STAMP := $(AXE_DIR)/node_modules/.installed

$(AXE_STAMP): $(AXE_DIR)/package-lock.json $(STAMP_NODE)
	cd $(AXE_DIR) && PATH=$(NODE22_BIN):$$PATH npm ci --no-audit --no-fund --loglevel=error
	sha256sum $(AXE_DIR)/package-lock.json | cut -d' ' -f1 > $@

axe: $(AXE_STAMP)

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
