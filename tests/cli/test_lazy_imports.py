"""A stdio ``check`` starts without the HTTP stack and the terminal and web UIs.

What only one command or one kind of TARGET needs is imported where it is used
(``cli.targets``, ``cli.diagnose``, ``cli.call``, ``cli.main``), so that the connection
test over stdio does not pay for httpx (and the rich, click and pygments its command line
pulls in), starlette or prompt_toolkit at start-up. Run in a fresh interpreter: the test
session has imported them all already.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

FAKE = Path(__file__).resolve().parent / "fake_stdio_server.py"
HEAVY = ("httpx", "rich", "click", "pygments", "starlette", "prompt_toolkit")
PROBE = """
import json, sys
from mcp_elicit.cli.main import main
code = main(["check", "--", sys.executable, {fake!r}, "good"])
loaded = sorted({{name.split(".")[0] for name in sys.modules}} & set({heavy!r}))
print(json.dumps({{"code": code, "loaded": loaded}}))
"""


def test_a_stdio_check_imports_no_http_stack_and_no_ui() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(fake=str(FAKE), heavy=HEAVY)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result == {"code": 0, "loaded": []}
