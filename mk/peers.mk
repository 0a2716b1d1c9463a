# Peers for the interop tests, never in .venv (the runtime must never import mcp):
# - the official Python SDK (mcp 2.3.0) in its OWN virtualenv, tests/.peers/mcp;
# - FastMCP (4.1.6) in its own, tests/.peers/fastmcp, from the benchmark's pins;
# - the official TypeScript SDK, v1 (@modelcontextprotocol/sdk, 2025-11-25) and v2
#   (@modelcontextprotocol/client and /server, 2026-07-28), in tests/peers/ts/node_modules,
#   pinned by its lockfile and installed with Node 22.
# Include from the Makefile after NODE22_BIN and STAMP_NODE are set:
#   include mk/peers.mk
# `make peers` builds them; the interop tests build them too when missing (and skip, saying
# why, when they cannot be built, e.g. offline).
PEERS_DIR := tests/.peers
PEER_MCP := $(PEERS_DIR)/mcp
PEER_MCP_STAMP := $(PEER_MCP)/.installed
PEER_FASTMCP := $(PEERS_DIR)/fastmcp
PEER_FASTMCP_STAMP := $(PEER_FASTMCP)/.installed
PEER_TS := tests/peers/ts
PEER_TS_STAMP := $(PEER_TS)/node_modules/.installed

.PHONY: peers clean-peers

$(PEER_MCP_STAMP): tests/peers/requirements-mcp.txt
	mkdir -p $(PEERS_DIR)
	printf '*\n' > $(PEERS_DIR)/.gitignore
	rm -rf $(PEER_MCP)
	$(PY) -m venv $(PEER_MCP)
	$(PEER_MCP)/bin/python -m pip install -q --disable-pip-version-check -r tests/peers/requirements-mcp.txt
	sha256sum tests/peers/requirements-mcp.txt | cut -d' ' -f1 > $@

$(PEER_FASTMCP_STAMP): bench/requirements-fastmcp.txt
	mkdir -p $(PEERS_DIR)
	printf '*\n' > $(PEERS_DIR)/.gitignore
	rm -rf $(PEER_FASTMCP)
	$(PY) -m venv $(PEER_FASTMCP)
	$(PEER_FASTMCP)/bin/python -m pip install -q --disable-pip-version-check -r bench/requirements-fastmcp.txt
	sha256sum bench/requirements-fastmcp.txt | cut -d' ' -f1 > $@

$(PEER_TS_STAMP): $(PEER_TS)/package-lock.json $(STAMP_NODE)
	cd $(PEER_TS) && PATH=$(NODE22_BIN):$$PATH npm ci --no-audit --no-fund --loglevel=error
	sha256sum $(PEER_TS)/package-lock.json | cut -d' ' -f1 > $@

peers: $(PEER_MCP_STAMP) $(PEER_FASTMCP_STAMP) $(PEER_TS_STAMP)

clean-peers:
	rm -rf $(PEERS_DIR) $(PEER_TS)/node_modules
