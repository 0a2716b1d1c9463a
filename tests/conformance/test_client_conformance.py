"""The official conformance suite's client leg against examples/conformance_client.py.

One harness run per requirement set (its scenarios run in parallel), strict: the
expected-failures baseline is empty, so any failure of a scored scenario, and any WARNING,
fails the run; and each scored scenario is judged again from its checks.json, where
WARNING counts as failure. The authorization (``auth/*``) scenarios are among them.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from conformance import harness

pytestmark = [pytest.mark.conformance, pytest.mark.slow, pytest.mark.xdist_group("conformance")]

CLIENT = harness.ROOT / "examples" / "conformance_client.py"

#: The scored client scenarios other than authorization, per requirement set.
NON_AUTH = {
    "2026-07-28": [
        "tools_call",
        "request-metadata",
        "sep-2322-client-request-state",
        "http-standard-headers",
        "http-custom-headers",
        "http-invalid-tool-headers",
        "json-schema-ref-no-deref",
    ],
    "2025-11-25": ["initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry"],
}
#: How many authorization scenarios each set scores (metadata discovery, CIMD, scopes and
#: step-up, token endpoint authentication, pre-registration; 2026-07-28 adds resource and
#: issuer checks, offline access and a change of authorization server).
AUTH_COUNT = {"2026-07-28": 25, "2025-11-25": 14}
#: Not scored (the authorization extensions: client credentials, DPoP, workload identity
#: federation, enterprise-managed authorization) but supported: they must pass too. (The
#: official Python SDK fails the DPoP and workload identity scenarios.)
EXTENSIONS = [
    "auth/client-credentials-basic",
    "auth/client-credentials-jwt",
    "auth/dpop",
    "auth/dpop-nonce",
    "auth/wif-jwt-bearer",
    "auth/enterprise-managed-authorization",
]


@pytest.mark.parametrize("revision", sorted(NON_AUTH))
def test_every_scored_client_scenario_passes(revision: str, tmp_path: Path) -> None:
    harness.require_harness()
    scored = harness.scored("client", revision)
    auth = [name for name in scored if name.startswith("auth/")]
    assert sorted(set(scored) - set(auth)) == sorted(NON_AUTH[revision]), "the harness scores another set"
    assert len(auth) == AUTH_COUNT[revision], auth
    baseline = tmp_path / "expected-failures.yml"
    baseline.write_text("server: []\nclient: []\n")
    out = tmp_path / "results"
    proc = harness.run(
        "client",
        "--command",
        f"{sys.executable} {CLIENT}",
        "--requirements",
        revision,
        "--expected-failures",
        str(baseline),
        "--timeout",
        "90000",
        "-o",
        str(out),
    )
    outcome = harness.read_results(out, [*scored, *EXTENSIONS])
    detail = "\n".join(f"{name}: {'; '.join(bad)}" for name, bad in outcome.failed.items())
    assert not outcome.failed, f"{len(outcome.failed)} client scenarios failed at {revision}:\n{detail}"
    assert sorted(outcome.passed) == sorted([*scored, *EXTENSIONS])
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    print(
        f"conformance client {revision}: {len(scored)}/{len(scored)} scored scenarios pass "
        f"(strict), {len(auth)} of them authorization; and the extensions {', '.join(EXTENSIONS)}"
    )


#: Scenarios of servers from the 2025-03-26 revision, which published no protected resource
#: metadata. The suite leaves them out of every requirement set above (they were removed in
#: 2025-06-18), but the client still negotiates 2025-03-26, so each is run by name.
LEGACY_AUTH = ["auth/2025-03-26-oauth-metadata-backcompat", "auth/2025-03-26-oauth-endpoint-fallback"]


@pytest.mark.parametrize("scenario", LEGACY_AUTH)
def test_a_2025_03_26_server_without_resource_metadata_is_signed_in_to(scenario: str, tmp_path: Path) -> None:
    harness.require_harness()
    out = tmp_path / "results"
    proc = harness.run(
        "client",
        "--command",
        f"{sys.executable} {CLIENT}",
        "--scenario",
        scenario,
        "-o",
        str(out),
        timeout=180,
    )
    outcome = harness.read_results(out, [scenario])
    assert outcome.passed == [scenario], f"{outcome.failed}\n{proc.stdout[-3000:]}"
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
