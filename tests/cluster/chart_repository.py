"""A loopback stand-in for the upstream chart repositories a bundle installs from.

The generated ``install.sh`` lines name the real upstream locations (``--repo
https://charts.jetstack.io``, ``oci://ghcr.io/nvidia/nvsentinel``). The cluster tier has no
network, so this module answers for those hosts on 127.0.0.1 and the bundle's scripts run
unmodified:

- an HTTPS server (a throwaway CA made with openssl, one leaf certificate naming every
  upstream host) serves, per upstream repository, a classic Helm repository (``index.yaml``
  and the archives) for ``https://`` repositories and the OCI distribution API's read path
  (``/v2/<name>/manifests|blobs|tags``) for ``oci://`` ones, from the vendored archives of
  ``tests/data/charts/archives`` (``repositories.json``, written by ``tests/data/charts/build.py``);
- an HTTP CONNECT proxy tunnels the upstream hosts to that server and refuses any other host.

helm (Go) follows ``HTTPS_PROXY`` and, on Linux, trusts ``SSL_CERT_FILE``; :meth:`env`
returns both (plus ``NO_PROXY`` for the API server on 127.0.0.1). Every request and every
refused CONNECT is recorded, so a test can assert that helm fetched what it installed from
here and tried to reach nothing else.
"""

from __future__ import annotations

import hashlib
import io
import json
import select
import socket
import socketserver
import ssl
import subprocess
import tarfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from tests.conftest import REPO

CHARTS = REPO / "tests" / "data" / "charts" / "archives"
OCI_MANIFEST = "application/vnd.oci.image.manifest.v1+json"
HELM_CONFIG = "application/vnd.cncf.helm.config.v1+json"
HELM_LAYER = "application/vnd.cncf.helm.chart.content.v1.tar+gzip"


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


@dataclass
class Archive:
    path: Path
    data: bytes
    meta: dict[str, Any]

    @property
    def name(self) -> str:
        return str(self.meta["name"])

    @property
    def version(self) -> str:
        return str(self.meta["version"])


def _load(path: Path) -> Archive:
    data = path.read_bytes()
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as tar:
        member = next(
            m for m in tar.getmembers() if m.name.count("/") == 1 and m.name.endswith("/Chart.yaml")
        )
        handle = tar.extractfile(member)
        assert handle is not None
        meta = yaml.safe_load(handle.read())
    return Archive(path, data, meta)


@dataclass
class Repository:
    """One upstream repository URL and the archives it serves."""

    url: str
    archives: list[Archive]

    @property
    def host(self) -> str:
        return urlsplit(self.url).hostname or ""

    @property
    def path(self) -> str:
        return urlsplit(self.url).path.strip("/")

    def index_yaml(self) -> bytes:
        entries: dict[str, list[dict[str, Any]]] = {}
        for a in self.archives:
            entry = dict(a.meta)
            entry.update(
                urls=[a.path.name], digest=_digest(a.data)[7:], created="2026-01-01T00:00:00Z"
            )
            entries.setdefault(a.name, []).append(entry)
        doc = {"apiVersion": "v1", "entries": entries, "generated": "2026-01-01T00:00:00Z"}
        return yaml.safe_dump(doc).encode()


@dataclass
class OciArtifact:
    config: bytes
    layer: bytes
    manifest: bytes

    @classmethod
    def of(cls, archive: Archive) -> OciArtifact:
        config = json.dumps(archive.meta, sort_keys=True).encode()
        manifest = json.dumps(
            {
                "schemaVersion": 2,
                "mediaType": OCI_MANIFEST,
                "config": {
                    "mediaType": HELM_CONFIG,
                    "digest": _digest(config),
                    "size": len(config),
                },
                "layers": [
                    {
                        "mediaType": HELM_LAYER,
                        "digest": _digest(archive.data),
                        "size": len(archive.data),
                    }
                ],
            }
        ).encode()
        return cls(config, archive.data, manifest)


