"""A model's bytes: a JSON header and named numpy arrays, packed the same way every time.

`numpy.savez` would do, but it writes a zip whose entries carry the time they were written, so the same
training would give different bytes; the same pairs must give the same blob (DESIGN §2, deterministic).
No pickle: a blob is read back from the database, and loading one must never run code.
"""

from __future__ import annotations

import json
import struct
import zlib
from typing import Any

import numpy as np
from numpy.typing import NDArray

MAGIC = b"redline-rm\x01"
_LENGTH = struct.Struct("<Q")


def pack(header: dict[str, Any], arrays: dict[str, NDArray[Any]]) -> bytes:
    """The header (JSON-able) and the arrays, compressed: weights of buckets no pair touched stay 0."""
    layout, chunks, offset = [], [], 0
    for name in sorted(arrays):
        array = np.ascontiguousarray(arrays[name])
        data = array.tobytes()
        layout.append({"name": name, "dtype": array.dtype.str, "shape": list(array.shape), "offset": offset})
        chunks.append(data)
        offset += len(data)
    meta = json.dumps({"header": header, "arrays": layout}, sort_keys=True).encode()
    return MAGIC + zlib.compress(_LENGTH.pack(len(meta)) + meta + b"".join(chunks), 6)


def unpack(blob: bytes) -> tuple[dict[str, Any], dict[str, NDArray[Any]]]:
    """What `pack` was given; a blob of anything else is refused with ValueError."""
    if not blob.startswith(MAGIC):
        raise ValueError("not a Redline reward model")
    body = zlib.decompress(blob[len(MAGIC) :])
    (length,) = _LENGTH.unpack_from(body)
    meta = json.loads(body[_LENGTH.size : _LENGTH.size + length])
    data = memoryview(body)[_LENGTH.size + length :]
    arrays = {}
    for spec in meta["arrays"]:
        dtype = np.dtype(spec["dtype"])
        count = int(np.prod(spec["shape"], dtype=np.int64))
        start = spec["offset"]
        flat = np.frombuffer(data[start : start + count * dtype.itemsize], dtype=dtype)
        arrays[spec["name"]] = flat.reshape(spec["shape"])
    return meta["header"], arrays
