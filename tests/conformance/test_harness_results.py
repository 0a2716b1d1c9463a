"""How the harness reads the suite's checks: a check left at WARNING with no message of
its own still says what it saw, so a failure seen once can be understood afterwards."""

from __future__ import annotations

import json
from pathlib import Path

from conformance import harness


def test_a_warning_with_no_message_is_reported_with_its_details(tmp_path: Path) -> None:
    scenario = tmp_path / "request-metadata-2026-12-06T00-00-00"
    scenario.mkdir()
    checks = [
        {"id": "sep-2575-client-populates-meta", "status": "SUCCESS"},
        {
            "id": "sep-2575-client-retry-supported-version",
            "status": "WARNING",
            "details": {"headerVersion": "2026-07-28", "retryHeaderVersion": None},
        },
    ]
    (scenario / "checks.json").write_text(json.dumps(checks))
    outcome = harness.read_results(tmp_path, ["request-metadata"])
    assert outcome.passed == []
    [line] = outcome.failed["request-metadata"]
    assert line.startswith("sep-2575-client-retry-supported-version WARNING: ")
    assert '"retryHeaderVersion": null' in line and '"headerVersion": "2026-07-28"' in line


def test_a_message_of_its_own_is_reported_as_written(tmp_path: Path) -> None:
    scenario = tmp_path / "tools_call-2026-12-06T00-00-00"
    scenario.mkdir()
    checks = [
        {"id": "tool-add-numbers", "status": "FAILURE", "errorMessage": "not called", "details": {"x": 1}}
    ]
    (scenario / "checks.json").write_text(json.dumps(checks))
    outcome = harness.read_results(tmp_path, ["tools_call"])
    assert outcome.failed == {"tools_call": ["tool-add-numbers FAILURE: not called"]}


def test_a_failed_scenario_brings_the_end_of_its_programs_stderr(tmp_path: Path) -> None:
    scenario = tmp_path / "auth" / "basic-cimd-2026-12-07T00-00-00"
    scenario.mkdir(parents=True)
    checks = [{"id": "cimd-client-id-used", "status": "FAILURE", "details": None}]
    (scenario / "checks.json").write_text(json.dumps(checks))
    (scenario / "stderr.txt").write_text("".join(f"line {n}\n" for n in range(30)) + "\n")
    passed = tmp_path / "tools_call-2026-12-07T00-00-00"
    passed.mkdir()
    (passed / "checks.json").write_text(json.dumps([{"id": "tool-add-numbers", "status": "SUCCESS"}]))
    (passed / "stderr.txt").write_text("noise of a scenario that passed\n")
    outcome = harness.read_results(tmp_path, ["auth/basic-cimd", "tools_call"])
    assert outcome.passed == ["tools_call"]
    first, tail = outcome.failed["auth/basic-cimd"]
    assert first == "cimd-client-id-used FAILURE: null"
    assert tail.startswith("its stderr ended with:\n")
    assert "line 29" in tail and "line 18" in tail and "line 17" not in tail


def test_a_failed_scenario_with_nothing_on_stderr_adds_nothing(tmp_path: Path) -> None:
    scenario = tmp_path / "tools_call-2026-12-07T00-00-00"
    scenario.mkdir()
    (scenario / "checks.json").write_text(
        json.dumps([{"id": "t", "status": "FAILURE", "errorMessage": "no"}])
    )
    (scenario / "stderr.txt").write_text("\n")
    assert harness.read_results(tmp_path, ["tools_call"]).failed == {"tools_call": ["t FAILURE: no"]}
