"""Structured draft fields to real RFC 5322 MIME, with the stdlib `email` package.

Every header value and address is checked for line breaks of any kind (CR, LF, and Unicode's U+0085,
U+2028, U+2029, VT, FF) and other control characters before anything is built: the policy would refuse
some with a ValueError, but a clear error naming the field is what the person typing deserves, and no
value can smuggle in a header of its own. Address headers are written here, not folded by the stdlib:
its folder drops the quotes around a long display name with a comma ("Dr. Ann, Head of …" became the
address "Dr."), so a name that needs more than a short quoted string is sent as RFC 2047 encoded-words.
The message keeps Bcc (it is the copy the user keeps); `wire_bytes` removes it for what is handed to the
transport. Parts: text alone is text/plain; text and HTML are multipart/alternative; images the HTML
names as cid: go beside it in multipart/related; attachments make it multipart/mixed.
"""

from __future__ import annotations

import email
import email.charset
import email.policy
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from email.headerregistry import Address as HeaderAddress
from email.message import EmailMessage
from email.utils import format_datetime, make_msgid
from typing import Any

from plmail.domain.errors import InvalidMessageError, TooLargeError, ValidationError
from plmail.domain.messages import Address
from plmail.domain.outgoing import DraftContent, Envelope, Identity, OutgoingAttachment
from plmail.mail.html_text import html_to_text

MAX_RECIPIENTS = 100
DEFAULT_SIZE_LIMIT = 25 * 1024 * 1024  # an account's default; a server's SMTP SIZE may be lower
# Every C0 and C1 control but TAB (CR, LF, NUL, VT, FF, NEL U+0085 …) and the Unicode line and paragraph
# separators: each is a line break to some reader of the header, or not text at all.
_FORBIDDEN = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]")
# A display name made of atext and spaces needs no quoting (RFC 5322 3.2.3); up to this length it stays plain.
_PLAIN_NAME = re.compile(r"^[A-Za-z0-9!#$%&'*+/=?^_`{|}~ -]+$")
_SHORT_NAME = 60
_LINE = 70  # a folded line's length, inside the 78 that keeps the stdlib from refolding it
_UTF8 = email.charset.Charset("utf-8")
_ADDRESS = re.compile(r"^[^@\s<>()\[\],;:\"]+@[^@\s<>()\[\],;:\"]+$")
_MESSAGE_ID = re.compile(r"^[^<>\s@]+@[^<>\s@]+$")
# Headers a writer may add beside the ones built from the fields: any RFC 5322 field name (printable ASCII but the
# colon) except those the composer writes from its fields and the MIME structure's own (Content-*).
# Auto-Submitted (RFC 3834) marks the automatic replies plmail sends, so other responders stay quiet.
_EXTRA_HEADER = re.compile(r"^[!-9;-~]{1,76}$")
_COMPOSED_HEADERS = frozenset({"from", "to", "cc", "bcc", "reply-to", "subject", "date", "message-id", "in-reply-to",
                               "references", "mime-version"})


def _extra_header_allowed(name: str) -> bool:
    lowered = name.lower()
    return bool(_EXTRA_HEADER.match(name)) and lowered not in _COMPOSED_HEADERS and not lowered.startswith("content-")


def _part_headers(headers: Sequence[tuple[str, str]], field: str) -> list[str]:
    """A body part's own fields as header lines (Content-Type, -Disposition, -ID and -Transfer-Encoding are the
    composer's)."""
    lines = []
    for name, value in headers:
        lowered = name.lower()
        if not _EXTRA_HEADER.match(name) or lowered in (
                "content-type", "content-disposition", "content-id", "content-transfer-encoding", "mime-version"):
            raise ValidationError(f"The header {name!r} cannot be set on a part.", field=field)
        lines.append(f"{name}: {check_header(value, name)}")
    return lines


@dataclass(frozen=True, slots=True)
class ComposedMessage:
    message_id: str  # without angle brackets
    raw: bytes  # the copy kept (Bcc included)
    envelope: Envelope


