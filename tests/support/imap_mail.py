"""Test messages for the IMAP tests: plain ones numbered by an X-Seq header, and one built to trip parsers."""

from __future__ import annotations


def message(seq: int, *, body: bytes | None = None, subject: str | None = None, size: int = 0) -> bytes:
    """A small RFC 5322 message with CRLF line ends (Dovecot stores and returns them as given)."""
    text = body if body is not None else f"Message number {seq}.\r\n".encode()
    if size > len(text):
        line = b"abcdefghijklmnopqrstuvwxyz0123456789" * 2 + b"\r\n"
        text += line * ((size - len(text)) // len(line) + 1)
    head = (
        f"From: Sender {seq} <sender{seq}@example.org>\r\n"
        "To: someone@example.net\r\n"
        f"Subject: {subject or f'Test {seq}'}\r\n"
        f"Message-ID: <seq-{seq}@plmail.test>\r\n"
        "Date: Sat, 28 Nov 2026 10:00:00 +0000\r\n"
        f"X-Seq: {seq}\r\n"
        "MIME-Version: 1.0\r\n"
        "Content-Type: text/plain; charset=utf-8\r\n"
        "Content-Transfer-Encoding: 8bit\r\n"
        "\r\n"
    ).encode()
    return head + text


def large_message(seq: int, size: int) -> bytes:
    """A message carrying one base64 attachment (a scan); `size` is about its size in bytes."""
    line = b"JVBERi0xLjQKJcfsj6IKNSAwIG9iago8PC9MZW5ndGggNiAwIFIvRmlsdGVyIC9GbGF0ZURlY29kZT4+CnN0cmVhbQp4\r\n"
    return (f"From: Scanner <scanner@example.org>\r\nTo: someone@example.net\r\nSubject: Scan {seq}\r\n"
            f"Message-ID: <seq-{seq}@plmail.test>\r\nDate: Sat, 28 Nov 2026 10:00:00 +0000\r\n"
            "MIME-Version: 1.0\r\nContent-Type: multipart/mixed; boundary=SCAN\r\n\r\n"
            "--SCAN\r\nContent-Type: text/plain\r\n\r\nThe scan you asked for.\r\n"
            "--SCAN\r\nContent-Type: application/pdf; name=scan.pdf\r\n"
            "Content-Disposition: attachment; filename=scan.pdf\r\nContent-Transfer-Encoding: base64\r\n\r\n"
            ).encode() + line * (size // len(line)) + b"--SCAN--\r\n"


# Lines an IMAP response parser might take for protocol: a literal announcement, a closing parenthesis,
# untagged responses, a tagged OK; then 8-bit text in two charsets and a line far over 998 octets.
TRICKY_BODY = (
    b"{10}\r\n"
    b")\r\n"
    b"* 1 EXISTS\r\n"
    b"* 3 FETCH (FLAGS (\\Seen))\r\n"
    b"A1 OK done\r\n"
    b"+ continue\r\n"
    b"(\r\n"
    b"\"unbalanced quote\r\n"
    b"Gr\xc3\xbc\xc3\x9fe aus M\xc3\xbcnchen \xe2\x80\x94 \xf0\x9f\x93\xa7\r\n"
    b"Latin-1: caf\xe9 na\xefve \xa9\r\n"
    + b"long-line-" * 1500 + b"\r\n"
    b".\r\n"
    b"{999999}\r\n"
    b"end)"
)


def tricky_message(seq: int) -> bytes:
    return message(seq, body=TRICKY_BODY, subject="tricky {10} ) * 1 EXISTS")
