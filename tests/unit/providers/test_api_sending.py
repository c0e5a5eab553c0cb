"""The pure parts of sending through Gmail and Graph: how far a request that got no answer went, the envelope
the APIs can honour, and which scopes a Microsoft refresh may ask for. No I/O."""

from __future__ import annotations

import httpx
import pytest

from plmail.domain.account_services import OAuthProvider
from plmail.domain.outgoing import Envelope, OutgoingMessage, SendError, SendFailure
from plmail.providers.api_sending import require_header_envelope, unanswered
from plmail.providers.gmail.client import GmailApiError
from plmail.providers.graph.errors import GraphConnectionError
from plmail.providers.oauth import MAIL_SEND_SCOPE, endpoints

COPY = (b"From: Alex <alex@example.org>\r\nTo: Bob <bob@example.net>\r\nBcc: carol@example.org\r\n"
        b"Subject: Hi\r\n\r\nHello\r\n")


def _raised(error: Exception, cause: BaseException | None) -> Exception:
    try:
        raise error from cause
    except Exception as exc:
        return exc


@pytest.mark.parametrize(("cause", "failure"), [
    (httpx.ConnectError("refused"), SendFailure.TEMPORARY),  # nothing left this machine
    (httpx.ConnectTimeout("slow"), SendFailure.TEMPORARY),
    (httpx.PoolTimeout("busy"), SendFailure.TEMPORARY),
    (httpx.WriteError("reset"), SendFailure.TEMPORARY),  # a request cut short is not carried out
    (httpx.ReadTimeout("no answer"), SendFailure.UNCERTAIN),  # written whole: it may have been sent
    (httpx.RemoteProtocolError("disconnected"), SendFailure.UNCERTAIN),
    (None, SendFailure.TEMPORARY),
])
def test_a_request_without_an_answer_is_placed_by_how_far_it_went(cause: BaseException | None,
                                                                   failure: SendFailure) -> None:
    assert unanswered(_raised(GmailApiError("Gmail could not be reached"), cause)) is failure
    assert unanswered(_raised(GraphConnectionError("Graph could not be reached"), cause)) is failure


def test_the_envelope_must_name_the_recipients_the_headers_name() -> None:
    def outgoing(*rcpt: str) -> OutgoingMessage:
        return OutgoingMessage("m@example.org", Envelope("alex@example.org", rcpt), COPY, COPY)

    require_header_envelope(outgoing("bob@example.net", "CAROL@example.org"), "Gmail")  # Bcc counts, any case
    with pytest.raises(SendError, match=r"adds eve@example\.com") as more:
        require_header_envelope(outgoing("bob@example.net", "carol@example.org", "eve@example.com"), "Gmail")
    assert more.value.failure is SendFailure.PERMANENT
    with pytest.raises(SendError, match=r"leaves out carol@example\.org"):
        require_header_envelope(outgoing("bob@example.net"), "Microsoft")


def test_a_microsoft_refresh_asks_for_mail_send_only_when_the_grant_holds_it() -> None:
    microsoft = endpoints(OAuthProvider.MICROSOFT)
    assert MAIL_SEND_SCOPE in microsoft.scope.split()  # a new consent asks for it
    before = "openid profile email https://graph.microsoft.com/User.Read https://graph.microsoft.com/Mail.ReadWrite"
    assert MAIL_SEND_SCOPE not in microsoft.refresh_scope(before).split()
    assert "https://graph.microsoft.com/Mail.ReadWrite" in microsoft.refresh_scope(before).split()
    assert not microsoft.may_send(before) and not microsoft.may_send("")
    short_names = "Mail.ReadWrite Mail.Send User.Read openid"  # Microsoft may answer without the resource
    assert MAIL_SEND_SCOPE in microsoft.refresh_scope(short_names).split() and microsoft.may_send(short_names)
    google = endpoints(OAuthProvider.GOOGLE)
    assert google.refresh_scope("") == google.scope and google.may_send("")  # gmail.modify covers sending
