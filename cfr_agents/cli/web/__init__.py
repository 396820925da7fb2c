"""The browser side of the command line: the page of ``cfr-agents serve`` and ``cfr-agents report`` (:mod:`.page`,
its HTML, CSS and JavaScript shipped in ``static/``) and the server's ASGI app (:mod:`.app`)."""
