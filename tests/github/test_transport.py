"""The client's connections read the proxy and CA settings of the environment once (when made),
honour them as requests would, and do not read them again on every request."""

from __future__ import annotations

import http.client
import http.server
import threading
import urllib.parse
from collections.abc import Iterator

import github
import pytest

from holon.github.client import GitHubConfig, make_client
from holon.github.transport import HTTPConnection, HTTPSConnection
from tests.support.github_fake import LoopbackGitHub

TOKEN = "ghs_" + "f" * 36  # the github_server fixture's
REPO = "octocat/Hello-World"
DEAD_PROXY = "http://127.0.0.1:9"  # nothing listens there: a request through it fails
PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY")


class ForwardingProxy(http.server.ThreadingHTTPServer):
    """A loopback HTTP proxy: records each request's absolute URL and forwards it."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Forward)
        self.seen: list[str] = []

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Forward(http.server.BaseHTTPRequestHandler):
    server: ForwardingProxy

    def _forward(self) -> None:
        self.server.seen.append(f"{self.command} {self.path}")
        target = urllib.parse.urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else None
        upstream = http.client.HTTPConnection(target.hostname or "", target.port, timeout=10)
        headers = {k: v for k, v in self.headers.items() if k.lower() != "proxy-connection"}
        upstream.request(
            self.command, target.path + (f"?{target.query}" * bool(target.query)), body, headers
        )
        answer = upstream.getresponse()
        data = answer.read()
        self.send_response(answer.status)
        for key, value in answer.getheaders():
            if key.lower() not in ("transfer-encoding", "connection", "content-length"):
                self.send_header(key, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        upstream.close()

    do_GET = do_POST = do_PATCH = _forward

    def log_message(self, format: str, *args: object) -> None:
        del format, args


@pytest.fixture
def proxy() -> Iterator[ForwardingProxy]:
    server = ForwardingProxy()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in (*PROXY_VARIABLES, "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.lower(), raising=False)
    return monkeypatch


def _client(server: LoopbackGitHub) -> github.Github:
    config = GitHubConfig.model_validate(
        {"api_url": server.url, "token": TOKEN, "write_spacing": 0.0}
    )
    return make_client(config)


def _title(gh: github.Github) -> str:
    return str(gh.requester.requestJsonAndCheck("GET", f"/repos/{REPO}/issues/1")[1]["title"])


def test_a_proxy_from_the_environment_carries_the_requests(
    github_server: LoopbackGitHub, proxy: ForwardingProxy, clean_env: pytest.MonkeyPatch
) -> None:
    github_server.state.repos[REPO].add_issue("Crash on start")
    clean_env.setenv("HTTP_PROXY", proxy.url)
    gh = _client(github_server)
    assert _title(gh) == "Crash on start"
    assert proxy.seen == [f"GET {github_server.url}/repos/{REPO}/issues/1"]
    gh.close()


def test_no_proxy_naming_the_api_host_sends_the_requests_direct(
    github_server: LoopbackGitHub, clean_env: pytest.MonkeyPatch
) -> None:
    github_server.state.repos[REPO].add_issue("Crash on start")
    clean_env.setenv("HTTP_PROXY", DEAD_PROXY)
    clean_env.setenv("NO_PROXY", "127.0.0.1")
    gh = _client(github_server)
    assert _title(gh) == "Crash on start"
    assert github_server.operations() == ["issues/get"]
    gh.close()


def test_the_environment_is_read_when_the_connection_is_made_not_per_request(
    github_server: LoopbackGitHub, proxy: ForwardingProxy, clean_env: pytest.MonkeyPatch
) -> None:
    github_server.state.repos[REPO].add_issue("Crash on start")
    clean_env.setenv("HTTP_PROXY", proxy.url)
    gh = _client(github_server)
    assert _title(gh) == "Crash on start"
    # Read again per request, these would go to a proxy that is not there and fail.
    clean_env.setenv("HTTP_PROXY", DEAD_PROXY)
    assert _title(gh) == "Crash on start"
    assert _title(gh) == "Crash on start"
    assert len(proxy.seen) == 3
    assert github_server.operations() == ["issues/get"] * 3
    gh.close()


def test_a_ca_bundle_from_the_environment_is_what_https_verifies_with(
    clean_env: pytest.MonkeyPatch,
) -> None:
    clean_env.setenv("CURL_CA_BUNDLE", "/etc/ssl/curl.pem")
    assert HTTPSConnection("github.example", 443).verify == "/etc/ssl/curl.pem"
    clean_env.setenv("REQUESTS_CA_BUNDLE", "/etc/ssl/requests.pem")
    made = HTTPSConnection("github.example", 443)
    assert made.verify == "/etc/ssl/requests.pem"
    assert made.session.trust_env is False
    # A bundle the client was given wins, as with requests.
    assert HTTPSConnection("github.example", 443, verify="/given.pem").verify == "/given.pem"
    assert HTTPConnection("127.0.0.1", 80, verify=False).verify is False


def test_https_proxies_follow_no_proxy_for_the_api_host(clean_env: pytest.MonkeyPatch) -> None:
    clean_env.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    assert HTTPSConnection("github.example", 443).session.proxies == {
        "https": "http://proxy.example:3128"
    }
    clean_env.setenv("NO_PROXY", ".example")
    assert HTTPSConnection("github.example", 443).session.proxies == {}
    proxies = HTTPSConnection("api.github.com", 443).session.proxies
    assert proxies["https"] == "http://proxy.example:3128"


def test_the_client_makes_its_connections_from_holons_classes(
    github_server: LoopbackGitHub, clean_env: pytest.MonkeyPatch
) -> None:
    github_server.state.repos[REPO].add_issue("Crash on start")
    gh = _client(github_server)
    _title(gh)
    # What test_the_environment_is_read... relies on; fails should PyGithub rename its hooks.
    assert isinstance(getattr(gh.requester, "_Requester__connection", None), HTTPConnection)
    gh.close()


def test_a_request_carries_pygithubs_headers_and_the_sessions_defaults(
    github_server: LoopbackGitHub, clean_env: pytest.MonkeyPatch
) -> None:
    github_server.state.repos[REPO].add_issue("Crash on start")
    gh = _client(github_server)
    gh.requester.requestJsonAndCheck(
        "POST", f"/repos/{REPO}/issues/1/comments", input={"body": "hi"}
    )
    gh.requester.requestJsonAndCheck(
        "GET", f"/repos/{REPO}/issues/1/comments", parameters={"per_page": 100}
    )
    post, get = github_server.calls
    headers = {k.lower(): v for k, v in post.headers.items()}
    assert headers["authorization"] == f"token {TOKEN}"
    assert headers["user-agent"].startswith("holon/")
    assert headers["content-type"] == "application/json"
    assert headers["accept-encoding"] == "gzip, deflate"  # requests' default, kept
    assert post.json == {"body": "hi"}
    assert get.query == {"per_page": ["100"]}
    gh.close()
