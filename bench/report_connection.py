"""The connection test's part of the results page: ``mcp-elicit check`` next to the SDK's
client (``bench/connection.py``), its figures, its target and its section."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from report import DASH, TIMES, _cell, _target, _verdict, spread

CONNECTION_TARGET = "connection test: mcp-elicit check's own share vs the SDK client's"


def connection_summary(conn: Mapping[str, Any]) -> dict[str, Any]:
    """Wall times (ms) per command, each client's own share (its total minus the server's
    start, run by run) and the ratio of the shares' medians."""
    samples = conn["samples_s"]
    out: dict[str, Any] = {
        "wall_ms": {key: spread([s * 1000 for s in values]) for key, values in samples.items() if values},
        "share_ms": {},
    }
    server = samples.get("server")
    for key in ("check", "sdk"):
        if samples.get(key) and server:
            out["share_ms"][key] = spread([(a - c) * 1000 for a, c in zip(samples[key], server, strict=True)])
    shares = out["share_ms"]
    if "check" in shares and "sdk" in shares and shares["sdk"]["median"] > 0:
        out["ratio"] = shares["check"]["median"] / shares["sdk"]["median"]
    return out


def connection_targets(conn: Mapping[str, Any]) -> list[dict[str, Any]]:
    summary = conn.get("summary", {})
    if "ratio" not in summary:
        return []
    wall, share = summary["wall_ms"], summary["share_ms"]
    return [
        _target(
            CONNECTION_TARGET,
            summary["ratio"],
            0.5,
            at_least=False,
            detail=(
                f"{share['check']['median']:.0f} vs {share['sdk']['median']:.0f} ms "
                f"(totals {wall['check']['median']:.0f} vs {wall['sdk']['median']:.0f} ms, "
                f"the server's start {wall['server']['median']:.0f} ms)"
            ),
        )
    ]


# ---- the page ------------------------------------------------------------------------


def _share_parts(whose: str, own: float, python: float, start: tuple[str, float], rest: str) -> str:
    """One client's share split into the interpreter, its start-up and the rest."""
    what, started = start
    left = own - started
    tail = (
        f"and {rest} too little to tell from the noise ({left:+.0f} ms)"
        if abs(left) < 20
        else f"the rest, {rest}, about {left:.0f} ms"
    )
    return (
        f"Of {whose} ({own:.0f} ms): starting an interpreter {python:.0f} ms, "
        f"{what} {started - python:.0f} ms, {tail}."
    )


def render_connection(conn: Mapping[str, Any], targets: Sequence[Mapping[str, Any]]) -> list[str]:
    """The "Connection test" section: the table, the ratio against its target, and where
    each client's share goes."""
    summary = conn["summary"]
    wall, share = summary["wall_ms"], summary["share_ms"]
    commands = conn["commands"]
    lines: list[str] = []
    add = lines.append
    add("## Connection test")
    add("")
    cores = conn.get("cpus")
    add(
        f"Wall time from spawning the command to its exit, ms: median of {conn['runs']} interleaved "
        f"run(s) (min{DASH}max), every process free to use "
        + (f"cores {', '.join(map(str, cores))}" if cores else "any core")
        + ". A client's own share is its total minus the server's start (C), run by run."
    )
    add("")
    add("| what | command | wall ms | client's own share, ms |")
    add("|---|---|---:|---:|")
    for key, command in commands.items():
        if key not in wall:
            continue
        own = _cell(share[key], 0) if key in share else ""
        add(f"| {command['title']} | `{command['shown']}` | {_cell(wall[key], 0)} | {own} |")
    add("")
    for t in targets:
        if t["target"] == CONNECTION_TARGET:
            add(
                f"mcp-elicit's share over the SDK client's: **{t['value']:.2f}{TIMES}** "
                f"(target ≤ {t['bound']:g}{TIMES}: {_verdict(t)}); {t['detail']}."
            )
            add("")
    parts = []
    if "check" in share and "help" in wall and "python" in wall:
        parts.append(
            _share_parts(
                "mcp-elicit's share",
                share["check"]["median"],
                wall["python"]["median"],
                ("its imports and argument parsing (`--help` minus the interpreter)", wall["help"]["median"]),
                "the check itself (the server spawned and closed, the exchanges, the tool checks, the report)",
            )
        )
    if "sdk" in share and "sdk-import" in wall and "python" in wall:
        parts.append(
            _share_parts(
                "the SDK client's",
                share["sdk"]["median"],
                wall["python"]["median"],
                ("importing `mcp`", wall["sdk-import"]["median"]),
                "its connection, probe, listing and shutdown",
            )
        )
    if parts:
        add(" ".join(parts) + " (Medians of separate commands: the parts add up only roughly.)")
        add("")
    profiles = conn.get("import_profiles", {})
    if profiles:
        keys = [k for k in ("check", "sdk") if k in profiles]
        packages: list[str] = []
        for k in keys:
            packages += [p["package"] for p in profiles[k]["by_package"] if p["package"] not in packages]
        ms = {k: {p["package"]: p["ms"] for p in profiles[k]["by_package"]} for k in keys}
        add(
            "Import time by top-level package, one run of each client under `python -X importtime` "
            "(which slows imports down: read it as shares), ms:"
        )
        add("")
        add("| package | " + " | ".join(commands[k]["title"] for k in keys) + " |")
        add("|---|" + "---:|" * len(keys))
        add(
            "| all imports | "
            + " | ".join(f"{profiles[k]['total_ms']:,.0f} ({profiles[k]['modules']} modules)" for k in keys)
            + " |"
        )
        for package in packages:
            add(
                f"| {package} | "
                + " | ".join(f"{ms[k][package]:,.0f}" if package in ms[k] else "" for k in keys)
                + " |"
            )
        add("")
    return lines
