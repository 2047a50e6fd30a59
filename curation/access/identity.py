"""Who is acting: a typed name (personal mode), a signed-in person (OIDC or a trusted proxy) or the local shell.

Personal mode keeps today's behaviour: the name is typed and recorded as *self-declared*. Team mode takes the
name from an identity source the app trusts and never from a text field:

- ``oidc``: Streamlit's login (``st.login``, Authlib) against the provider in ``[auth]`` of
  ``.streamlit/secrets.toml``; the person is the provider's account (the ID token's ``iss`` and ``sub``), named
  by its verified ``email`` claim.
- ``proxy``: a reverse proxy (oauth2-proxy) authenticates and passes the email in a header
  (``CURATION_PROXY_HEADER``). The header is believed only when the app listens on a loopback address (so the
  socket's peer is a process on this machine) and the request carries the proxy's secret
  (``X-Curation-Proxy-Secret`` = ``CURATION_PROXY_SECRET``): a header forged on a direct connection is refused.
- ``local``: the command line. Anyone with a shell that can open the store read-write can edit its file too
  (docs/SECURITY.md's threat model), so the local account acts with every role, under its own name.
"""

from __future__ import annotations

import getpass
import hmac
import ipaddress
import math
import re
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from urllib.parse import urlsplit

from curation.config import Settings
from curation.errors import AccessDeniedError, CurationError