@dataclass
class ChartRepositories:
    """The loopback repositories; :func:`serve` starts them."""

    repositories: list[Repository]
    workdir: Path
    proxy_port: int = 0
    tls_port: int = 0
    requests: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    ca_file: Path = Path()

    @property
    def hosts(self) -> set[str]:
        return {r.host for r in self.repositories}

    def env(self) -> dict[str, str]:
        proxy = f"http://127.0.0.1:{self.proxy_port}"
        return {
            "HTTPS_PROXY": proxy,
            "https_proxy": proxy,
            "HTTP_PROXY": proxy,
            "http_proxy": proxy,
            "NO_PROXY": "127.0.0.1,localhost",
            "no_proxy": "127.0.0.1,localhost",
            "SSL_CERT_FILE": str(self.ca_file),
            # a fresh Helm cache: nothing fetched earlier stands in for this server
            "HELM_CACHE_HOME": str(self.workdir / "helm-cache"),
            "HELM_CONFIG_HOME": str(self.workdir / "helm-config"),
            "HELM_DATA_HOME": str(self.workdir / "helm-data"),
        }

    # ---- HTTP routing ---------------------------------------------------------------------
    def answer(self, host: str, path: str) -> tuple[int, dict[str, str], bytes]:
        """(status, headers, body) for ``GET https://host/path``."""
        path = path.split("?", 1)[0]
        self.requests.append(f"{host}{path}")
        if path in ("/v2", "/v2/"):
            return 200, {"Content-Type": "application/json"}, b"{}"
        for repo in self.repositories:
            if repo.host != host:
                continue
            if repo.url.startswith("oci://") and path.startswith("/v2/"):
                found = self._oci(repo, path[4:])
                if found is not None:
                    return found
            elif repo.url.startswith("https://"):
                prefix = f"/{repo.path}/" if repo.path else "/"
                if not path.startswith(prefix):
                    continue
                rest = path[len(prefix) :]
                if rest == "index.yaml":
                    return 200, {"Content-Type": "application/x-yaml"}, repo.index_yaml()
                for a in repo.archives:
                    if rest == a.path.name:
                        return 200, {"Content-Type": "application/gzip"}, a.data
        return 404, {"Content-Type": "text/plain"}, b"not vendored\n"

    def _oci(self, repo: Repository, rest: str) -> tuple[int, dict[str, str], bytes] | None:
        for a in repo.archives:
            name = f"{repo.path}/{a.name}".strip("/")
            if not rest.startswith(name + "/"):
                continue
            tail = rest[len(name) + 1 :]
            art = OciArtifact.of(a)
            tag = a.version.replace("+", "_")
            if tail == "tags/list":
                body = json.dumps({"name": name, "tags": [tag]}).encode()
                return 200, {"Content-Type": "application/json"}, body
            if tail in (f"manifests/{tag}", f"manifests/{_digest(art.manifest)}"):
                headers = {
                    "Content-Type": OCI_MANIFEST,
                    "Docker-Content-Digest": _digest(art.manifest),
                }
                return 200, headers, art.manifest
            for blob in (art.config, art.layer):
                if tail == f"blobs/{_digest(blob)}":
                    headers = {
                        "Content-Type": "application/octet-stream",
                        "Docker-Content-Digest": _digest(blob),
                    }
                    return 200, headers, blob
        return None


