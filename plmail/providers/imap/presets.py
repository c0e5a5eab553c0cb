"""IMAP and SMTP server settings for well-known mail domains, so adding an account usually needs only a password.

`files_sent` marks servers that keep a copy of every message their SMTP server sends in the Sent folder
themselves (Gmail, Microsoft, Proton): plmail must not append a second one.
"""

from __future__ import annotations

from dataclasses import dataclass

from plmail.domain.account_services import TlsMode


@dataclass(frozen=True, slots=True)
class SmtpPreset:
    host: str
    port: int
    tls: TlsMode
    files_sent: bool = False


@dataclass(frozen=True, slots=True)
class ImapPreset:
    host: str
    port: int
    tls: TlsMode
    note: str = ""  # what the provider needs beyond the password, shown under the form
    smtp: SmtpPreset | None = None


_NEEDS_APP_LOGIN = "This provider needs an app password, not your normal password."
_GOOGLE = ImapPreset("imap.gmail.com", 993, TlsMode.IMPLICIT, _NEEDS_APP_LOGIN,
                     SmtpPreset("smtp.gmail.com", 465, TlsMode.IMPLICIT, files_sent=True))
_MICROSOFT = ImapPreset("outlook.office365.com", 993, TlsMode.IMPLICIT, _NEEDS_APP_LOGIN,
                        SmtpPreset("smtp.office365.com", 587, TlsMode.STARTTLS, files_sent=True))
_APPLE = ImapPreset("imap.mail.me.com", 993, TlsMode.IMPLICIT, _NEEDS_APP_LOGIN,
                    SmtpPreset("smtp.mail.me.com", 587, TlsMode.STARTTLS))
_GMX = ImapPreset("imap.gmx.net", 993, TlsMode.IMPLICIT, "Allow IMAP access in the GMX settings first.",
                  SmtpPreset("mail.gmx.net", 465, TlsMode.IMPLICIT))
_WEB_DE = ImapPreset("imap.web.de", 993, TlsMode.IMPLICIT, "Allow IMAP access in the WEB.DE settings first.",
                     SmtpPreset("smtp.web.de", 587, TlsMode.STARTTLS))
_YAHOO = ImapPreset("imap.mail.yahoo.com", 993, TlsMode.IMPLICIT, _NEEDS_APP_LOGIN,
                    SmtpPreset("smtp.mail.yahoo.com", 465, TlsMode.IMPLICIT))
_FASTMAIL = ImapPreset("imap.fastmail.com", 993, TlsMode.IMPLICIT, _NEEDS_APP_LOGIN,
                       SmtpPreset("smtp.fastmail.com", 465, TlsMode.IMPLICIT))

_POSTEO = ImapPreset("posteo.de", 993, TlsMode.IMPLICIT, smtp=SmtpPreset("posteo.de", 465, TlsMode.IMPLICIT))

PRESETS: dict[str, ImapPreset] = {
    "gmail.com": _GOOGLE, "googlemail.com": _GOOGLE,
    "outlook.com": _MICROSOFT, "outlook.de": _MICROSOFT, "hotmail.com": _MICROSOFT, "hotmail.de": _MICROSOFT,
    "live.com": _MICROSOFT, "live.de": _MICROSOFT, "msn.com": _MICROSOFT,
    "icloud.com": _APPLE, "me.com": _APPLE, "mac.com": _APPLE,
    "gmx.de": _GMX, "gmx.net": _GMX, "gmx.at": _GMX, "gmx.ch": _GMX,
    "gmx.com": ImapPreset("imap.gmx.com", 993, TlsMode.IMPLICIT,
                          smtp=SmtpPreset("mail.gmx.com", 465, TlsMode.IMPLICIT)),
    "web.de": _WEB_DE,
    "posteo.de": _POSTEO, "posteo.net": _POSTEO,
    "mailbox.org": ImapPreset("imap.mailbox.org", 993, TlsMode.IMPLICIT,
                              smtp=SmtpPreset("smtp.mailbox.org", 465, TlsMode.IMPLICIT)),
    "fastmail.com": _FASTMAIL, "fastmail.fm": _FASTMAIL,
    "yahoo.com": _YAHOO, "yahoo.de": _YAHOO,
    "aol.com": ImapPreset("imap.aol.com", 993, TlsMode.IMPLICIT, _NEEDS_APP_LOGIN,
                          SmtpPreset("smtp.aol.com", 465, TlsMode.IMPLICIT)),
    "t-online.de": ImapPreset("secureimap.t-online.de", 993, TlsMode.IMPLICIT,
                              "Use the e-mail password set in the Telekom customer centre.",
                              SmtpPreset("securesmtp.t-online.de", 465, TlsMode.IMPLICIT)),
    "freenet.de": ImapPreset("mx.freenet.de", 993, TlsMode.IMPLICIT, smtp=SmtpPreset("mx.freenet.de", 587,
                                                                                       TlsMode.STARTTLS)),
    "proton.me": ImapPreset("127.0.0.1", 1143, TlsMode.STARTTLS, "Proton Mail is reached through Proton Bridge.",
                             SmtpPreset("127.0.0.1", 1025, TlsMode.STARTTLS, files_sent=True)),
}


def domain_of(email: str) -> str:
    return email.strip().rpartition("@")[2].lower()


def preset_for(email: str) -> ImapPreset | None:
    """The known settings for the address's domain; for an unknown domain the usual guess, imap.<domain>
    with implicit TLS, marked as a guess by its note."""
    domain = domain_of(email)
    if not domain or "." not in domain:
        return None
    known = PRESETS.get(domain)
    if known is not None:
        return known
    return ImapPreset(f"imap.{domain}", 993, TlsMode.IMPLICIT, "A guess from the domain; check it with your provider.",
                      SmtpPreset(f"smtp.{domain}", 587, TlsMode.STARTTLS))
