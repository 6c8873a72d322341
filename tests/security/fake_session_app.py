"""Stands in for the wizard process textual-serve starts per browser session.

It speaks just enough of textual-serve's pipe protocol: the ``__GANGLION__`` prelude, then
length-prefixed packets on stdin, and it exits on the ``quit`` meta packet (as the wizard
does when its websocket closes). Cheap to start, so the session-cap tests stay fast.

When ``AICR_FAKE_SESSION_LOG`` names a file, it appends one JSON line per event there: the
terminal size it was started with (``COLUMNS``/``ROWS``, as the wizard's web driver reads
them), each meta packet, and the size of each stdin data packet, so a test can see exactly
what the server passed on.
"""

from __future__ import annotations

import json
import os
import sys


def main() -> None:
    log_path = os.environ.get("AICR_FAKE_SESSION_LOG")

    def log(event: dict[str, object]) -> None:
        if log_path:
            with open(log_path, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(event) + "\n")

    log({"start": {"columns": os.environ.get("COLUMNS"), "rows": os.environ.get("ROWS")}})
    out = sys.stdout.buffer
    out.write(b"__GANGLION__\n")
    out.flush()
    stdin = sys.stdin.buffer
    while True:
        kind = stdin.read(1)
        if not kind:
            log({"eof": True})
            return
        size = int.from_bytes(stdin.read(4), "big")
        payload = stdin.read(size)
        if kind == b"M":
            meta = json.loads(payload)
            log({"meta": meta})
            if meta.get("type") == "quit":
                return
        else:
            log({"data": len(payload)})


if __name__ == "__main__":
    main()
