"""One concept per module: no module of the package (Python, or the web answerer's
script) runs past 500 lines, and half of them stay under 250. A module that needs more
is split by concept, not squeezed; this test names every one over the bound."""

from __future__ import annotations

import statistics
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "mcp_elicit"
MOST_LINES = 500
MEDIAN_UNDER = 250


def _sizes() -> dict[str, int]:
    paths = [*PACKAGE.rglob("*.py"), *PACKAGE.rglob("*.js")]
    return {
        str(path.relative_to(PACKAGE)): len(path.read_text(encoding="utf-8").splitlines()) for path in paths
    }


def test_no_module_is_over_the_bound() -> None:
    over = {name: size for name, size in _sizes().items() if size > MOST_LINES}
    assert not over, f"modules over {MOST_LINES} lines (split them by concept): {over}"


def test_most_modules_are_short() -> None:
    sizes = _sizes()
    assert len(sizes) > 100  # the whole package was read, not a stray directory
    assert statistics.median(sizes.values()) < MEDIAN_UNDER
