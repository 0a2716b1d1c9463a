# Peers for the interop tests: the official Python SDK (mcp 2.3.0) in its OWN virtualenv,
# never in .venv (the runtime must never import mcp). Include from the Makefile:
#   include mk/peers.mk
# `make peers` builds it; the interop tests build it too when missing (and skip, saying
# why, when it cannot be built, e.g. offline).
PEERS_DIR := tests/.peers
PEER_MCP := $(PEERS_DIR)/mcp
PEER_MCP_STAMP := $(PEER_MCP)/.installed

.PHONY: peers clean-peers

$(PEER_MCP_STAMP): tests/peers/requirements-mcp.txt
	mkdir -p $(PEERS_DIR)
	printf '*\n' > $(PEERS_DIR)/.gitignore
	rm -rf $(PEER_MCP)
	$(PY) -m venv $(PEER_MCP)
	$(PEER_MCP)/bin/python -m pip install -q --disable-pip-version-check -r tests/peers/requirements-mcp.txt
	sha256sum tests/peers/requirements-mcp.txt | cut -d' ' -f1 > $@

peers: $(PEER_MCP_STAMP)

clean-peers:
	rm -rf $(PEERS_DIR)
