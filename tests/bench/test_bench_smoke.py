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
#: The in-process figures of one tools/call that asks nothing (bench/micro.py, bench/report.py).
ASGI_CALL = "one tools/call that asks nothing, through the ASGI app in process"
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
        [sys.executable, str(RUN), "--smoke", "--servers", "mcp-elicit,flat,floor", "--out", str(out)],
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
    assert {"mcp-elicit", "flat", "floor"} <= set(result["runs"])
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


def test_the_calibration_curve_is_measured_and_reported(smoke: tuple[dict, str]) -> None:
    result, page = smoke
    assert result["settings"]["calibration_us"] == [20.0]
    cal = result["calibration"]
    (level,) = cal["levels"]
    assert level["work_us"] == 20.0
    assert level["cpu_us_per_round"]["n"] == 1 and level["cpu_us_per_round"]["median"] > 0
    assert math.isfinite(level["times_floor"]) and level["rounds_16_per_s"]["median"] > 0
    for app in ("mcp-elicit", "flat", "floor"):
        assert (
            result["micro"][f"one round through the ASGI app in process (call + retry), {app}"]["median"] > 0
        )
    assert math.isfinite(cal["elicit_work_us"]) and math.isfinite(cal["floor_with_elicit_work_us_per_round"])
    assert "## Calibration: the floor doing plain Python work" in page and "| 20 µs |" in page
    assert cal["flat_cpu_us_per_round"] > 0 and "The flat reference" in page
    for app in ("mcp-elicit", "floor"):
        assert result["micro"][f"{ASGI_CALL}, {app}"]["median"] > 0
    for layer in ("entered at Server.respond", "entered at Server.handle"):
        (label,) = [k for k in result["micro"] if layer in k]
        assert result["micro"][label]["median"] > 0 and f"| {label} |" in page
    assert cal["plain_call_work_us"] > 0 and "A `tools/call` of a tool that asks nothing does" in page


@pytest.mark.anyio
async def test_the_flat_reference_refuses_what_it_does_not_expect() -> None:
    """The reference does the checks it claims: a request outside its one workload is
    refused with a JSON-RPC error, not answered (in process, through its ASGI app)."""
    import httpx

    sys.path.insert(0, str(ROOT / "bench" / "servers"))
    import flat

    meta = {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}},
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
    }
    head = {
        "content-type": "application/json",
        "accept": "application/json",
        "mcp-protocol-version": "2026-07-28",
    }

    def call(params: dict, **headers: str) -> tuple[dict, dict[str, str]]:
        body = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {**params, "_meta": meta}}
        return body, {**head, "mcp-method": "tools/call", "mcp-name": "provision", **headers}

    good = {"name": "provision", "arguments": {"name": "web-1"}}
    transport = httpx.ASGITransport(app=flat.app)
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:8000") as http:
        body, headers = call(good)
        first = (await http.post("/mcp", json=body, headers=headers)).json()["result"]
        state = first["requestState"]
        accepted = {"elicit-1": {"action": "accept", "content": {"region": "eu-west-1"}}}
        body, headers = call({**good, "inputResponses": accepted, "requestState": state})
        final = (await http.post("/mcp", json=body, headers=headers)).json()["result"]
        assert final["content"][0]["text"] == "Provisioned web-1 in eu-west-1"
        refused = [
            call({**good, "arguments": {"name": "web-2"}, "inputResponses": accepted, "requestState": state}),
            call({**good, "inputResponses": accepted, "requestState": state[:-4] + "AAAA"}),
            call(
                {
                    **good,
                    "inputResponses": {"elicit-1": {"action": "accept", "content": {"region": 1}}},
                    "requestState": state,
                }
            ),
            call({**good, "inputResponses": {"elicit-1": {"action": "decline"}}, "requestState": state}),
            call(good, **{"mcp-name": "other"}),
            call(good, host="evil.example:8000"),
            call(good, **{"mcp-protocol-version": "2025-11-25"}),
            call({"name": "provision", "arguments": {"name": 5}}),
        ]
        for body, headers in refused:
            answer = (await http.post("/mcp", json=body, headers=headers)).json()
            assert "error" in answer and "result" not in answer, (body, answer)


