"""Whether a message's sender is who the From header claims, as the receiving server judged it (RFC 8601, RFC
7489): the verdict the pipeline stores with each message, and the reason for it."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

# Exchange Online (Microsoft 365, Outlook.com) writes its Authentication-Results without an authserv-id; this
# stands for that form among an account's trusted ids. An empty authserv-id is never accepted from a header.
EXCHANGE_ONLINE = ""


class AuthReason(StrEnum):
    DMARC_PASS = "dmarc-pass"  # noqa: S105 (not a password) DMARC passed for the From domain
    DKIM_ALIGNED = "dkim-aligned"  # no DMARC result; a DKIM signature of the From domain (or its organisation)
    SPF_ALIGNED = "spf-aligned"  # no DMARC result; SPF passed for an envelope sender of the From domain
    DMARC_FAILED = "dmarc-failed"  # DMARC fail, temperror or permerror for the From domain
    DMARC_OTHER_DOMAIN = "dmarc-other-domain"  # the DMARC result is about a domain other than the From domain
    NOT_ALIGNED = "not-aligned"  # something passed, but for another domain than the sender's
    NO_PASS = "no-pass"  # noqa: S105 (not a password) results were given, none passed
    NO_RESULT = "no-result"  # the receiving server's header holds no result
    NO_TRUSTED_HEADER = "no-trusted-header"  # no header written by the account's receiving server
    NO_RECEIVER = "no-receiver"  # the account's receiving server is not known yet
    NO_SENDER = "no-sender"  # the message has no usable From address


@dataclass(frozen=True, slots=True)
class SenderVerdict:
    """`passed` is the only thing that may decide anything; the rest explains it."""

    passed: bool
    reason: AuthReason
    domain: str  # the From header's domain ("" when there is none)
    receiver: str | None = None  # the authserv-id of the header that was believed
    detail: str = ""  # the result that decided, as the header wrote it ("dkim=pass header.d=evil.example")

    def as_json(self) -> dict[str, Any]:
        return {"pass": self.passed, "reason": self.reason.value, "domain": self.domain, "receiver": self.receiver,
                "detail": self.detail}

    @classmethod
    def from_json(cls, value: Any) -> SenderVerdict | None:
        """The stored verdict; None for a message stored before verdicts were (or with an unreadable one)."""
        if not isinstance(value, dict):
            return None
        try:
            reason = AuthReason(str(value.get("reason")))
        except ValueError:
            return None
        receiver = value.get("receiver")
        return cls(value.get("pass") is True, reason, str(value.get("domain") or ""),
                   receiver if isinstance(receiver, str) else None, str(value.get("detail") or ""))
