"""Loopback HTTP(S) servers for the live-capture tests.

Each test starts a server on 127.0.0.1 (port 0) that answers the REST paths the SDK under
test calls, with bodies in the real API shapes, and points the SDK at it through its
documented endpoint override. Every request is recorded so tests can assert on paths,
query parameters and headers (paging tokens, api-version, Authorization).
"""

from __future__ import annotations

import datetime
import ipaddress
import json
import ssl
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Self
from urllib.parse import parse_qs, urlsplit


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]

    def param(self, name: str) -> str | None:
        values = self.query.get(name)
        return values[0] if values else None


@dataclass
class Reply:
    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


Handler = Callable[[Request], Reply]


class BackgroundServer:
    """A test server whose ``thread`` serves for the length of a ``with`` block; ``close``
    stops it (each server says how)."""

    thread: threading.Thread

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()


class LoopbackServer(BackgroundServer):
    """A threaded HTTP(S) server on 127.0.0.1 driven by one handler function."""

    def __init__(self, handler: Handler, *, tls: tuple[Path, Path] | None = None) -> None:
        self.handler = handler
        self.requests: list[Request] = []
        self.release = threading.Event()
        outer = self

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_: Any) -> None:
                return

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                parts = urlsplit(self.path)
                request = Request(
                    method=self.command,
                    path=parts.path,
                    query=parse_qs(parts.query, keep_blank_values=True),
                    headers={k.lower(): v for k, v in self.headers.items()},
                )
                outer.requests.append(request)
                reply = outer.handler(request)
                if reply.delay_s:
                    outer.release.wait(reply.delay_s)
                payload = b""
                if reply.body is not None:
                    payload = (
                        reply.body
                        if isinstance(reply.body, bytes)
                        else json.dumps(reply.body).encode()
                    )
                try:
                    self.send_response(reply.status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    for key, value in reply.headers.items():
                        self.send_header(key, value)
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    return

            do_GET = _serve
            do_POST = _serve

        class _Server(ThreadingHTTPServer):
            def handle_error(self, request: Any, client_address: Any) -> None:
                # Clients that give up mid-handshake (timeout tests) are expected here.
                return

        self.httpd = _Server(("127.0.0.1", 0), _Handler)
        self.httpd.daemon_threads = True
        self.scheme = "http"
        if tls is not None:
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(str(tls[0]), str(tls[1]))
            self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
            self.scheme = "https"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        return f"{self.scheme}://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self.release.set()
        self.httpd.shutdown()
        self.httpd.server_close()


def make_tls_files(directory: Path) -> tuple[Path, Path, Path]:
    """A throwaway CA and a server certificate for 127.0.0.1: (ca.pem, cert.pem, key.pem)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

    now = datetime.datetime.now(datetime.UTC)
    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "aicr-tui test CA")])
    ca_cert = (
        x509.CertificateBuilder()
        .subject_name(ca_name)
        .issuer_name(ca_name)
        .public_key(ca_key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=2))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                key_cert_sign=True,
                crl_sign=True,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(ca_key.public_key()), False)
        .sign(ca_key, hashes.SHA256())
    )
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")]))
        .issuer_name(ca_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=2))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), False
        )
        .sign(ca_key, hashes.SHA256())
    )
    ca_path = directory / "ca.pem"
    cert_path = directory / "server.pem"
    key_path = directory / "server.key"
    ca_path.write_bytes(ca_cert.public_bytes(serialization.Encoding.PEM))
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return ca_path, cert_path, key_path


class StaticTokenCredential:
    """An azure-core TokenCredential handing out a fixed bearer token (tests only)."""

    def __init__(self, token: str = "test-token") -> None:
        self.token = token
        self.scopes: list[tuple[str, ...]] = []

    def get_token(self, *scopes: str, **_: Any) -> Any:
        import time

        from azure.core.credentials import AccessToken

        self.scopes.append(scopes)
        return AccessToken(self.token, int(time.time()) + 3600)


class FailingCredential:
    """A TokenCredential that fails the way DefaultAzureCredential does with nothing set up."""

    def get_token(self, *scopes: str, **_: Any) -> Any:
        from azure.core.exceptions import ClientAuthenticationError

        raise ClientAuthenticationError(
            "DefaultAzureCredential failed to retrieve a token from the included credentials."
        )


def write_oci_config(directory: Path, *, region: str = "us-ashburn-1") -> Path:
    """An OCI CLI/SDK config file with a freshly generated API signing key."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    key_path = directory / "oci_api_key.pem"
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.TraditionalOpenSSL,
            serialization.NoEncryption(),
        )
    )
    key_path.chmod(0o600)
    config = directory / "oci_config"
    config.write_text(
        "[DEFAULT]\n"
        "user=ocid1.user.oc1..aaaaaaaatestuser\n"
        "fingerprint=12:34:56:78:90:ab:cd:ef:12:34:56:78:90:ab:cd:ef\n"
        "tenancy=ocid1.tenancy.oc1..aaaaaaaatesttenancy\n"
        f"region={region}\n"
        f"key_file={key_path}\n"
    )
    config.chmod(0o600)
    return config


def write_kubeconfig(path: Path, server: str, *, token: str = "test-token") -> Path:
    path.write_text(
        "apiVersion: v1\n"
        "kind: Config\n"
        "clusters:\n"
        "- name: loopback\n"
        "  cluster:\n"
        f"    server: {server}\n"
        "contexts:\n"
        "- name: loopback\n"
        "  context: {cluster: loopback, user: tester}\n"
        "- name: other\n"
        "  context: {cluster: loopback, user: tester}\n"
        "current-context: loopback\n"
        "users:\n"
        "- name: tester\n"
        f"  user: {{token: {token}}}\n"
    )
    return path


def assert_saved_dump_captures_alike(live: Any, **dump: str) -> None:
    """The dump ``live`` saved, captured offline (``dump``: the capture_offline keyword and the
    file), yields exactly the measurements of the live projection."""
    from aicr_tui.core.capture.capture import capture_offline
    from aicr_tui.core.documents.snapshot import new_snapshot

    from_file = capture_offline(**dump, base=new_snapshot()).snapshot  # type: ignore[arg-type]
    base = new_snapshot()
    base.attach("K8s", live.projection.subtype)
    assert from_file.measurements == base.measurements
