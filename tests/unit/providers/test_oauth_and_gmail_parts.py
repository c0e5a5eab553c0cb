"""The pure parts of OAuth and Gmail: endpoints, PKCE, token and session state, Google's error JSON, the
label map and the backfill's cooldown. No I/O."""

from __future__ import annotations

import base64
import hashlib
import json
from datetime import UTC, datetime, timedelta

import httpx

from plmail.domain.account_services import OAuthProvider
from plmail.providers.gmail.client import _error_details, _retry_after
from plmail.providers.gmail.importer import BACKFILL_COOLDOWN, BackfillState
from plmail.providers.gmail.labels import LabelMap
from plmail.providers.oauth import PendingAuthorization, TokenSet, endpoints, pending_from_session, pkce_pair

NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def test_real_endpoints_by_default_and_one_host_for_the_fakes() -> None:
    google = endpoints(OAuthProvider.GOOGLE)
    assert google.authorize_url == "https://accounts.google.com/o/oauth2/v2/auth"
    assert google.token_url == "https://oauth2.googleapis.com/token"
    assert google.api_base == "https://gmail.googleapis.com/gmail/v1"
    assert ("access_type", "offline") in google.authorize_params
    microsoft = endpoints(OAuthProvider.MICROSOFT)
    assert microsoft.token_url == "https://login.microsoftonline.com/common/oauth2/v2.0/token"
    assert microsoft.api_base == "https://graph.microsoft.com/v1.0" and "offline_access" in microsoft.scopes
    fake = endpoints(OAuthProvider.GOOGLE, "http://127.0.0.1:5000/")
    assert fake.token_url == "http://127.0.0.1:5000/token" and fake.api_base == "http://127.0.0.1:5000/gmail/v1"
    assert endpoints(OAuthProvider.MICROSOFT, "http://h").identity_url == "http://h/v1.0/me"


def test_pkce_is_s256_of_a_long_verifier() -> None:
    verifier, challenge = pkce_pair()
    assert 43 <= len(verifier) <= 128
    digest = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    assert challenge == digest and pkce_pair()[0] != verifier


def test_tokens_and_pending_sign_ins_round_trip() -> None:
    tokens = TokenSet("at", "rt", NOW + timedelta(hours=1), "scope")
    assert TokenSet.from_json(json.loads(json.dumps(tokens.as_json()))) == tokens
    assert not tokens.expiring(NOW + timedelta(minutes=54))
    assert tokens.expiring(NOW + timedelta(minutes=56))  # five minutes early
    pending = PendingAuthorization(OAuthProvider.MICROSOFT, "state", "verifier", "http://x/cb", NOW, 7)
    assert pending_from_session(pending.as_json()) == pending
    assert pending_from_session({"provider": "nobody"}) is None and pending_from_session(None) is None


def test_googles_quota_error_names_its_limit_and_when_to_retry() -> None:
    body = {"error": {"code": 429, "message": "Quota exceeded", "status": "RESOURCE_EXHAUSTED",
                      "errors": [{"reason": "rateLimitExceeded", "domain": "usageLimits", "message": "x"}],
                      "details": [{"@type": "type.googleapis.com/google.rpc.ErrorInfo",
                                   "metadata": {"quota_limit_value": "6000"}}]}}
    response = httpx.Response(429, json=body, headers={"Retry-After": "17"})
    assert _error_details(response) == ("Quota exceeded", "rateLimitExceeded", 6000)
    assert _retry_after(response) == 17.0
    assert _error_details(httpx.Response(500, text="oops")) == ("oops", "", None)


def test_labels_map_to_places_and_mail_without_one_is_archived() -> None:
    labels = LabelMap({"INBOX": 1, "Label_3": 5}, archive=9)
    assert labels.labels_for(["INBOX", "UNREAD", "CATEGORY_SOCIAL", "Label_3"]) == (1, 5)
    assert labels.labels_for(["IMPORTANT", "CATEGORY_UPDATES"]) == (9,)
    assert labels.knows(["INBOX", "STARRED", "CATEGORY_FORUMS"]) and not labels.knows(["Label_77"])


def test_an_incomplete_pass_cools_down_for_an_hour() -> None:
    assert BackfillState().cooling_until() is None  # never ran: start now
    ended = BackfillState(attempts=2, ended_at=NOW)
    assert ended.cooling_until() == NOW + BACKFILL_COOLDOWN
    assert BackfillState(attempts=2, ended_at=NOW, in_pass=True).cooling_until() is None
