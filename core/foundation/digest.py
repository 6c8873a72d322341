"""SHA-256 from CPython's own implementation.

``hashlib`` loads OpenSSL's libcrypto on import (~11M instructions, ~3 ms per process); a
one-shot ``bundle`` hashing its ~100 KB (``checksums.txt``, the recipe digest in
bundle-info.yaml, which must stay SHA-256) is faster with the interpreter's built-in
SHA-256, which gives the same digests. (The catalog cache seals with the built-in BLAKE2b.)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hashlib import sha256
else:
    try:
        from _sha256 import sha256
    except ImportError:  # 3.12+ names it _sha2; any other Python: hashlib's
        try:
            from _sha2 import sha256
        except ImportError:
            from hashlib import sha256


def sha256_hex(data: bytes) -> str:
    """The hex SHA-256 digest of ``data``."""
    return sha256(data).hexdigest()


__all__ = ["sha256", "sha256_hex"]
