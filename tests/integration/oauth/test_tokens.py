"""Access tokens: refreshed before they expire, once per account however many ask, rotated refresh tokens
kept, a 401 answered by one refresh, and a revoked grant turned into "reconnect" with a clear reason."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime, timedelta

import pytest

from plmail.domain.account_services import OAuthProvider
from plmail.domain.enums import AccountStatus
from plmail.domain.errors import OAuthGrantError
from plmail.domain.errors import is_retryable as retryable
from plmail.providers.oauth import ConnectedIdentity, OAuthTokens, TokenSet
from plmail.providers.oauth_accounts import OAuthServices
from plmail.services import Services
from tests.support.fakes import FakeServer, GmailFake, GraphFake
from tests.support.repos import account_admin


class Clock:
    def __init__(self) -> None:
        self.now = datetime.now(UTC)

    def __call__(self) -> datetime:
        return self.now


async def _connected(services: Services, fake: GmailFake | GraphFake, provider: OAuthProvider, email: str,
                     clock: Clock) -> int:
    user = await services.users.create_user(f"owner-{provider.value}@example.org", "correct horse")
    pair = fake.oauth.issue(email)
    tokens = TokenSet(pair.access_token, pair.refresh_token, clock() + timedelta(seconds=pair.expires_in))
    outcome = await services.providers.get(OAuthServices).connect.connect(
        user.id, ConnectedIdentity(provider, email, "Owner", tokens))
    return outcome.account_id


def _tokens(services: Services, clock: Clock) -> OAuthTokens:
    oauth = services.providers.get(OAuthServices)
    return OAuthTokens(account_admin(services), services.keys.credentials, oauth.http, clock=clock)


async def test_a_token_is_refreshed_before_it_expires_once_for_all_askers(
    services: Services, google: FakeServer[GmailFake],
) -> None:
    clock = Clock()
    account_id = await _connected(services, google.app, OAuthProvider.GOOGLE, "alice@gmail.com", clock)
    account = (await account_admin(services).for_job(account_id)).account  # type: ignore[union-attr]
    tokens = _tokens(services, clock)
    first = await tokens.access_token(account)
    clock.now += timedelta(minutes=50)  # ten minutes left: still good
    assert await tokens.access_token(account) == first
    refreshes = [r for r in google.app.oauth.token_requests if r.grant_type == "refresh_token"]
    assert refreshes == []
    clock.now += timedelta(minutes=6)  # four minutes left: renewed before it runs out
    renewed = await asyncio.gather(*(tokens.access_token(account) for _ in range(5)))
    assert len(set(renewed)) == 1 and renewed[0] != first
    assert len([r for r in google.app.oauth.token_requests if r.grant_type == "refresh_token"]) == 1
    record = await account_admin(services).for_job(account_id)
    assert record is not None and tokens.tokens_of(record).access_token == renewed[0]
    assert renewed[0].encode() not in (record.credentials or b"")


async def test_a_401_gets_one_refresh_and_rotated_refresh_tokens_are_kept(
    services: Services, microsoft: FakeServer[GraphFake],
) -> None:
    await services.providers.get(OAuthServices).apps.save(OAuthProvider.MICROSOFT, client_id=microsoft.app.client_id,
                                                 client_secret=microsoft.app.client_secret)
    microsoft.app.oauth.rotate_refresh_tokens = True
    clock = Clock()
    email = microsoft.app.mailbox.user_principal_name
    account_id = await _connected(services, microsoft.app, OAuthProvider.MICROSOFT, email, clock)
    record = await account_admin(services).for_job(account_id)
    assert record is not None
    tokens = _tokens(services, clock)
    before = tokens.tokens_of(record)
    microsoft.app.oauth.expire_access_tokens()  # the provider ended it early: the API answers 401
    fresh = await tokens.refresh(record.account, rejected=before.access_token)
    assert fresh != before.access_token
    assert microsoft.app.oauth.check_access_token(fresh)[0] is not None
    # another worker that saw the same 401 gets the replacement without a second refresh
    assert await tokens.refresh(record.account, rejected=before.access_token) == fresh
    assert len([r for r in microsoft.app.oauth.token_requests if r.grant_type == "refresh_token"]) == 1
    after = tokens.tokens_of(await account_admin(services).for_job(account_id))  # type: ignore[arg-type]
    assert after.refresh_token != before.refresh_token  # the rotated one is what is stored now


async def test_a_revoked_grant_marks_the_account_and_stops_retrying(
    services: Services, google: FakeServer[GmailFake],
) -> None:
    clock = Clock()
    account_id = await _connected(services, google.app, OAuthProvider.GOOGLE, "alice@gmail.com", clock)
    google.app.oauth.revoke_user("alice@gmail.com")
    account = (await account_admin(services).for_job(account_id)).account  # type: ignore[union-attr]
    with pytest.raises(OAuthGrantError) as raised:
        await _tokens(services, clock).refresh(account)
    assert not retryable(raised.value)
    record = await account_admin(services).for_job(account_id)
    assert record is not None and record.status is AccountStatus.RECONNECT
    assert "Google no longer accepts plmail's access to alice@gmail.com" in record.status_detail
    assert "invalid_grant" in record.status_detail
