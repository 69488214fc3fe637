"""Play every game against its agent in a browser: ``python -m jaxgames.web`` serves the pages
(plain HTML/SVG/JS in ``static/``) and a JSON API per game on 127.0.0.1 (docs/web.md).

The agents move on the server, in JAX; what a page receives is built by one function per game
from what the person's seat may see (``seat_view``), never from the hidden cards."""

from jaxgames.web.server import make_app

__all__ = ["make_app"]
