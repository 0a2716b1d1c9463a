# Services some tests run as real processes: redis-server (the Redis store contract tests)
# and nginx (a reverse-proxy test). Installed from Debian with apt-get only when the binary
# is missing, and never started as system services: the tests start their own on 127.0.0.1
# on a free port and stop them. Include from the Makefile and make `install` depend on
# `services`.
#
# * A `/usr/sbin/policy-rc.d` that exits 101 keeps the packages' postinst scripts from
#   starting redis/nginx (invoke-rc.d and deb-systemd-invoke both honour it). A file that
#   was already there is left alone; one made here is removed afterwards, even on failure.
# * On a machine booted with systemd, the two units are disabled again so they do not start
#   at the next boot either.
# * Not root: the commands run through sudo. Not Debian/Ubuntu (no apt-get): the target
#   says what is missing and goes on; the tests that need it then skip with a reason.

SERVICES_SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
POLICY_RC_D := /usr/sbin/policy-rc.d

.PHONY: services

services:
	@missing=""; \
	command -v redis-server >/dev/null 2>&1 || missing="$$missing redis-server"; \
	{ command -v nginx >/dev/null 2>&1 || test -x /usr/sbin/nginx; } || missing="$$missing nginx-light"; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if ! command -v apt-get >/dev/null 2>&1; then \
		echo "services: missing$$missing and no apt-get here; install them yourself (the tests needing them skip)"; \
		exit 0; \
	fi; \
	echo "services: installing$$missing (not started as system services)"; \
	made_policy=""; \
	if [ ! -e $(POLICY_RC_D) ]; then \
		printf '#!/bin/sh\nexit 101\n' | $(SERVICES_SUDO) tee $(POLICY_RC_D) >/dev/null && \
		$(SERVICES_SUDO) chmod 755 $(POLICY_RC_D) && made_policy=1; \
	fi; \
	status=0; \
	$(SERVICES_SUDO) env DEBIAN_FRONTEND=noninteractive apt-get update -qq && \
	$(SERVICES_SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $$missing \
		|| status=$$?; \
	if [ -n "$$made_policy" ]; then $(SERVICES_SUDO) rm -f $(POLICY_RC_D); fi; \
	if [ $$status -ne 0 ]; then exit $$status; fi; \
	if [ -d /run/systemd/system ]; then \
		for unit in redis-server nginx; do \
			$(SERVICES_SUDO) systemctl disable --now $$unit >/dev/null 2>&1 || true; \
		done; \
	fi; \
	if command -v redis-server >/dev/null 2>&1; then redis-server --version; fi
