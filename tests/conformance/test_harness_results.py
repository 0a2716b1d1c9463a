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
