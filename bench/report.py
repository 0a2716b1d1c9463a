"""From raw measurements to figures, ratios, targets and the results page.

Every figure is the median over the interleaved runs, shown with its min and max. A ratio
is a server's median divided by mcp-elicit's median from the same invocation. Targets
are the issue's, each with the measured value, the bound and the margin.
"""

from __future__ import annotations

import itertools
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


#: The in-process round figures of ``micro.py``; ", mcp-elicit" or ", floor" follows.
ASGI_ROUND = "one round through the ASGI app in process (call + retry)"
#: The in-process figures of one tools/call that asks nothing (``micro.ASGI_CALL``).
ASGI_CALL = "one tools/call that asks nothing, through the ASGI app in process"


def _interpolate(points: Sequence[tuple[float, float]], x: float) -> float:
    """Piecewise-linear y at ``x`` through ``points`` (distinct x, sorted), the last segment
    extended past the end."""
    if len(points) < 2:
        return float("nan")
    segments = list(itertools.pairwise(points))
    (x0, y0), (x1, y1) = next((seg for seg in segments if x <= seg[1][0]), segments[-1])
    return y0 + (y1 - y0) * (x - x0) / (x1 - x0)


def _solve(points: Sequence[tuple[float, float]], y: float) -> float | None:
    """The smallest x at which the piecewise-linear curve reaches ``y``; None if it never
    does within the points."""
    for (x0, y0), (x1, y1) in itertools.pairwise(points):
        if y0 <= y <= y1 and y1 != y0:
            return x0 + (x1 - x0) * (y - y0) / (y1 - y0)
    return None


def calibration_summary(
    runs: Mapping[str, Sequence[Mapping[str, Any]]],
    summary: Mapping[str, Mapping[str, Mapping[str, float]]],
    micro: Mapping[str, Any],
) -> dict[str, Any]:
    """The floor's CPU per round as plain Python work is added to each request, against
    the work mcp-elicit's app does per request in process.

    ``runs`` maps the work (µs per request, as text) to its runs (``rounds@16`` only).
    """
    if not runs or FLOOR not in summary:
        return {}
    floor = summary[FLOOR]["cpu_us_per_round"]["median"]
    levels = []
    for work, level_runs in sorted(runs.items(), key=lambda kv: float(kv[0])):
        if not level_runs:
            continue
        cpu = spread([r["rounds@16"]["server_cpu_us_per_op"] for r in level_runs])
        rate = spread([r["rounds@16"]["per_s"] for r in level_runs])
        w = float(work)
        levels.append(
            {
                "work_us": w,
                "cpu_us_per_round": cpu,
                "rounds_16_per_s": rate,
                "times_floor": cpu["median"] / floor,
                # what the stack added beyond the work itself (two requests per round)
                "beyond_work_us": cpu["median"] - floor - 2 * w,
            }
        )
    points = [(0.0, floor)] + [(lv["work_us"], lv["cpu_us_per_round"]["median"]) for lv in levels]
    out: dict[str, Any] = {"floor_cpu_us_per_round": floor, "levels": levels}
    out["work_at_2x_us"] = _solve(points, 2 * floor) if len(points) > 1 else None
    mine, canned = micro.get(f"{ASGI_ROUND}, {ELICIT}"), micro.get(f"{ASGI_ROUND}, {FLOOR}")
    if mine and canned:
        work = (mine["median"] - canned["median"]) / 2
        out["elicit_work_us"] = work
        out["floor_with_elicit_work_us_per_round"] = _interpolate(points, work)
        out["extrapolated"] = work > points[-1][0]
    plain, plain_floor = micro.get(f"{ASGI_CALL}, {ELICIT}"), micro.get(f"{ASGI_CALL}, {FLOOR}")
    if plain and plain_floor:
        out["plain_call_work_us"] = plain["median"] - plain_floor["median"]
    if ELICIT in summary:
        out["elicit_cpu_us_per_round"] = summary[ELICIT]["cpu_us_per_round"]["median"]
    flat = micro.get(f"{ASGI_ROUND}, {FLAT}")
    if FLAT in summary and flat and canned:
        out["flat_work_us"] = (flat["median"] - canned["median"]) / 2
        out["flat_cpu_us_per_round"] = summary[FLAT]["cpu_us_per_round"]["median"]
    return out


def render_calibration(cal: Mapping[str, Any]) -> list[str]:
    """The calibration section of the results page."""
    lines = ["## Calibration: the floor doing plain Python work", ""]
    add = lines.append
    floor = cal["floor_cpu_us_per_round"]
    add(
        "The canned floor again, each request first doing a fixed amount of plain Python work "
        "(building a small dict, repeated; the amount timed alone, like a micro-benchmark), "
        "measured in the same interleaved runs, 16 clients. The second column is what the CPU "
        "target bounds; the last is what the HTTP stack and the kernel added beyond the floor "
        "and the work itself (two requests per round)."
    )
    add("")
    add(f"| work per request | CPU µs/round | {TIMES} floor | rounds/s @16 | added beyond floor + work |")
    add("|---:|---:|---:|---:|---:|")
    add(f"| 0 µs (the floor) | {floor:.0f} | 1.00{TIMES} | | |")
    for lv in cal["levels"]:
        add(
            f"| {lv['work_us']:g} µs | {_cell(lv['cpu_us_per_round'], 0)} | {lv['times_floor']:.2f}{TIMES} "
            f"| {_cell(lv['rounds_16_per_s'], 0)} | {lv['beyond_work_us']:.0f} µs |"
        )
    add("")
    at_2x = cal.get("work_at_2x_us")
    if at_2x is not None:
        sentence = (
            f"The bound of 2{TIMES} the floor ({2 * floor:.0f} µs per round) is reached at about "
            f"{at_2x:.0f} µs of work per request."
        )
    else:
        top = cal["levels"][-1]["work_us"] if cal["levels"] else 0
        sentence = (
            f"The bound of 2{TIMES} the floor was not reached with up to {top:g} µs of work per request."
        )
    work = cal.get("elicit_work_us")
    if work is not None:
        guess = cal["floor_with_elicit_work_us_per_round"]
        sentence += (
            f" mcp-elicit's application does {work:.0f} µs of work per request measured in process "
            f"(`{ASGI_ROUND}`, mcp-elicit minus floor, halved); the floor doing that much would "
            f"cost about {guess:.0f} µs per round ({guess / floor:.2f}{TIMES}"
            + (", extrapolated" if cal.get("extrapolated") else "")
            + ")"
        )
        if "elicit_cpu_us_per_round" in cal:
            sentence += f", against the {cal['elicit_cpu_us_per_round']:.0f} µs mcp-elicit measured."
        else:
            sentence += "."
    if "plain_call_work_us" in cal:
        sentence += (
            f" A `tools/call` of a tool that asks nothing does {cal['plain_call_work_us']:.0f} µs of work "
            f"in process (`{ASGI_CALL}`, mcp-elicit minus floor): the fixed cost of a call, before "
            "any question."
        )
    if "flat_cpu_us_per_round" in cal:
        cpu = cal["flat_cpu_us_per_round"]
        sentence += (
            f" The flat reference (`bench/servers/flat.py`: the same checks and sealing in one "
            f"function, one tool, no framework) does {cal['flat_work_us']:.0f} µs of work per request "
            f"in process and costs {cpu:.0f} µs per round, {cpu / floor:.2f}{TIMES} the floor."
        )
    add(sentence)
    add("")
    return lines


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
