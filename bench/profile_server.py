"""Run one benchmark server under pyinstrument and write where its time went.

``python profile_server.py --tools-site DIR --out FILE -- <uvicorn arguments>``, run
with the server's own interpreter: pyinstrument is imported from the profiler's
environment (``DIR``, appended to ``sys.path``, so nothing is installed into the server's
environment) and uvicorn runs as it does in the benchmark. SIGUSR1 starts sampling (so
that start-up and warm-up stay out), SIGUSR2 stops it and writes the samples to ``FILE``
as collapsed stacks, ``frame;frame;...;leaf weight`` root first, each frame
``function (file:first line)``, the weight in microseconds of self time. pyinstrument
samples in-process (on Python call events), so every stack is whole and consistent;
time spent inside a C function counts as its Python caller's, and time the event loop
spends waiting for the network counts as the loop's (``run``).
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from typing import Any, TextIO


def _where(frame: Any) -> str:
    path = str(frame.file_path_short or "?")
    while path.startswith(("../", "./")):
        path = path.split("/", 1)[1]
    return path if path.startswith("<") else f"{path}:{frame.line_no}"


def write_collapsed(frame: Any, out: TextIO, path: tuple[str, ...] = ()) -> None:
    """Write ``frame``'s subtree as collapsed stacks (self time, in µs).

    pyinstrument's synthetic ``[self]`` leaves hold time already in their parent's
    ``total_self_time``: they are skipped.
    """
    if frame.is_synthetic:
        return
    here = (*path, f"{frame.function} ({_where(frame)})")
    weight = round(frame.total_self_time * 1e6)
    if weight > 0 and here:
        out.write(";".join(here) + f" {weight}\n")
    for child in frame.children:
        write_collapsed(child, out, here)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--tools-site", required=True, help="site-packages holding pyinstrument")
    parser.add_argument("--out", required=True)
    parser.add_argument("--interval", type=float, default=0.0005, help="seconds between samples")
    parser.add_argument("uvicorn_args", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    sys.path.append(args.tools_site)
    from pyinstrument import Profiler
    from uvicorn.main import main as uvicorn_main

    uvicorn_args = [a for a in args.uvicorn_args if a != "--"]
    profiler = Profiler(interval=args.interval, async_mode="disabled")

    def start(signum: int, frame: object) -> None:
        if not profiler.is_running:
            profiler.start()

    def stop(signum: int, frame: object) -> None:
        if not profiler.is_running:
            return
        root = profiler.stop().root_frame()
        with open(args.out + ".part", "w") as out:
            if root is not None:
                write_collapsed(root, out)
        os.replace(args.out + ".part", args.out)

    signal.signal(signal.SIGUSR1, start)
    signal.signal(signal.SIGUSR2, stop)
    uvicorn_main.main(uvicorn_args, standalone_mode=False)
    return 0


if __name__ == "__main__":
    sys.exit(main())
