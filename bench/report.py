"""From raw measurements to figures, ratios, targets and the results page.

Every figure is the median over the interleaved runs, shown with its min and max. A ratio
is a server's median divided by mcp-elicit's median from the same invocation. Targets
are the issue's, each with the measured value, the bound and the margin.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

DASH = "\u2013"  # an en dash, for ranges
TIMES = "\u00d7"  # a multiplication sign, for ratios
ELICIT = "mcp-elicit"
FLOOR = "floor"
#: The hand-flattened reference server (a reference point, not a peer).
FLAT = "flat"


@dataclass(frozen=True)
class Metric:
    key: str
    title: str
    unit: str
    higher_is_better: bool
    digits: int


METRICS = (
    Metric("rounds_1_per_s", "rounds/s @1", "/s", True, 0),
    Metric("rounds_1_p50_ms", "p50 @1", "ms", False, 2),
    Metric("rounds_1_p99_ms", "p99 @1", "ms", False, 2),
    Metric("rounds_16_per_s", "rounds/s @16", "/s", True, 0),
    Metric("rounds_16_p50_ms", "p50 @16", "ms", False, 2),
    Metric("rounds_16_p99_ms", "p99 @16", "ms", False, 2),
    Metric("list_16_per_s", "tools/list/s @16", "/s", True, 0),
    Metric("cpu_us_per_round", "CPU µs/round", "µs", False, 0),
    Metric("rss_mib", "RSS MiB", "MiB", False, 1),
)
EXTRA = ("cpu_us_per_round_1", "cpu_us_per_list", "loadgen_busy_16", "other_busy_16")


def figures_of(run: Mapping[str, Any]) -> dict[str, float]:
    """The headline figures of one server in one run."""
    r1, r16, ls = run["rounds@1"], run["rounds@16"], run["list@16"]
    return {
        "rounds_1_per_s": r1["per_s"],
        "rounds_1_p50_ms": r1["p50_ms"],
        "rounds_1_p99_ms": r1["p99_ms"],
        "rounds_16_per_s": r16["per_s"],
        "rounds_16_p50_ms": r16["p50_ms"],
        "rounds_16_p99_ms": r16["p99_ms"],
        "list_16_per_s": ls["per_s"],
        "cpu_us_per_round": r16["server_cpu_us_per_op"],
        "rss_mib": run["rss_kib"] / 1024,
        "cpu_us_per_round_1": r1["server_cpu_us_per_op"],
        "cpu_us_per_list": ls["server_cpu_us_per_op"],
        "loadgen_busy_16": r16["loadgen_busy"],
        "other_busy_16": r16["other_busy"],
    }


def spread(values: Sequence[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values), "n": len(values)}


def summarize(runs: Mapping[str, Sequence[Mapping[str, Any]]]) -> dict[str, dict[str, dict[str, float]]]:
    """Per server, per figure: median, min, max over its runs."""
    out: dict[str, dict[str, dict[str, float]]] = {}
    for name, server_runs in runs.items():
        per_run = [figures_of(r) for r in server_runs]
        if per_run:
            out[name] = {key: spread([f[key] for f in per_run]) for key in per_run[0]}
    return out


def ratios(summary: Mapping[str, Mapping[str, Mapping[str, float]]]) -> dict[str, dict[str, float]]:
    """Each server's median over mcp-elicit's, figure by figure."""
    base = summary.get(ELICIT)
    if base is None:
        return {}
    return {
        name: {
            m.key: figs[m.key]["median"] / base[m.key]["median"] if base[m.key]["median"] else float("nan")
            for m in METRICS
        }
        for name, figs in summary.items()
    }


def _target(name: str, value: float, bound: float, *, at_least: bool, detail: str) -> dict[str, Any]:
    met = value >= bound if at_least else value <= bound
    return {
        "target": name,
        "value": value,
        "bound": bound,
        "at_least": at_least,
        "met": met,
        # > 1 means met with room to spare, < 1 short by that factor.
        "margin": value / bound if at_least else bound / value,
        "detail": detail,
    }


def targets(
    summary: Mapping[str, Mapping[str, Mapping[str, float]]], micro: Mapping[str, Any]
) -> list[dict[str, Any]]:
    """The issue's targets, as far as this run measured them."""
    out: list[dict[str, Any]] = []
    elicit = summary.get(ELICIT)
    if elicit is not None:
        mine = elicit["rounds_16_per_s"]["median"]
        if "sdk-resolver" in summary:
            theirs = summary["sdk-resolver"]["rounds_16_per_s"]["median"]
            out.append(
                _target(
                    "rounds/s @16 vs the SDK's high-level server with its resolver",
                    mine / theirs,
                    5.0,
                    at_least=True,
                    detail=f"{mine:.0f} vs {theirs:.0f} rounds/s",
                )
            )
        sdk = {n: s["rounds_16_per_s"]["median"] for n, s in summary.items() if n.startswith("sdk-")}
        if sdk:
            fastest = max(sdk, key=sdk.__getitem__)
            out.append(
                _target(
                    "rounds/s @16 vs the SDK's fastest variant",
                    mine / sdk[fastest],
                    3.0,
                    at_least=True,
                    detail=f"{mine:.0f} vs {sdk[fastest]:.0f} rounds/s ({fastest})",
                )
            )
            sealed = {n: v for n, v in sdk.items() if "unsealed" not in n}
            if sealed and fastest not in sealed:
                best = max(sealed, key=sealed.__getitem__)
                out.append(
                    _target(
                        "rounds/s @16 vs the SDK's fastest variant that seals its state",
                        mine / sealed[best],
                        3.0,
                        at_least=True,
                        detail=f"{mine:.0f} vs {sealed[best]:.0f} rounds/s ({best})",
                    )
                )
        if FLOOR in summary:
            cpu, floor = elicit["cpu_us_per_round"]["median"], summary[FLOOR]["cpu_us_per_round"]["median"]
            out.append(
                _target(
                    "server CPU per round vs the canned floor",
                    cpu / floor,
                    2.0,
                    at_least=False,
                    detail=f"{cpu:.0f} vs {floor:.0f} µs per round",
                )
            )
    for size in ("200 B", "4 KiB"):
        sealed_us = micro.get(f"requestState seal+open, {size}")
        bare_us = micro.get(f"bare AES-GCM encrypt+decrypt, {size}")
        if sealed_us and bare_us:
            out.append(
                _target(
                    f"requestState seal+open vs bare AES-GCM, {size}",
                    sealed_us["median"] / bare_us["median"],
                    2.0,
                    at_least=False,
                    detail=f"{sealed_us['median']:.2f} vs {bare_us['median']:.2f} µs",
                )
            )
    return out


