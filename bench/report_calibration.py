"""The calibration curve: the canned floor doing plain Python work per request, set against
the work mcp-elicit's application does per request in process (what the CPU target needs).
Builds on ``report``'s cells, as ``report_connection`` does."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import Any

from report import ELICIT, FLAT, FLOOR, TIMES, _cell, spread

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
