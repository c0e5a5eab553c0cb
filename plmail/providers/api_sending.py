"""What sending through a provider's HTTP API (Gmail, Microsoft Graph) has in common, apart from SMTP.

Both APIs take the whole message and deliver it to the addresses its own To, Cc and Bcc headers name: there is
no envelope to give. A submission whose envelope names other recipients (JMAP lets a client choose them) is
refused rather than sent to people it did not name, or not sent to people it did.

A request that failed without an answer is placed by when it failed: before the request was written nothing
can have arrived (try again later); once it was written the provider may have sent the message, and it is
never sent again without asking the user, like SMTP after the final dot.
"""

from __future__ import annotations

import httpx

from plmail.domain.outgoing import OutgoingMessage, SendError, SendFailure
from plmail.mail.compose import envelope_of

_NOT_SENT = (httpx.ConnectError, httpx.ConnectTimeout, httpx.PoolTimeout, httpx.WriteError, httpx.WriteTimeout,
             httpx.LocalProtocolError, httpx.UnsupportedProtocol, httpx.ProxyError)


def require_header_envelope(message: OutgoingMessage, provider: str) -> None:
    """Refuse (permanently) an envelope whose recipients differ from those the message's headers name."""
    named = {a.lower() for a in envelope_of(message.copy).rcpt_to}
    wanted = {a.lower() for a in message.envelope.rcpt_to}
    if named == wanted:
        return
    parts = []
    if wanted - named:
        parts.append(f"the envelope adds {', '.join(sorted(wanted - named))}")
    if named - wanted:
        parts.append(f"the envelope leaves out {', '.join(sorted(named - wanted))}")
    raise SendError(f"{provider} sends to the addresses in the message's To, Cc and Bcc and cannot send to an "
                    f"envelope apart from them ({'; '.join(parts)}). Put the recipients in the message instead.",
                    failure=SendFailure.PERMANENT, reason="invalidRecipients")


def unanswered(exc: BaseException) -> SendFailure:
    """How far a request that got no answer went: `exc` is the client's error, raised from httpx's."""
    cause = exc.__cause__
    if not isinstance(cause, httpx.HTTPError) or isinstance(cause, _NOT_SENT):
        return SendFailure.TEMPORARY
    return SendFailure.UNCERTAIN