def _num(value: float, digits: int) -> str:
    if value != value:  # NaN
        return DASH
    if digits == 0:
        return f"{value:,.0f}"
    return f"{value:,.{digits}f}"


def _cell(s: Mapping[str, float], digits: int) -> str:
    return f"{_num(s['median'], digits)} ({_num(s['min'], digits)}{DASH}{_num(s['max'], digits)})"


def _ratio(value: float) -> str:
    return DASH if value != value else f"{value:.2f}{TIMES}"


def _verdict(t: Mapping[str, Any]) -> str:
    if t["met"]:
        return f"met, margin {t['margin']:.2f}"
    over = (1 - t["margin"]) if t["at_least"] else (1 / t["margin"] - 1)
    return f"**missed**, {'short' if t['at_least'] else 'over'} by {over * 100:.0f}%"


def render(result: Mapping[str, Any]) -> str:
    """The Markdown results page for one invocation of ``bench/run.py``."""
    summary = result["summary"]
    specs = result["servers"]
    names = [n for n in specs if n in summary]
    lines: list[str] = []
    add = lines.append
    add(f"# Benchmark results, {result['date']}")
    add("")
    add(
        f"`{result['command']}` on {result['machine']['cpu']} ({result['machine']['cores']} cores), "
        f"Python {result['machine']['python']}, {result['settings']['runs']} interleaved run(s), "
        f"{result['settings']['duration']} s measured after {result['settings']['warmup']} s of warm-up "
        f"per figure; server on core {result['settings']['server_core']}, load generator on core "
        f"{result['settings']['client_core']}, all at nice {result['settings'].get('nice', 0)}. "
        f"Wall time {result['wall_s']:.0f} s."
    )
    add("")
    if result.get("invalid"):
        add(f"**INVALID RUN: {result['invalid']}**")
        add("")
    add(f"Figures: median over the runs (min{DASH}max). Latency is a whole round (call + retry).")
    add("CPU is the server process's own utime+stime per round, at 16 clients.")
    add("")
    add("| server | " + " | ".join(m.title for m in METRICS) + " |")
    add("|---|" + "---:|" * len(METRICS))
    for name in names:
        cells = [_cell(summary[name][m.key], m.digits) for m in METRICS]
        add(f"| {name} | " + " | ".join(cells) + " |")
    add("")
    if result["ratios"]:
        add(f"Each figure divided by mcp-elicit's (same invocation). For rates, below 1{TIMES} means slower")
        add(f"than mcp-elicit; for latency, CPU and memory, above 1{TIMES} means costlier.")
        add("")
        add("| server | " + " | ".join(m.title for m in METRICS) + " |")
        add("|---|" + "---:|" * len(METRICS))
        for name in names:
            add(f"| {name} | " + " | ".join(_ratio(result["ratios"][name][m.key]) for m in METRICS) + " |")
        add("")
    add("Servers:")
    add("")
    for name in names:
        add(f"- **{name}**: {specs[name]['title']}. {specs[name]['note']}".rstrip())
    add("")
    add("## Targets")
    add("")
    add("| target | measured | bound | met | margin | detail |")
    add("|---|---:|---:|:---:|---:|---|")
    for t in result["targets"]:
        bound = ("≥ " if t["at_least"] else "≤ ") + f"{t['bound']:g}{TIMES}"
        verdict = "yes" if t["met"] else "**no**"
        margin = f"{t['margin']:.2f}"
        if not t["met"]:
            margin += (
                f" (short by {(1 - t['margin']) * 100:.0f}%)"
                if t["at_least"]
                else f" (over by {(1 / t['margin'] - 1) * 100:.0f}%)"
            )
        add(f"| {t['target']} | {t['value']:.2f}{TIMES} | {bound} | {verdict} | {margin} | {t['detail']} |")
    add("")
    missed = [t for t in result["targets"] if not t["met"]]
    if missed:
        add(
            "Missed targets: the profile below names what the time goes to; "
            '`docs/benchmarks.md` ("What limits each number") says what stands in the way.'
        )
        add("")
    if result.get("calibration"):
        from report_calibration import render_calibration  # it builds on this module's cells

        lines += render_calibration(result["calibration"])
    add("## Is the load generator the bottleneck?")
    add("")
    lg = result["loadgen_check"]
    if lg:
        add(
            f"Against the canned floor it completes {lg['floor_rounds_16']:,.0f} rounds/s and "
            f"{lg['floor_list_16']:,.0f} tools/list/s at 16 clients, "
            f"{lg['headroom']:.1f}{TIMES} the fastest real server's rounds/s "
            f"({lg['fastest_real']}). Its own CPU use while driving each server "
            "(cores' worth, rounds at 16 clients), and what the rest of the machine used meanwhile:"
        )
        add("")
        add("| server | load generator busy | other processes busy | windows redone for other load |")
        add("|---|---:|---:|---:|")
        for name in names:
            redone = sum(
                figures.get("attempts", 1) - 1
                for run in result["runs"][name]
                for figures in run.values()
                if isinstance(figures, dict)
            )
            add(
                f"| {name} | {summary[name]['loadgen_busy_16']['median']:.2f} "
                f"| {summary[name]['other_busy_16']['median']:.2f} | {redone} |"
            )
        add("")
        add(
            f"A window during which other processes kept more than {result['settings']['max_other_load']} "
            f"cores busy was measured again, up to {result['settings']['attempts']} times, keeping the "
            "quietest."
        )
        add("")
    add(f"## Micro-benchmarks (µs per call, median of repeats, min{DASH}max)")
    add("")
    add("| what | µs |")
    add("|---|---:|")
    for label, s in result["micro"].items():
        add(f"| {label} | {_cell(s, 2)} |")
    for label, s in result.get("micro_sdk", {}).items():
        add(f"| official SDK: {label} | {_cell(s, 2)} |")
    add("")
    if result.get("connection"):
        from report_connection import render_connection  # it builds on this module's cells

        lines += render_connection(result["connection"], result["targets"])
    profiles = result.get("profiles", {})
    if profiles:
        add("## Profiles under load (pyinstrument, 16 clients, share of sampled time)")
        add("")
        add(
            "Self time is spent in the function itself, C functions it calls included; `run "
            "(asyncio/runners.py)` is the event loop's own C code (uvloop: I/O, scheduling) plus "
            "whatever idle time there was."
        )
        add("")
        for name, prof in profiles.items():
            if "error" in prof:
                add(f"### {name}: not profiled ({prof['error']})")
                add("")
                continue
            add(
                f"### {name} ({prof['samples'] / 1e6:.1f} s sampled; "
                f"{prof['rounds_per_s_while_profiled']:,.0f} rounds/s while profiled; other load "
                f"{prof.get('other_busy', float('nan')):.2f} cores)"
            )
            add("")
            add(
                "Self time by package: "
                + ", ".join(f"{p['function']} {p['percent']:.1f}%" for p in prof["by_package"][:10])
            )
            add("")
            add("| self % | function |")
            add("|---:|---|")
            for p in prof["self"][:15]:
                add(f"| {p['percent']:.1f} | `{p['function']}` |")
            add("")
            package = specs[name]["package"]
            own = [p for p in prof["inclusive"] if f"({package}/" in p["function"]]
            if own:
                add(f"| inclusive % | {package} function |")
                add("|---:|---|")
                for p in own[:25]:
                    add(f"| {p['percent']:.1f} | `{p['function']}` |")
                add("")
    add("## Versions")
    add("")
    rev = result.get("revision", {})
    if rev:
        dirty = rev.get("uncommitted", [])
        add(
            f"- mcp-elicit: commit {rev.get('commit', '?')}"
            + (
                f", with uncommitted changes to {len(dirty)} paths under mcp_elicit/ (listed in the JSON)"
                if dirty
                else ""
            )
        )
    for env, versions in result["versions"].items():
        add(f"- {env}: " + ", ".join(f"{k} {v}" for k, v in sorted(versions.items())))
    add("")
    return "\n".join(lines)
