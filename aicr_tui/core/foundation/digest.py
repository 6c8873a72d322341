"""SHA-256 and BLAKE2b from :mod:`hashlib`.

A bundle's ``checksums.txt`` and the recipe digest in bundle-info.yaml are SHA-256; the
catalog cache seals with BLAKE2b-256 (:func:`blake2b_256`), as strong and faster.
"""

from __future__ import annotations

from hashlib import blake2b, sha256


def sha256_hex(data: bytes) -> str:
    """The hex SHA-256 digest of ``data``."""
    return sha256(data).hexdigest()


def blake2b_256(data: bytes = b"") -> blake2b:
    """A BLAKE2b hasher with a 32-byte digest, fed ``data``."""
    return blake2b(data, digest_size=32)


__all__ = ["blake2b_256", "sha256", "sha256_hex"]
