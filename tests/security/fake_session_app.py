"""Stands in for the wizard process textual-serve starts per browser session.

It speaks just enough of textual-serve's pipe protocol: the ``__GANGLION__`` prelude, then
length-prefixed packets on stdin, and it exits on the ``quit`` meta packet (as the wizard
does when its websocket closes). Cheap to start, so the session-cap tests stay fast.
"""

from __future__ import annotations

import json
import sys


def main() -> None:
    out = sys.stdout.buffer
    out.write(b"__GANGLION__\n")
    out.flush()
    stdin = sys.stdin.buffer
    while True:
        kind = stdin.read(1)
        if not kind:
            return
        size = int.from_bytes(stdin.read(4), "big")
        payload = stdin.read(size)
        if kind == b"M" and json.loads(payload).get("type") == "quit":
            return


if __name__ == "__main__":
    main()
