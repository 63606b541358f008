"""PyGithub's connections with the process environment read once per connection, not per request.

requests, left to itself (`Session.trust_env`), walks the whole environment on every request
for the proxy variables (`HTTPS_PROXY`, `NO_PROXY`, ...) and the CA bundle (`REQUESTS_CA_BUNDLE`,
`CURL_CA_BUNDLE`): about a fifth of a call's CPU against a fast server. A connection here reads
them once, when PyGithub makes it (lazily, at its first request; one per host), with requests'
own functions so the result is the same, and then stops requests from reading them again. The
environment is therefore fixed for a client from its first request on, as `holon serve` needs.

PyGithub (2.x) has no per-client hook for its connection class, only a global one that also
stops it from reusing connections; `use_transport` sets this client's requester's own classes.
"""

from __future__ import annotations

import os
import urllib.parse
from typing import Any

import github
import requests.utils
from github.Requester import (
    HTTPRequestsConnectionClass,
    HTTPSRequestsConnectionClass,
    RequestsResponse,
)
from requests.structures import CaseInsensitiveDict

from holon import crashpoints
from holon.crashpoints import WRITES


def _environment_once(session: requests.Session, url: str, verify: Any) -> Any:
    """Resolves for `url` what requests would per request, fixes it on `session`; the verify
    setting to pass (a CA bundle from the environment unless one was given)."""
    session.proxies = requests.utils.get_environ_proxies(url)  # honours NO_PROXY for `url`
    session.trust_env = False
    if verify is True:
        return os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("CURL_CA_BUNDLE") or True
    return verify


def _netloc(host: str, port: int) -> str:
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def _send(cnx: HTTPRequestsConnectionClass | HTTPSRequestsConnectionClass) -> RequestsResponse:
    """The request PyGithub gave `cnx`, sent through its adapter (its pool and retry policy)
    without `Session.request`'s per-request merging: the session adds nothing here but its
    default headers (no cookies, hooks or auth: the token is in PyGithub's headers; the
    environment was read once)."""
    verb = cnx.verb.upper()
    # Crash-safety tests' write points: before a write leaves, and once GitHub answered it.
    write = (
        crashpoints.github_point(verb, cnx.url) if crashpoints.armed() and verb in WRITES else ""
    )
    if write:
        crashpoints.point(f"{write}:before")
    headers = CaseInsensitiveDict(cnx.session.headers)
    headers.update(cnx.headers)
    request = requests.PreparedRequest()
    request.prepare(
        method=verb,
        url=f"{cnx.protocol}://{_netloc(cnx.host, cnx.port)}{cnx.url}",
        headers=headers,
        data=cnx.input,
    )
    response = cnx.adapter.send(
        request,
        stream=cnx.stream,
        timeout=cnx.timeout,
        verify=cnx.verify,
        proxies=cnx.session.proxies,
    )
    if not cnx.stream:
        response.content  # noqa: B018 (read the body now, as Session.request does)
    if write:
        crashpoints.point(f"{write}:after")
    return RequestsResponse(response)


class HTTPConnection(HTTPRequestsConnectionClass):
    def __init__(self, host: str, port: int | None = None, **kwargs: Any) -> None:
        super().__init__(host, port, **kwargs)
        url = f"http://{_netloc(self.host, self.port)}"
        self.verify = _environment_once(self.session, url, self.verify)

    def getresponse(self) -> RequestsResponse:
        return _send(self)


class HTTPSConnection(HTTPSRequestsConnectionClass):
    def __init__(self, host: str, port: int | None = None, **kwargs: Any) -> None:
        super().__init__(host, port, **kwargs)
        url = f"https://{_netloc(self.host, self.port)}"
        self.verify = _environment_once(self.session, url, self.verify)

    def getresponse(self) -> RequestsResponse:
        return _send(self)


# The requester's private names for its connection classes: the one for the API's own host
# (chosen by scheme in its __init__) and the two it makes other hosts' connections from.
_CLASSES = {
    "_Requester__httpConnectionClass": HTTPConnection,
    "_Requester__httpsConnectionClass": HTTPSConnection,
}


def use_transport(client: github.Github) -> None:
    """Makes `client` build its connections from the classes above (before its first request).
    Should PyGithub rename its attributes, the client keeps PyGithub's own connections: slower,
    still correct (tests/github/test_transport.py then fails)."""
    requester = client.requester
    if not hasattr(requester, "_Requester__connectionClass"):
        return
    for name, cls in _CLASSES.items():
        setattr(requester, name, cls)
    https = urllib.parse.urlsplit(requester.base_url).scheme == "https"
    requester._Requester__connectionClass = HTTPSConnection if https else HTTPConnection
