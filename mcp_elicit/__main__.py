"""``python -m mcp_elicit``: the command line, started as the console script starts it."""

from mcp_elicit.cli.entry import main

raise SystemExit(main())
