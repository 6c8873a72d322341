"""A proxy that never forwards: tests point every proxy variable at it, so any network
fetch a subprocess attempts fails at once, and is counted."""

from __future__ import annotations

import socket
import threading
from pathlib import Path


class DeadProxy:
    """A loopback listener that accepts, records and closes every connection: a proxy that
    never forwards anything."""

    def __init__(self) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            conn.close()

    def env(self, home: Path) -> dict[str, str]:
        proxy = f"http://127.0.0.1:{self.port}"
        return {
            "HTTPS_PROXY": proxy,
            "https_proxy": proxy,
            "HTTP_PROXY": proxy,
            "http_proxy": proxy,
            "NO_PROXY": "",
            "no_proxy": "",
            "HELM_CACHE_HOME": str(home / "cache"),
            "HELM_CONFIG_HOME": str(home / "config"),
            "HELM_DATA_HOME": str(home / "data"),
        }

    def close(self) -> None:
        self.sock.close()
