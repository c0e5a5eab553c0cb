from piccolo.columns import (
    JSONB,
    BigInt,
    BigSerial,
    Boolean,
    Bytea,
    ForeignKey,
    Integer,
    OnDelete,
    Text,
    Timestamptz,
    Varchar,
)
from piccolo.table import Table

from plmail.db.tables.accounts import Account, Mailbox
from plmail.db.tables.users import User


class MessageThread(Table, tablename="message_thread"):
    id = BigSerial(primary_key=True)
    account = ForeignKey(references=Account, on_delete=OnDelete.cascade, null=False, db_column_name="account_id")
    subject = Text(null=True, default=None)
    normalized_subject = Text(default="")
    last_message_at = Timestamptz(null=True, default=None)
    message_count = Integer(default=0)
    unread_count = Integer(default=0)
    attachment_count = Integer(default=0)
    category = Varchar(length=16, null=True, default=None)  # newest message wins; None = in no tab
    user_category = Varchar(length=16, null=True, default=None)  # from the "file into category" rule action
    category_pinned = Boolean(default=False)
    starred_at = Timestamptz(null=True, default=None)
    snoozed_until = Timestamptz(null=True, default=None)
    threading_method = Varchar(length=20, default="none")
    provider_thread_key = Varchar(length=255, null=True, default=None)
    binned = Boolean(default=False)  # kept by triggers; Python never writes it
    created_at = Timestamptz()
    updated_at = Timestamptz()


class Message(Table, tablename="message"):
    id = BigSerial(primary_key=True)
    account = ForeignKey(references=Account, on_delete=OnDelete.cascade, null=False, db_column_name="account_id")
    mailbox = ForeignKey(references=Mailbox, on_delete=OnDelete.set_null, null=True, db_column_name="mailbox_id")
    thread = ForeignKey(
        references=MessageThread, on_delete=OnDelete.set_null, null=True, db_column_name="thread_id", index=True
    )
    # Where the provider keeps it, in the provider's terms (domain/ingest.py ProviderRef): a container within the
    # account ('' where the provider's ids are account-wide) and the key inside it; the provider reads them.
    provider_container = Text(default="")
    provider_key = Text(null=True, default=None)
    rfc_message_id = Text(null=True, default=None)
    provider_thread_key = Varchar(length=255, null=True, default=None)
    # Labels the source filed it under (Gmail's API, a Takeout mbox's X-Gmail-Labels); the categoriser reads them.
    provider_labels = JSONB(null=True, default=None)
    headers = JSONB(default="{}")  # raw and unnormalised; read through the lower-casing helper
    subject = Text(null=True, default=None)
    from_address = Text(null=True, default=None)
    from_name = Text(null=True, default=None)
    to_addresses = JSONB(default="[]")
    cc_addresses = JSONB(default="[]")
    bcc_addresses = JSONB(default="[]")
    reply_to = JSONB(default="[]")
    sent_at = Timestamptz(null=True, default=None)
    received_at = Timestamptz(null=True, default=None)
    seen_at = Timestamptz(null=True, default=None)  # unread means seen_at IS NULL, never the \Seen flag
    starred_at = Timestamptz(null=True, default=None)
    in_reply_to = JSONB(default="[]")
    thread_references = JSONB(default="[]")
    size = Integer(null=True, default=None)
    has_attachments = Boolean(default=False)
    flags = JSONB(default="[]")
    body_text = Text(null=True, default=None)
    body_html = Text(null=True, default=None)  # raw on purpose: the event extractor needs its JSON-LD
    body_html_safe = Text(null=True, default=None)  # sanitised copy, the only one ever rendered
    preview = Text(default="")
    category = Varchar(length=16, null=True, default=None)
    rule_category = Varchar(length=16, null=True, default=None)
    # Whether the receiving server authenticated the From domain, and why (domain/authentication.py SenderVerdict).
    sender_auth = JSONB(null=True, default=None)
    category_held_at = Timestamptz(null=True, default=None)
    category_released_at = Timestamptz(null=True, default=None)
    ai_categorised_at = Timestamptz(null=True, default=None)  # asked once; set whatever the answer was
    ai_category = Varchar(length=16, null=True, default=None)
    ai_reason = Text(null=True, default=None)
    ai_error = Text(null=True, default=None)
    content_hash = Varchar(length=64, null=True, default=None)
    raw_path = Text(null=True, default=None)  # None: not stored yet (fetched lazily for Gmail and Graph)
    thread_error = Text(null=True, default=None)
    # What was not read of a hostile message (too deep, too many parts, huge headers; mail/bounds.py).
    parse_note = Text(null=True, default=None)
    # The MIME tree as JMAP's bodyStructure needs it (part ids, types, dispositions, sizes); None: not read yet.
    mime_tree = JSONB(null=True, default=None)
    vanished_at = Timestamptz(null=True, default=None)
    flags_touched_at = Timestamptz(null=True, default=None)
    synced_at = Timestamptz(null=True, default=None)
    created_at = Timestamptz()
    updated_at = Timestamptz()


