"""Value conversions shared by the Pythonic API and the pysoem layer.

CoE values are little-endian. A ``type`` is a name (``"u8"``, ``"i16"``, ``"u32"``,
``"f32"``, ``"bool"``, ``"str"``, ``"bytes"``, ...) or a Python type (``int``, ``float``,
``str``, ``bytes``, ``bool``); ``int`` decodes an unsigned value of whatever length came back.
"""

from __future__ import annotations

import re
import struct
from typing import Any, Optional, Union

_FORMATS = {
    "bool": "<?",
    "u8": "<B",
    "i8": "<b",
    "u16": "<H",
    "i16": "<h",
    "u32": "<I",
    "i32": "<i",
    "u64": "<Q",
    "i64": "<q",
    "f32": "<f",
    "f64": "<d",
}

# CoE data type codes (ETG.1000.6) that are signed or floating point.
SIGNED_TYPES = {0x0002, 0x0003, 0x0004, 0x0010, 0x0012, 0x0013, 0x0014, 0x0015}
REAL32, REAL64, BOOLEAN = 0x0008, 0x0011, 0x0001

TypeSpec = Union[str, type, None]


def decode(data: bytes, type: TypeSpec = None) -> Any:
    """Decode ``data`` as ``type`` (``None``: the bytes unchanged)."""
    if type is None or type is bytes or type == "bytes":
        return bytes(data)
    if type is str or type == "str":
        return bytes(data).split(b"\0", 1)[0].decode("latin-1")
    if type is int:
        return int.from_bytes(bytes(data), "little")
    if type is float:
        type = "f32" if len(data) == 4 else "f64"
    if type is bool:
        type = "bool"
    fmt = _FORMATS.get(type) if isinstance(type, str) else None
    if fmt is None:
        raise ValueError(f"unknown type {type!r}: use one of {', '.join(_FORMATS)}, str, bytes or int")
    n = struct.calcsize(fmt)
    if len(data) < n:
        raise ValueError(f"{len(data)} bytes are too few for {type} ({n} bytes)")
    return struct.unpack(fmt, bytes(data[:n]))[0]


def encode(value: Any, type: TypeSpec = None, size: Optional[int] = None) -> bytes:
    """Encode ``value`` as ``type``; an ``int`` without a type takes ``size`` bytes."""
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, str) and type in (None, str, "str"):
        return value.encode("latin-1")
    if isinstance(type, str) and type in _FORMATS:
        return struct.pack(_FORMATS[type], value)
    if isinstance(value, float) or type is float:
        return struct.pack("<f" if size == 4 or size is None else "<d", value)
    if isinstance(value, (bool, int)):
        if size is None:
            raise ValueError(
                "an int needs its size: give type='u16' (or u8, i32, ...) or bytes"
            )
        return int(value).to_bytes(size, "little", signed=value < 0)
    raise ValueError(f"cannot encode {value!r} as {type!r}")


def parse_duration(d: Union[str, int, float]) -> int:
    """``"1ms"``, ``"250us"``, ``"500 ns"``, ``"2s"`` or a number of seconds → nanoseconds."""
    if isinstance(d, (int, float)):
        return int(round(d * 1e9))
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*(ns|us|µs|ms|s)\s*", d)
    if not m:
        raise ValueError(f"cannot understand the duration {d!r}: write e.g. '1ms', '250us' or '2s'")
    scale = {"ns": 1, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9}[m.group(2)]
    return int(round(float(m.group(1)) * scale))


def entry_value(raw: int, bits: int, data_type: int) -> Union[int, float, bool]:
    """A process data entry's value from its raw bits."""
    if data_type == REAL32 and bits == 32:
        return struct.unpack("<f", raw.to_bytes(4, "little"))[0]
    if data_type == REAL64 and bits == 64:
        return struct.unpack("<d", raw.to_bytes(8, "little"))[0]
    if data_type == BOOLEAN or bits == 1:
        return bool(raw)
    if data_type in SIGNED_TYPES and raw >> (bits - 1):
        return raw - (1 << bits)
    return raw


def entry_raw(value: Union[int, float, bool], bits: int, data_type: int) -> int:
    """Raw bits for a process data entry."""
    if isinstance(value, float) or data_type in (REAL32, REAL64):
        if bits == 32:
            return int.from_bytes(struct.pack("<f", value), "little")
        if bits == 64:
            return int.from_bytes(struct.pack("<d", value), "little")
        raise ValueError(f"a float does not fit a {bits}-bit entry")
    v = int(value)
    if v < -(1 << (bits - 1)) or v >= (1 << bits):
        raise ValueError(f"{value} does not fit {bits} bits")
    return v & ((1 << bits) - 1)