def check_header(value: str, field: str) -> str:
    """A header value with no line break or control character in it; refused with the field's name otherwise."""
    if _FORBIDDEN.search(value):
        raise ValidationError(f"The {field} field may not contain line breaks or control characters.", field=field)
    return value


def check_address(address: Address, field: str) -> Address:
    check_header(address.name, field)
    check_header(address.address, field)
    if not _ADDRESS.match(address.address.strip()):
        raise ValidationError(f"{address.address!r} is not an email address.", field=field)
    return Address(address.name.strip(), address.address.strip())


def check_addresses(addresses: Iterable[Address], field: str) -> tuple[Address, ...]:
    return tuple(check_address(a, field) for a in addresses)


def parse_address_list(text: str, field: str) -> tuple[Address, ...]:
    """A pasted list ("Ann <ann@x>, bob@y; carl@z") split into addresses, each checked."""
    check_header(text, field)
    found = [Address(name, addr) for name, addr in email.utils.getaddresses([text.replace(";", ",")]) if addr]
    return check_addresses(found, field)


def _header_address(address: Address) -> HeaderAddress:
    local, _, domain = address.address.rpartition("@")
    return HeaderAddress(display_name=address.name, username=local, domain=domain)


def _set_addresses(message: EmailMessage, name: str, addresses: Sequence[Address]) -> None:
    if addresses:
        message.set_raw(name, address_header(addresses))


def address_header(addresses: Sequence[Address]) -> str:
    """An address header's value, folded: each mailbox's address on a line of its own after its display name,
    the name plain, quoted, or (when long or not ASCII) RFC 2047 encoded-words, so that every reader, and no
    folding, splits it into the addresses it was made of."""
    return ",\r\n ".join(_mailbox(address) for address in addresses)


def _mailbox(address: Address) -> str:
    display = " ".join(address.name.split())
    spec = _header_address(Address("", address.address)).addr_spec
    if not display:
        return spec
    if _PLAIN_NAME.match(display) and len(display) <= _SHORT_NAME:
        return f"{display}\r\n <{spec}>"
    if display.isascii() and display.isprintable():
        quoted = display.replace("\\", "\\\\").replace('"', '\\"')
        if len(quoted) <= _LINE:
            return f'"{quoted}"\r\n <{spec}>'
    # Longer: encoded-words, each on a line of its own. A quoted string folded inside is valid RFC 5322
    # too, but Python's own getaddresses (3.11) splits it at the comma, and so may other readers.
    return "\r\n ".join(_encoded_words(display)) + f"\r\n <{spec}>"


def _encoded_words(text: str) -> list[str]:
    """RFC 2047 encoded-words of at most ``_LINE`` characters, split after a space where one fits: the space
    travels inside the word before the break, because readers drop the whitespace between two words."""
    words: list[str] = []
    current = ""
    for token in re.findall(r"\S+\s*", text):
        for piece in _pieces(token):
            if current and len(_UTF8.header_encode(current + piece)) > _LINE:
                words.append(_UTF8.header_encode(current))
                current = ""
            current += piece
    if current:
        words.append(_UTF8.header_encode(current))
    return words


def _pieces(token: str) -> list[str]:
    """A word longer than one encoded-word holds, cut into pieces that each fit."""
    if len(_UTF8.header_encode(token)) <= _LINE:
        return [token]
    return [token[start:start + 8] for start in range(0, len(token), 8)]


def _ids(values: Iterable[str], field: str) -> list[str]:
    ids = []
    for value in values:
        clean = check_header(value, field).strip().strip("<>")
        if not _MESSAGE_ID.match(clean):
            raise ValidationError(f"{value!r} is not a Message-ID.", field=field)
        ids.append(clean)
    return ids