def _make_certificates(workdir: Path, hosts: set[str]) -> tuple[Path, Path, Path]:
    """A throwaway CA and a leaf for ``hosts`` (ECDSA P-256, one day); (ca, cert, key)."""
    ca_key, ca, key, csr, cert = (
        workdir / n for n in ("ca.key", "ca.pem", "leaf.key", "leaf.csr", "leaf.pem")
    )
    ext = workdir / "leaf.ext"
    ext.write_text(
        "subjectAltName=" + ",".join(f"DNS:{h}" for h in sorted(hosts)) + "\n"
        "extendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n",
        encoding="utf-8",
    )
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]
    run = lambda *a: subprocess.run(["openssl", *a], check=True, capture_output=True)  # noqa: E731
    run("req", "-x509", *ec, "-keyout", str(ca_key), "-out", str(ca), "-days", "1",
        "-subj", "/CN=aicr-tui test chart CA",
        "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign")  # fmt: skip
    run("req", *ec, "-keyout", str(key), "-out", str(csr), "-subj", "/CN=chart-repositories")
    run("x509", "-req", "-in", str(csr), "-CA", str(ca), "-CAkey", str(ca_key), "-CAcreateserial",
        "-out", str(cert), "-days", "1", "-extfile", str(ext))  # fmt: skip
    return ca, cert, key


def _handler(repos: ChartRepositories) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _reply(self, head_only: bool) -> None:
            host = (self.headers.get("Host") or "").rsplit(":", 1)[0]
            status, headers, body = repos.answer(host, self.path)
            self.send_response(status)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if not head_only:
                self.wfile.write(body)

        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            self._reply(False)

        def do_HEAD(self) -> None:  # noqa: N802
            self._reply(True)

        def log_message(self, *args: Any) -> None:
            pass

    return Handler


class _TLSServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, context: ssl.SSLContext, handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(("127.0.0.1", 0), handler)
        self.context = context

    def get_request(self) -> tuple[socket.socket, Any]:
        sock, addr = self.socket.accept()
        # the handshake runs in the request's thread, on its first read
        return self.context.wrap_socket(sock, server_side=True, do_handshake_on_connect=False), addr


def _splice(a: socket.socket, b: socket.socket) -> None:
    sockets = [a, b]
    try:
        while True:
            ready, _, _ = select.select(sockets, [], [], 120)
            if not ready:
                return
            for s in ready:
                data = s.recv(65536)
                if not data:
                    return
                (b if s is a else a).sendall(data)
    finally:
        a.close()
        b.close()


def _proxy_handler(repos: ChartRepositories) -> type[socketserver.StreamRequestHandler]:
    class Proxy(socketserver.StreamRequestHandler):
        def handle(self) -> None:
            line = self.rfile.readline(8192).decode("latin-1").strip()
            while self.rfile.readline(8192) not in (b"\r\n", b"\n", b""):
                pass
            method, _, rest = line.partition(" ")
            target = rest.split(" ", 1)[0]
            host = target.rsplit(":", 1)[0]
            if method != "CONNECT" or host not in repos.hosts:
                repos.refused.append(line)
                self.wfile.write(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n")
                return
            upstream = socket.create_connection(("127.0.0.1", repos.tls_port))
            self.wfile.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            self.wfile.flush()
            _splice(self.connection, upstream)

    return Proxy


class _ProxyServer(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def load_repositories(charts: Path = CHARTS) -> list[Repository]:
    table: dict[str, list[str]] = json.loads((charts / "repositories.json").read_text("utf-8"))
    return [
        Repository(url, [_load(charts / name) for name in names]) for url, names in table.items()
    ]


@contextmanager
def serve(workdir: Path, charts: Path = CHARTS) -> Iterator[ChartRepositories]:
    """Start the TLS chart server and the CONNECT proxy on 127.0.0.1 for the duration."""
    workdir.mkdir(parents=True, exist_ok=True)
    repos = ChartRepositories(load_repositories(charts), workdir)
    ca, cert, key = _make_certificates(workdir, repos.hosts)
    repos.ca_file = ca
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    tls = _TLSServer(context, _handler(repos))
    proxy = _ProxyServer(("127.0.0.1", 0), _proxy_handler(repos))
    repos.tls_port = tls.server_address[1]
    repos.proxy_port = proxy.server_address[1]
    threads = [threading.Thread(target=s.serve_forever, daemon=True) for s in (tls, proxy)]
    for t in threads:
        t.start()
    try:
        yield repos
    finally:
        for s in (tls, proxy):
            s.shutdown()
            s.server_close()
