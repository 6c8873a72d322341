"""SHA-256 and BLAKE2b from CPython's own implementations.

``hashlib`` loads OpenSSL's libcrypto on import (~11M instructions, ~3 ms per process); a
one-shot ``bundle`` hashing its ~100 KB (``checksums.txt``, the recipe digest in
bundle-info.yaml, which must stay SHA-256) is faster with the interpreter's built-in
SHA-256, which gives the same digests. The catalog cache seals with BLAKE2b-256
(:func:`blake2b_256`): as strong, and four times faster than CPython's own SHA-256.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hashlib import blake2b, sha256
else:
    try:
        from _sha256 import sha256
    except ImportError:  # 3.12+ names it _sha2; any other Python: hashlib's
        try:
            from _sha2 import sha256
        except ImportError:
            from hashlib import sha256
    try:
        from _blake2 import blake2b
    except ImportError:  # not CPython: hashlib's
        from hashlib import blake2b


def sha256_hex(data: bytes) -> str:
    """The hex SHA-256 digest of ``data``."""
    return sha256(data).hexdigest()


def blake2b_256(data: bytes = b"") -> blake2b:
    """A BLAKE2b hasher with a 32-byte digest, fed ``data``."""
    return blake2b(data, digest_size=32)


__all__ = ["blake2b_256", "sha256", "sha256_hex"]