def compose(identity: Identity, content: DraftContent, *, now: datetime | None = None,
            message_id: str | None = None, size_limit: int = DEFAULT_SIZE_LIMIT) -> ComposedMessage:
    """The draft as MIME, from the identity it is sent as; raises ValidationError naming the field at fault."""
    to = check_addresses(content.to, "to")
    cc = check_addresses(content.cc, "cc")
    bcc = check_addresses(content.bcc, "bcc")
    if len(to) + len(cc) + len(bcc) > MAX_RECIPIENTS:
        raise ValidationError(f"A message can go to at most {MAX_RECIPIENTS} recipients.", field="to")
    subject = check_header(content.subject, "subject")
    sender = check_address(Address(identity.name, identity.email), "from")
    reply_to = check_addresses(content.reply_to if content.reply_to is not None else identity.reply_to, "replyTo")
    domain = identity.domain or "localhost"
    mid = (message_id or make_msgid(domain=domain)).strip().strip("<>")
    if not _MESSAGE_ID.match(mid):
        raise ValidationError("The Message-ID is not valid.", field="messageId")
    in_reply_to = _ids(content.in_reply_to, "inReplyTo")
    references = _ids(content.references, "references")
    for attachment in content.attachments:
        check_header(attachment.filename, "attachment name")
        check_header(attachment.content_type, "attachment type")
        if attachment.content_id is not None:
            check_header(attachment.content_id, "attachment id")

    message = EmailMessage(policy=email.policy.SMTP)
    _set_addresses(message, "From", [sender])
    _set_addresses(message, "To", to)
    _set_addresses(message, "Cc", cc)
    _set_addresses(message, "Bcc", bcc)
    _set_addresses(message, "Reply-To", reply_to)
    if subject:  # none given, none written: RFC 8621 reads a missing Subject as null, an empty one as ""
        message["Subject"] = subject
    message["Date"] = format_datetime((now or datetime.now(UTC)).astimezone(UTC))
    message["Message-ID"] = f"<{mid}>"
    if in_reply_to:
        message["In-Reply-To"] = " ".join(f"<{i}>" for i in in_reply_to)
    if references:
        message["References"] = " ".join(f"<{i}>" for i in references)
    for name, value in content.extra_headers:
        if not _extra_header_allowed(name):
            raise ValidationError(f"The header {name!r} cannot be set here.", field="headers")
        message[name] = check_header(value, name)
    message["MIME-Version"] = "1.0"
    _body(message, content)
    policy = email.policy.SMTPUTF8 if _needs_utf8(sender, to, cc, bcc, reply_to) else email.policy.SMTP
    raw = message.as_bytes(policy=policy)
    if len(raw) > size_limit:
        megabytes = size_limit / (1024 * 1024)
        raise TooLargeError(f"The message is larger than this account allows ({megabytes:.0f} MB).",
                            max_size=size_limit, field="attachments")
    rcpt = tuple(dict.fromkeys(a.address for a in (*to, *cc, *bcc)))
    return ComposedMessage(mid, raw, Envelope(sender.address, rcpt))


def _needs_utf8(*groups: Address | Sequence[Address]) -> bool:
    for group in groups:
        for address in (group,) if isinstance(group, Address) else group:
            if not address.address.isascii():
                return True
    return False


def _body(message: EmailMessage, content: DraftContent) -> None:
    # A client that gives HTML alone still sends a text part: what a plain-text reader sees.
    if content.text_body is not None:
        text = content.text_body
    else:
        text = html_to_text(content.html_body, links=True) if content.html_body is not None else ""
    inline = [a for a in content.attachments
              if a.content_id is not None and a.inline and content.html_body is not None]
    files = [a for a in content.attachments if a not in inline]
    message.set_content(text, subtype="plain", charset="utf-8", cte=_transfer_encoding(text),
                        headers=_part_headers(content.text_headers, "textBody") or None)
    if content.calendar is not None:
        # RFC 6047 §2.4: the iTIP object as an alternative of the text, its method on the Content-Type.
        message.add_alternative(content.calendar.ics, subtype="calendar", charset="utf-8",
                                cte=_transfer_encoding(content.calendar.ics),
                                params={"method": check_header(content.calendar.method, "method")})
    if content.html_body is not None:
        message.add_alternative(content.html_body, subtype="html", charset="utf-8",
                                cte=_transfer_encoding(content.html_body),
                                headers=_part_headers(content.html_headers, "htmlBody") or None)
        if inline:
            payload = message.get_payload()
            assert isinstance(payload, list)
            html_part = next(p for p in payload if isinstance(p, EmailMessage) and p.get_content_type() == "text/html")
            for image in inline:
                maintype, subtype = _split(image.content_type)
                html_part.add_related(image.data, maintype=maintype, subtype=subtype, cid=f"<{image.content_id}>",
                                      filename=image.filename or None, disposition="inline",
                                      headers=_part_headers(image.headers, "attachments") or None)
    for attachment in files:
        _attach(message, attachment)