class MessagePart(Table, tablename="message_part"):
    id = BigSerial(primary_key=True)
    message = ForeignKey(
        references=Message, on_delete=OnDelete.cascade, null=False, db_column_name="message_id", index=True
    )
    part_path = Text(default="")  # MIME position such as "2.1" (up to 100 levels deep: mail/bounds.py)
    content_type = Varchar(length=255)
    charset = Varchar(length=64, null=True, default=None)
    filename = Text(null=True, default=None)
    content_id = Varchar(length=255, null=True, default=None)
    disposition = Varchar(length=16, default="attachment")
    size = BigInt(null=True, default=None)
    sha256 = Varchar(length=64, null=True, default=None)  # content address in the blob store; None = lazy stub
    is_inline = Boolean(default=False)
    is_calendar = Boolean(default=False)


class Blob(Table, tablename="blob"):
    """Raw messages and MIME parts, named by the SHA-256 of their bytes, so the same bytes are kept once.
    Only message, part and upload rows lead here, and each of those is scoped to its user."""

    digest = Varchar(length=64, primary_key=True)
    data = Bytea()
    created_at = Timestamptz()


class IngestSkip(Table, tablename="ingest_skip"):
    """A message that could not be stored, with the reason, so it is counted and never silently lost."""

    id = BigSerial(primary_key=True)
    account = ForeignKey(references=Account, on_delete=OnDelete.cascade, null=False, db_column_name="account_id")
    source_ref = Text(default="")
    reason = Text()
    content_hash = Varchar(length=64, null=True, default=None)
    created_at = Timestamptz()


class Contact(Table, tablename="contact"):
    id = BigSerial(primary_key=True)
    user = ForeignKey(references=User, on_delete=OnDelete.cascade, null=False, db_column_name="user_id")
    email = Varchar(length=320)
    display_name = Text(default="")
    frequency = Integer(default=0)
    first_seen_at = Timestamptz()
    last_seen_at = Timestamptz()
    is_correspondent = Boolean(default=False)  # the user has written to this address


class MessageTombstone(Table, tablename="message_tombstone"):
    """A message the user destroyed: kept until its provider has deleted it too, and for a while after, so a
    sync that still sees it there never brings it back. Where it lives is the provider's reference."""

    id = BigSerial(primary_key=True)
    account = ForeignKey(references=Account, on_delete=OnDelete.cascade, null=False, db_column_name="account_id",
                         index=True)
    provider_container = Text(default="")
    provider_key = Text(null=True, default=None)
    rfc_message_id = Text(null=True, default=None)
    attempts = Integer(default=0)
    last_error = Text(default="")
    created_at = Timestamptz()
    done_at = Timestamptz(null=True, default=None)
