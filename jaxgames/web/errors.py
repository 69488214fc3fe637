"""The one error a request can end with on purpose: :class:`BadRequest`, answered as JSON
``{"error": message}`` with its 4xx status by the server. Every game module raises it before it
changes anything, so a refused request leaves the game as it was."""

from __future__ import annotations

__all__ = ["BadRequest", "check_keys", "require"]


class BadRequest(Exception):
    """A request the server refuses: ``status`` (400 malformed, 404 unknown, 409 stale, 422
    illegal move) and a one-line ``message`` for the page to show."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.message = message
        self.status = status


def require(body: dict, name: str, kind: type | tuple, *, default=None, choices=None, low=None, high=None):
    """``body[name]`` checked: of type ``kind`` (bool is not an int), in ``choices`` or in
    ``low .. high``; ``default`` when absent; BadRequest (400) otherwise."""
    if name not in body or body[name] is None:
        return default
    value = body[name]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if isinstance(value, bool) and bool not in kinds:
        raise BadRequest(f"{name} must be {' or '.join(k.__name__ for k in kinds)}, got {value!r}")
    if not isinstance(value, kinds):
        raise BadRequest(f"{name} must be {' or '.join(k.__name__ for k in kinds)}, got {value!r}")
    if choices is not None and value not in choices:
        raise BadRequest(f"{name} must be one of {', '.join(map(str, choices))}, got {value!r}")
    if low is not None and value < low or high is not None and value > high:
        raise BadRequest(f"{name} must be in {low}..{high}, got {value!r}")
    return value


def check_keys(body: dict, allowed: tuple[str, ...], what: str) -> None:
    """BadRequest naming the first key of ``body`` not in ``allowed`` (a typo is refused, not
    ignored)."""
    for k in body:
        if k not in allowed:
            raise BadRequest(f"unknown {what} {k!r}; known: {', '.join(allowed) or 'none'}")