def test_the_calibration_curve_is_read_by_linear_interpolation() -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import report_calibration as report
    finally:
        sys.path.remove(str(ROOT / "bench"))

    def run(cpu: float) -> dict:
        return {"rounds@16": {"server_cpu_us_per_op": cpu, "per_s": 1e6 / cpu}}

    summary = {
        "floor": {"cpu_us_per_round": {"median": 50.0}},
        "mcp-elicit": {"cpu_us_per_round": {"median": 200.0}},
    }
    label = report.ASGI_ROUND
    micro = {f"{label}, mcp-elicit": {"median": 110.0}, f"{label}, floor": {"median": 10.0}}
    micro |= {f"{ASGI_CALL}, mcp-elicit": {"median": 24.0}, f"{ASGI_CALL}, floor": {"median": 3.0}}
    runs = {"10": [run(70.0), run(80.0), run(75.0)], "20": [run(110.0)], "40": [run(170.0)]}
    cal = report.calibration_summary(runs, summary, micro)
    assert [lv["work_us"] for lv in cal["levels"]] == [10.0, 20.0, 40.0]
    assert cal["levels"][0]["cpu_us_per_round"]["median"] == 75.0
    assert cal["levels"][0]["beyond_work_us"] == pytest.approx(75 - 50 - 20)
    # 2x the floor is 100 us: between (10, 75) and (20, 110)
    assert cal["work_at_2x_us"] == pytest.approx(10 + 10 * 25 / 35)
    assert cal["elicit_work_us"] == pytest.approx(50.0)
    # past the last point: the last segment extended, (20, 110) -> (40, 170), 3 us per us
    assert cal["floor_with_elicit_work_us_per_round"] == pytest.approx(170 + 3 * 10)
    assert cal["extrapolated"] is True
    page = "\n".join(report.render_calibration(cal))
    assert "reached at about 17 µs of work per request" in page
    assert cal["plain_call_work_us"] == pytest.approx(21.0)
    assert "asks nothing does 21 µs of work in process" in page
    assert report.calibration_summary({}, summary, micro) == {}


def test_the_connection_test_ran_and_is_reported(smoke: tuple[dict, str]) -> None:
    result, page = smoke
    connection = result["connection"]
    assert connection["runs"] == 1
    samples = connection["samples_s"]
    for key in ("check", "server", "help", "python"):
        assert len(samples[key]) == 1 and samples[key][0] > 0, key
    summary = connection["summary"]
    assert math.isfinite(summary["share_ms"]["check"]["median"])
    assert connection["import_profiles"]["check"]["total_ms"] > 0
    assert "## Connection test" in page and "| `mcp-elicit check` (A) |" in page
    names = {t["target"] for t in result["targets"]}
    if "sdk" in samples:  # the SDK's env is built: the comparison and its target are there too
        assert math.isfinite(summary["ratio"])
        assert connection["import_profiles"]["sdk"]["total_ms"] > 0
        assert "connection test: mcp-elicit check's own share vs the SDK client's" in names


def test_connection_shares_are_paired_run_by_run() -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import report_connection
    finally:
        sys.path.remove(str(ROOT / "bench"))
    raw = {"samples_s": {"check": [1.0, 2.0, 1.5], "sdk": [2.0, 2.6, 2.1], "server": [0.5, 1.5, 0.9]}}
    summary = report_connection.connection_summary(raw)
    assert summary["share_ms"]["check"]["median"] == pytest.approx(500)
    assert summary["share_ms"]["sdk"]["median"] == pytest.approx(1200)
    assert summary["ratio"] == pytest.approx(500 / 1200)
    target = report_connection.connection_targets({**raw, "summary": summary})[0]
    assert target["met"] and target["bound"] == 0.5


def test_import_times_add_up_by_package() -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import connection
    finally:
        sys.path.remove(str(ROOT / "bench"))
    lines = [
        "import time: self [us] | cumulative | imported package",
        "import time:       100 |        100 |   pydantic.version",
        "import time:       300 |        400 | pydantic",
        "import time:      1000 |       1000 | mcp_types",
        "something else on stderr",
    ]
    profile = connection.summarize_importtime(lines)
    assert profile["total_ms"] == pytest.approx(1.4)
    assert profile["modules"] == 3
    assert profile["by_package"] == [{"package": "mcp_types", "ms": 1.0}, {"package": "pydantic", "ms": 0.4}]


def test_the_generator_kept_awake_turns_its_loop_and_still_checks_every_round() -> None:
    sys.path.insert(0, str(ROOT / "bench"))
    try:
        import harness
        import run
    finally:
        sys.path.remove(str(ROOT / "bench"))
    floor = next(spec for spec in run.SERVERS if spec.name == "floor")
    with harness.serve(floor, harness.Cores(None, None)) as server:
        figures = []
        for extra in ([], ["--keep-awake"]):
            cmd = [sys.executable, str(harness.LOADGEN), "--port", str(server.port), "--clients", "2"]
            cmd += ["--warmup", "0.1", "--duration", "0.3", "--server-pid", str(server.pid), *extra]
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
            assert done.returncode == 0, done.stderr[-2000:]
            figures.append(json.loads(done.stdout))
    asleep, awake = figures
    for one in figures:
        assert one["errors"] == 0 and one["completed"] > 0, one["error_samples"]
    assert asleep["loadgen_spins"] == 0
    assert awake["loadgen_spins"] > awake["completed"]
