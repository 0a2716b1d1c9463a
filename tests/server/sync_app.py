"""A server for the stdio tests of sync handlers: a plain function that blocks reading a FIFO
(until the test writes to it and closes it, or for good), and quick ones."""

from __future__ import annotations

import threading

from mcp_elicit import Server

app = Server("sync")
read: list[str] = []
finished = threading.Event()


@app.tool(description="Reads the FIFO at path to its end (blocks until a writer closes it)")
def read_fifo(path: str) -> str:
    with open(path, encoding="utf-8") as fifo:
        data = fifo.read()
    read.append(data)
    finished.set()
    return data


@app.tool(description="What read_fifo read, once it finished (waits for it, at most 10 s)")
def read_fifo_done() -> str:
    return " | ".join(read) if finished.wait(10) else "not finished"


@app.tool(description="Echoes its argument")
def echo(text: str) -> str:
    return text