PROXY_SECRET_HEADER = "X-Curation-Proxy-Secret"
MAX_NAME = 100  # = the store's MAX_CURATOR
LOOPBACK = ("127.0.0.1", "localhost", "::1")
AUTH_KEYS = ("redirect_uri", "cookie_secret", "client_id", "client_secret", "server_metadata_url")
PROVIDER_KEYS = ("client_id", "client_secret", "server_metadata_url")
MIN_COOKIE_SECRET = 32  # characters; Streamlit signs the identity cookie with it
# Bits the cookie secret's characters carry, estimated from their frequencies; 32 random hex digits (the least
# python's secrets.token_hex(16) gives) estimate at 92 or more in 100,000 draws, 32 typed letters far less.
MIN_COOKIE_SECRET_BITS = 80
_EMAIL = re.compile(r"^[^@\s]+@[^@\s]+$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


class IdentitySource(StrEnum):
    """How a name is known. Stored with every decision (``decisions.identity_source``)."""

    SELF_DECLARED = "self-declared"
    OIDC = "oidc"
    PROXY = "proxy"
    LOCAL = "local"


@dataclass(frozen=True)
class Identity:
    """The person acting.

    Attributes:
        name: what decisions, audits and exports carry: the email (oidc, proxy), the typed name, or
            ``local:<account>``.
        source: how the name is known.
        display_name: the provider's ``name`` claim, for showing ("" when none).
        claimed_roles: role names the provider asserts (``CURATION_ROLES_CLAIM``), unchecked strings.
        expires_at: when the sign-in ends (seconds since the epoch); None: it does not.
        issuer, subject: the OIDC account (``iss``, ``sub``): what a person *is*; the email only names them
            ("" for the other sources).
    """

    name: str
    source: IdentitySource
    display_name: str = ""
    claimed_roles: frozenset[str] = frozenset()
    expires_at: float | None = None
    issuer: str = ""
    subject: str = ""

    @property
    def authenticated(self) -> bool:
        return self.source is not IdentitySource.SELF_DECLARED

    def expired(self, now: float | None = None) -> bool:
        return self.expires_at is not None and (time.time() if now is None else now) >= self.expires_at


# The app finishing a job whose start was checked (activating what it trained, when it passes the gate).
BACKGROUND_JOB = Identity("local:background job", IdentitySource.LOCAL)


def self_declared(name: str) -> Identity:
    """A typed name (personal mode); spacing tidied."""
    return Identity(" ".join(str(name).split()), IdentitySource.SELF_DECLARED)


def identity_of(who: Identity | str) -> Identity:
    """``who`` as an Identity: a plain string is a typed, self-declared name."""
    return who if isinstance(who, Identity) else self_declared(who)


def local_operator(account: str | None = None) -> Identity:
    """The command line's identity: the machine account running it."""
    return Identity(f"local:{account or getpass.getuser()}", IdentitySource.LOCAL)


def _clean_email(value: object, where: str) -> str:
    text = str(value or "").strip().lower()
    if not text:
        raise AccessDeniedError(f"{where} names nobody; the app cannot tell who you are")
    if len(text) > MAX_NAME or _CONTROL.search(text) or not _EMAIL.match(text):
        raise AccessDeniedError(f"{where} is not an email address the app can record ('{text[:60]}')")
    return text


def _claimed(value: object) -> frozenset[str]:
    if value is None:
        return frozenset()
    items: Iterable[object] = value if isinstance(value, list | tuple) else re.split(r"[\s,]+", str(value))
    return frozenset(str(v).strip().lower() for v in items if str(v).strip())


def from_claims(claims: Mapping[str, object], settings: Settings, now: float | None = None) -> Identity:
    """The signed-in person of an OIDC ID token's claims (``st.user``).

    The account is (``iss``, ``sub``); the name is the ``email`` claim (lower case), believed only when
    ``email_verified`` is the boolean true (not the string "true": a provider that sends that is misconfigured),
    or, with ``CURATION_OIDC_EMAIL_VERIFIED=if-sent``, when the claim is absent. Which account an email belongs to
    is checked against the store at sign-in (:func:`curation.access.roles.account_identity`). The sign-in lasts
    ``CURATION_SIGN_IN_HOURS`` from the token's ``iat`` (when the person signed in).

    Raises:
        AccessDeniedError: no issuer or subject, no usable email claim, or one not marked verified.
    """
    name = _clean_email(claims.get("email"), "the identity provider's email claim")
    verified = claims.get("email_verified")
    if verified is not True and not (verified is None and settings.oidc_email_verified == "if-sent"):
        raise AccessDeniedError("your identity provider has not verified your email address (email_verified: "
                                f"{verified!r}); verify it, then sign in again")
    account = {}
    for key in ("iss", "sub"):
        value = claims.get(key)
        if not isinstance(value, str) or not value.strip() or len(value) > 255 or _CONTROL.search(value):
            raise AccessDeniedError(f"the identity provider's token has no '{key}' claim the app can use; the app "
                                    "cannot tell which account signed in")
        account[key] = value
    issued = claims.get("iat")
    start = float(issued) if isinstance(issued, int | float) else (time.time() if now is None else now)
    roles = _claimed(claims.get(settings.roles_claim)) if settings.roles_claim else frozenset()
    display = str(claims.get("name") or "")[:MAX_NAME]
    return Identity(name, IdentitySource.OIDC, display, roles, start + settings.sign_in_hours * 3600,
                    issuer=account["iss"], subject=account["sub"])


def _loopback(address: str) -> bool:
    if address in LOOPBACK:
        return True
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def _one_header(headers: Mapping[str, str | Sequence[str]], name: str) -> str:
    """The value of header ``name`` (any case), sent once; "" when absent.

    Raises:
        AccessDeniedError: the request carries it more than once: a client's own header passed on beside the
            proxy's (first or last wins depends on the proxy), so neither is believed.
    """
    values: list[str] = []
    for key, value in headers.items():
        if key.lower() == name.lower():
            values += [value] if isinstance(value, str) else list(value)
    if len(values) > 1:
        raise AccessDeniedError(f"the request carries {len(values)} {name} headers; the sign-in proxy must send "
                                "exactly one (make it drop the ones the browser sent)")
    return values[0] if values else ""


def from_proxy(headers: Mapping[str, str | Sequence[str]], server_address: str, settings: Settings,
               since: float | None = None, now: float | None = None) -> Identity:
    """The person a trusted reverse proxy signed in, from the request's headers.

    Trust rests on the socket, not on an address the request reports: an app bound to a loopback address
    accepts connections from this machine only (the kernel refuses others), so its socket peer is local; the
    secret tells the proxy from any other local process. ``st.context.ip_address`` is not the peer: Streamlit's
    server (uvicorn, whose forwarded-allow-ips default trusts loopback) replaces it with the X-Forwarded-For
    client, so behind nginx it is the browser's address, and a direct local connection can set it at will.

    Args:
        headers: the connection's request headers (any case): each name with its value, or every value it was
            sent with (a header sent twice is refused).
        server_address: the address the app listens on (``server.address``).
        since: when this session first saw the sign-in; it lasts ``CURATION_SIGN_IN_HOURS`` from then (the
            headers are the same on every run, so a start taken from ``now`` would never come). None: now.

    Raises:
        CurationError: the set-up is wrong (no secret, the app not on loopback): nobody can sign in.
        AccessDeniedError: this connection did not come through the proxy, the proxy named nobody, or an
            identity header came more than once.
    """
    if not settings.proxy_secret or len(settings.proxy_secret) < 16:
        raise CurationError("CURATION_IDENTITY=proxy needs CURATION_PROXY_SECRET (16 characters or more), the "
                            f"secret your proxy sends in the {PROXY_SECRET_HEADER} header (docs/SECURITY.md)")
    if not _loopback(server_address):
        raise CurationError(f"CURATION_IDENTITY=proxy needs the app on a loopback address behind the proxy, but "
                            f"server.address is '{server_address or '(all addresses)'}'; set it to 127.0.0.1 "
                            "in .streamlit/config.toml")
    sent = _one_header(headers, PROXY_SECRET_HEADER)
    if not hmac.compare_digest(sent.encode(), settings.proxy_secret.encode()):
        raise AccessDeniedError("this connection did not come through the sign-in proxy (its secret header is "
                                "missing or wrong); open the app at the proxy's address")
    email = _one_header(headers, settings.proxy_header)
    name = _clean_email(email, f"the proxy's {settings.proxy_header} header")
    start = since if since is not None else (time.time() if now is None else now)
    return Identity(name, IdentitySource.PROXY, expires_at=start + settings.sign_in_hours * 3600)


def _url_problem(url: str) -> str:
    """What is wrong with an ``[auth]`` URL ("" when nothing): parsed, with a host, https unless on loopback
    (a provider or an app on this machine, as in development), no fragment, a port in range."""
    if _CONTROL.search(url) or any(c.isspace() for c in url):
        return "it has spaces or control characters"
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https"):
        return "it must use https (http only on this machine: localhost, 127.0.0.1, ::1)"
    if not parts.hostname:
        return "it names no host"
    try:
        parts.port  # noqa: B018 (parsing the port raises on one out of range)
    except ValueError:
        return "its port is not a number from 1 to 65535"
    if parts.scheme == "http" and not _loopback(parts.hostname):
        return (f"it must use https: over http the sign-in's codes and tokens cross the network readable "
                f"({parts.hostname} is not this machine)")
    if parts.fragment or url.rstrip().endswith("#"):
        return "it has a fragment (#…), which an OAuth redirect or metadata URL must not"
    return ""


def _secret_problem(secret: str) -> str:
    """What makes a cookie secret guessable ("" when nothing): too short, one unit repeated, or characters whose
    frequencies carry fewer than :data:`MIN_COOKIE_SECRET_BITS` bits."""
    if len(secret) < MIN_COOKIE_SECRET:
        return f"has {len(secret)} characters; use {MIN_COOKIE_SECRET} or more random ones"
    if secret in (secret + secret)[1:-1]:  # a shorter unit repeated ("ab" * 20, "password" * 4)
        return "is one short piece repeated: it is not random"
    counts = Counter(secret).values()
    bits = -sum(n * math.log2(n / len(secret)) for n in counts)
    if bits < MIN_COOKIE_SECRET_BITS:
        return (f"is not random enough: its characters carry about {bits:.0f} bits, under "
                f"{MIN_COOKIE_SECRET_BITS} (it is not random)")
    return ""


def auth_provider(section: Mapping[str, object] | None) -> str | None:
    """Check the ``[auth]`` section of secrets.toml for ``st.login``; returns the provider name to log in with
    (None: the section's own keys) .

    Either the five keys sit in ``[auth]`` itself, or ``[auth]`` holds ``redirect_uri`` and ``cookie_secret`` and
    exactly one ``[auth.<provider>]`` table holds ``client_id``, ``client_secret`` and ``server_metadata_url``.

    Raises:
        CurationError: the section is missing or malformed, saying which key and what to write.
    """
    where = "the [auth] section of .streamlit/secrets.toml"
    if not section:
        raise CurationError(f"CURATION_IDENTITY=oidc, but {where} is missing: add redirect_uri, cookie_secret, "
                            "client_id, client_secret and server_metadata_url (docs/SECURITY.md, Team mode)")
    providers = {k: v for k, v in section.items() if isinstance(v, Mapping)}
    missing = [k for k in ("redirect_uri", "cookie_secret") if not str(section.get(k) or "").strip()]
    if providers and not any(k in section for k in PROVIDER_KEYS):
        if len(providers) != 1:
            raise CurationError(f"{where} has {len(providers)} providers ({', '.join(sorted(providers))}); "
                                "keep one")
        provider, keys = next(iter(providers.items()))
        missing += [f"{provider}.{k}" for k in PROVIDER_KEYS if not str(keys.get(k) or "").strip()]
        url = str(keys.get("server_metadata_url") or "")
    else:
        provider = None
        missing += [k for k in PROVIDER_KEYS if not str(section.get(k) or "").strip()]
        url = str(section.get("server_metadata_url") or "")
    if missing:
        raise CurationError(f"{where} lacks {', '.join(missing)}; the app cannot sign anyone in "
                            "(docs/SECURITY.md, Team mode)")
    redirect = str(section["redirect_uri"])
    if problem := _url_problem(redirect.replace("{port}", "8501")):  # Streamlit fills in its port
        raise CurationError(f"{where}: redirect_uri is '{redirect}'; {problem}")
    if not urlsplit(redirect).path.endswith("/oauth2callback"):
        raise CurationError(f"{where}: redirect_uri is '{redirect}'; its path must end in /oauth2callback: it must "
                            "be the app's address followed by /oauth2callback, e.g. "
                            "https://curation.example.org/oauth2callback")
    if problem := _url_problem(url):
        raise CurationError(f"{where}: server_metadata_url is '{url}'; {problem}. Give your provider's "
                            "/.well-known/openid-configuration URL")
    if problem := _secret_problem(str(section["cookie_secret"])):
        raise CurationError(f"{where}: cookie_secret {problem}; make one with python -c 'import secrets; "
                            "print(secrets.token_hex(32))'")
    return provider
