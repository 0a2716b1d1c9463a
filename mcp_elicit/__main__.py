"""``python -m mcp_elicit``: the command line."""

from mcp_elicit.cli.main import main

raise SystemExit(main())
