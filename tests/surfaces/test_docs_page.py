"""`/docs` is whole on an air-gapped install: Swagger UI's script, style and icon come from the server
itself, and nothing on the page names another host (the install smoke test also watches it in Chromium)."""

from __future__ import annotations

import re

from tests.conftest import Harness


def test_the_docs_page_loads_only_from_the_server(harness: Harness) -> None:
    page = harness.client.get("/docs")
    assert page.status_code == 200
    addresses = re.findall(r"""(?:src|href|url)\s*[:=]\s*['"]([^'"]+)['"]""", page.text)
    assert addresses, "the page names its assets"
    for address in addresses:
        assert address.startswith("/"), f"{address} is not on this server"
        assert harness.client.get(address).status_code == 200, address
    assert re.search(r'"validatorUrl":\s*null', page.text), "no validator badge from validator.swagger.io"
    assert not re.search(r"https?://", page.text.replace("http://www.w3.org/", ""))


def test_there_is_no_redoc_page(harness: Harness) -> None:
    """ReDoc's page always loads its attribution logo from a CDN, so it is not offered."""
    assert harness.client.get("/redoc").status_code == 404
