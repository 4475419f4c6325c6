"""Loopback helpers of the network tests: an endpoint that is down, a guard that refuses any
connection or name lookup beyond loopback, and a snapshot of a folder's files (to check that a
failure wrote nothing)."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest


def closed_port_url() -> str:
    """An http:// URL on 127.0.0.1 where nothing listens (an endpoint that is down)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (hidden temp files included) and its content."""
    if not folder.exists():
        return {}
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


_LOOPBACK = {"127.0.0.1", "::1", "localhost"}


def guard_loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make any connection or name lookup beyond loopback fail loudly (no test reaches AWS,
    not even its DNS names)."""
    real_connect = socket.socket.connect
    real_getaddrinfo = socket.getaddrinfo

    def connect(self: socket.socket, address: object) -> None:
        if self.family in (socket.AF_INET, socket.AF_INET6):
            host = address[0] if isinstance(address, tuple) else address
            if host not in _LOOPBACK:
                raise OSError(f"test network guard: connection to {address!r} refused")
        return real_connect(self, address)

    def getaddrinfo(host: object, *args: object, **kwargs: object) -> list:
        if host not in _LOOPBACK and host is not None:
            raise OSError(f"test network guard: name lookup of {host!r} refused")
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