def _attach(message: EmailMessage, attachment: OutgoingAttachment) -> None:
    maintype, subtype = _split(attachment.content_type)
    if (maintype, subtype) == ("message", "rfc822"):
        attached = email.message_from_bytes(attachment.data, policy=email.policy.compat32)
        message.add_attachment(attached, filename=attachment.filename or None)
        return
    message.add_attachment(attachment.data, maintype=maintype, subtype=subtype, filename=attachment.filename or None,
                           cid=f"<{attachment.content_id}>" if attachment.content_id else None,
                           headers=_part_headers(attachment.headers, "attachments") or None)


def _split(content_type: str) -> tuple[str, str]:
    maintype, _, subtype = content_type.strip().lower().partition("/")
    if not maintype or not subtype or _FORBIDDEN.search(content_type):
        return "application", "octet-stream"
    return maintype, subtype.split(";")[0].strip() or "octet-stream"


def _transfer_encoding(text: str) -> str:
    """7bit where the text allows it, else quoted-printable (readable in any client's source view)."""
    return "7bit" if text.isascii() and all(len(line) <= 998 for line in text.splitlines()) else "quoted-printable"


def wire_bytes(raw: bytes) -> bytes:
    """What goes to the transport: the kept copy without its Bcc header (the envelope carries Bcc)."""
    end = raw.find(b"\r\n\r\n")
    if end < 0:
        raise InvalidMessageError("The message has no header block.")
    head, body = raw[:end + 2], raw[end + 2:]
    lines = re.split(rb"(?<=\r\n)", head)
    kept: list[bytes] = []
    skipping = False
    for line in lines:
        if not line:
            continue
        if line[:1] in (b" ", b"\t"):
            if not skipping:
                kept.append(line)
            continue
        skipping = line.split(b":", 1)[0].strip().lower() == b"bcc"
        if not skipping:
            kept.append(line)
    return b"".join(kept) + body


def envelope_of(raw: bytes) -> Envelope:
    """The envelope a message's own headers name: From, and every To, Cc and Bcc address.

    Read with the modern parser, which decodes encoded-words inside the display name only after splitting
    the mailboxes: compat32's getaddresses split "=?utf-8?q?Dr=2E_Ann=2C?=" or a refolded quoted name at
    its comma and took "Dr." for the sender's address."""
    parsed = email.message_from_bytes(raw, policy=email.policy.default)
    senders = _addresses(parsed, "From")
    recipients = [address for name in ("To", "Cc", "Bcc") for address in _addresses(parsed, name)]
    return Envelope(senders[0] if senders else "", tuple(dict.fromkeys(recipients)))


def _addresses(parsed: email.message.Message, name: str) -> list[str]:
    value: Any
    found: list[str] = []
    for value in parsed.get_all(name) or []:
        try:
            mailboxes = value.addresses  # an AddressHeader under policy.default
            found += [address.addr_spec for address in mailboxes if address.addr_spec]
        except (AttributeError, IndexError, ValueError, TypeError):  # a header the modern parser cannot take
            found += [address for _, address in email.utils.getaddresses([str(value)]) if address]
    return found
