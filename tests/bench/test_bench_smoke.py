"""The benchmark harness runs end to end at a tiny size and writes well-formed results.

No timing is asserted: only that rounds completed without errors and that every figure
the results page promises is present. Real processes, real sockets on 127.0.0.1.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RUN = ROOT / "bench" / "run.py"
FIGURES = (
    "rounds_1_per_s",
    "rounds_1_p50_ms",
    "rounds_1_p99_ms",
    "rounds_16_per_s",
    "rounds_16_p50_ms",
    "rounds_16_p99_ms",
    "list_16_per_s",
    "cpu_us_per_round",
    "rss_mib",
)


@pytest.fixture(scope="module")
def smoke(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, str]:
    out = tmp_path_factory.mktemp("bench")
    done = subprocess.run(
        [sys.executable, str(RUN), "--smoke", "--servers", "mcp-elicit,floor", "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads((out / "smoke.json").read_text()), (out / "smoke.md").read_text()


def test_every_server_completed_rounds_without_errors(smoke: tuple[dict, str]) -> None:
    result, _ = smoke
    assert result["invalid"] == ""
    assert {"mcp-elicit", "floor"} <= set(result["runs"])
    for name, runs in result["runs"].items():
        assert len(runs) == 1, name
        for key in ("rounds@1", "rounds@16", "list@16"):
            figures = runs[0][key]
            assert figures["errors"] == 0, (name, key, figures["error_samples"])
            assert figures["completed"] > 0, (name, key)
            assert figures["server_cpu_s"] is not None


def test_every_figure_is_present_and_finite(smoke: tuple[dict, str]) -> None:
    result, _ = smoke
    for name, figures in result["summary"].items():
        for key in FIGURES:
            spread = figures[key]
            assert {"median", "min", "max"} <= set(spread), (name, key)
            assert math.isfinite(spread["median"]) and spread["median"] >= 0, (name, key)
        assert math.isfinite(result["ratios"][name]["rounds_16_per_s"])
    assert result["ratios"]["mcp-elicit"]["rounds_16_per_s"] == 1.0


def test_micro_benchmarks_and_targets_are_reported(smoke: tuple[dict, str]) -> None:
    result, page = smoke
    for label in (
        "requestState seal+open, 200 B",
        "bare AES-GCM encrypt+decrypt, 200 B",
        "requestState seal+open, 4 KiB",
        "bare AES-GCM encrypt+decrypt, 4 KiB",
        "tools/call decode + check (the retry, 2026-07-28)",
        "form answer validation",
    ):
        assert result["micro"][label]["median"] > 0, label
    names = {t["target"] for t in result["targets"]}
    assert "server CPU per round vs the canned floor" in names
    assert "requestState seal+open vs bare AES-GCM, 4 KiB" in names
    assert result["loadgen_check"]["floor_rounds_16"] > 0
    assert "| mcp-elicit |" in page and "## Targets" in page
