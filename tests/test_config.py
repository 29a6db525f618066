from __future__ import annotations

import subprocess
import sys

import pytest

from trilium_recall.config import load_settings
from trilium_recall.errors import ConfigError


def test_one_instance_from_trilium_url_and_token() -> None:
    settings = load_settings(
        {"TRILIUM_URL": "http://notes:8080/", "TRILIUM_ETAPI_TOKEN": "id_secret"}
    )
    instance = settings.instances["default"]
    assert (instance.url, instance.token.get_secret_value()) == ("http://notes:8080", "id_secret")
    assert instance.note_url("abc") == "http://notes:8080/#root/abc"


def test_a_link_into_trilium_never_carries_the_url_s_user_and_password() -> None:
    """Passages carry links to the assistant; the requests keep the URL as given (a proxy's
    basic auth)."""
    env = {"TRILIUM_URL": "https://me:pa55@notes.example/t/", "TRILIUM_ETAPI_TOKEN": "x"}
    instance = load_settings(env).instances["default"]
    assert instance.url == "https://me:pa55@notes.example/t"
    assert instance.note_url("abc") == "https://notes.example/t/#root/abc"
    assert instance.shown_url == "https://notes.example/t"  # doctor, the page, errors


def test_what_doctor_shows_of_a_trilium_url_leaves_its_password_out() -> None:
    from trilium_recall.server.checks import _masked

    assert _masked("TRILIUM_URL_WORK", "http://me:pa55@h:8080/") == "http://h:8080"
    assert _masked("TRILIUM_LINK_URL_WORK", "http://me:pa55@h:8080/") == "http://h:8080"
    env = {
        "RECALL_INSTANCES": "a,b",
        "TRILIUM_URL_A": "http://me:pa55@notes:8080",
        "TRILIUM_ETAPI_TOKEN_A": "x",
        "TRILIUM_URL_B": "http://me:pa55@notes:8080/",
        "TRILIUM_ETAPI_TOKEN_B": "y",
    }
    with pytest.raises(ConfigError) as refused:
        load_settings(env)
    assert "pa55" not in str(refused.value) and "(http://notes:8080)" in str(refused.value)


def test_several_instances() -> None:
    env = {
        "RECALL_INSTANCES": "work, home",
        "TRILIUM_URL_WORK": "https://work.example",
        "TRILIUM_ETAPI_TOKEN_WORK": "w_1",
        "TRILIUM_URL_HOME": "http://127.0.0.1:8080",
        "TRILIUM_ETAPI_TOKEN_HOME": "h_1",
    }
    assert list(load_settings(env).instances) == ["work", "home"]


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"TRILIUM_URL": "http://x"}, "TRILIUM_ETAPI_TOKEN is not set"),
        ({"TRILIUM_ETAPI_TOKEN": "t"}, "TRILIUM_URL is not set"),
        ({"TRILIUM_URL": "notes:8080", "TRILIUM_ETAPI_TOKEN": "t"}, "TRILIUM_URL must be an http"),
        (
            {"RECALL_INSTANCES": "a", "TRILIUM_URL_A": "http://x"},
            "TRILIUM_ETAPI_TOKEN_A is not set",
        ),
        ({"RECALL_PORT": "eighty"}, "RECALL_PORT"),
        ({"RECALL_AREA_WEIGHTS": "wiki=heavy"}, "RECALL_AREA_WEIGHTS"),
        ({"RECALL_AREA_WEIGHTS": "wiki=inf"}, "RECALL_AREA_WEIGHTS: .*wiki must be a number"),
        ({"RECALL_AREA_WEIGHTS": "journal=nan"}, "RECALL_AREA_WEIGHTS: .*journal must be"),
        ({"TRILIUM_URL": "http://x", "TRILIUM_ETAPI_TOKEN": "tok\nmore"}, "one line of printable"),
        ({"TRILIUM_URL": "http://x", "TRILIUM_ETAPI_TOKEN": "tök"}, "TRILIUM_ETAPI_TOKEN: the"),
        ({"RECALL_BASE_URL": "recall.example"}, "RECALL_BASE_URL"),
        ({"RECALL_BASE_URL": "https://x.org/recall"}, "RECALL_BASE_URL: must be the engine's orig"),
        ({"RECALL_LOGIN_PASSWORD": "pässword"}, "RECALL_LOGIN_PASSWORD: .*printable ASCII"),
        ({"RECALL_TRUSTED_PROXIES": "*"}, "RECALL_TRUSTED_PROXIES: .*'\\*' is not an IP"),
        ({"RECALL_TRUSTED_PROXIES": "127.0.0.1,proxy"}, "RECALL_TRUSTED_PROXIES: .*'proxy'"),
    ],
)
def test_bad_values_name_the_variable(env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_settings(env)


@pytest.mark.parametrize(
    ("given", "origin"),
    [
        ("https://Recall.Example.org/", "https://recall.example.org"),
        ("HTTPS://recall.example.org:443", "https://recall.example.org"),
        ("http://LOCALHOST:80", "http://localhost"),
        ("https://recall.example.org:8443", "https://recall.example.org:8443"),
        ("http://[::1]:8765", "http://[::1]:8765"),
    ],
)
def test_the_base_url_is_kept_as_oauth_clients_compare_it(given: str, origin: str) -> None:
    """Clients compare the issuer and resource character for character, and the SDK writes
    them in lower case without a default port: "http://LOCALHOST:8765" failed every sign-in."""
    assert load_settings({"RECALL_BASE_URL": given}).base_url == origin


def test_trusted_proxies_default_to_none_and_take_addresses_and_networks() -> None:
    assert load_settings({}).trusted_proxies == ()
    env = {"RECALL_TRUSTED_PROXIES": "127.0.0.1, 10.0.0.0/8,::1"}
    assert load_settings(env).trusted_proxies == ("127.0.0.1", "10.0.0.0/8", "::1")


def test_secrets_stay_out_of_repr() -> None:
    settings = load_settings(
        {
            "TRILIUM_URL": "http://x",
            "TRILIUM_ETAPI_TOKEN": "tok_TOPSECRET",
            "RECALL_LOGIN_PASSWORD": "pw-TOPSECRET",
        }
    )
    assert "TOPSECRET" not in repr(settings)
    assert "TOPSECRET" not in str(settings.instances)


def test_cli_config_error_is_one_line_exit_2_without_traceback() -> None:
    env = {"PATH": "/usr/bin:/bin", "TRILIUM_URL": "http://127.0.0.1:9", "HOME": "/tmp"}
    done = subprocess.run(
        [sys.executable, "-m", "trilium_recall.cli", "status"],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert done.stderr.strip() == (
        "trilium-recall: TRILIUM_ETAPI_TOKEN is not set: TRILIUM_URL needs an ETAPI token"
    )
    assert "Traceback" not in done.stderr


def test_an_http_url_needs_a_host_and_a_port_that_can_be_connected_to() -> None:
    from trilium_recall.engine_address import is_http_url

    good = ["http://notes:8080", "https://notes.example/t/", "http://[::1]:8080", "http://h:1"]
    bad = ["http://h:0", "http://h:65536", "http://[::1:8080", "http://:8080", "ftp://h", "h:80"]
    assert [is_http_url(u) for u in good] == [True] * len(good)
    assert [is_http_url(u) for u in bad] == [False] * len(bad)
