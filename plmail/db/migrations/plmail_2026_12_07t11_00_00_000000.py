"""CalDAV and CardDAV (issue 34): the names clients gave calendar objects, and the contacts area's address books.

`calendar_dav_resource` remembers the href a CalDAV client PUT an event under, so the event is found there again
(clients pick their own names), and the bytes it sent (`body`) with the event's `updated_at` they belong to
(`body_of`): while the event is unchanged since, those bytes are served back as they came (alarms and properties
plmail does not model included), so the PUT may answer with the ETag (RFC 9110 §9.3.4). It has no foreign key on `event_id`: the row outlives a deleted event, so a
sync-collection report can still name the href that went away (RFC 6578 §3.5.1).

`address_book` and `contact_card` are the contacts area's store: one personal book the user edits and one
"From your mail" book filled from the correspondents the contacts step gathered. A deleted card stays as a
tombstone (`deleted`), which sync-collection reports and which keeps a removed gathered card removed; `modseq`
orders every change of a book for its sync token.
"""

from plmail.db.raw_migrations import sql_migration

ID = "2026-12-07T11:00:00:000000"
VERSION = "1.38.0"
DESCRIPTION = "CalDAV resource names, address books and contact cards"

FORWARDS_SQL = r"""
CREATE TABLE IF NOT EXISTS calendar_dav_resource (
    calendar_id integer NOT NULL REFERENCES calendar (id) ON DELETE CASCADE,
    href text NOT NULL,
    user_id integer NOT NULL REFERENCES app_user (id) ON DELETE CASCADE,
    event_id bigint NOT NULL,
    body bytea,
    body_of timestamptz,
    PRIMARY KEY (calendar_id, href)
);
CREATE UNIQUE INDEX IF NOT EXISTS uniq_calendar_dav_resource_event ON calendar_dav_resource (event_id);

CREATE TABLE IF NOT EXISTS address_book (
    id serial PRIMARY KEY,
    user_id integer NOT NULL REFERENCES app_user (id) ON DELETE CASCADE,
    kind text NOT NULL CHECK (kind IN ('personal', 'from_mail')),
    name text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (user_id, kind)
);
CREATE SEQUENCE IF NOT EXISTS contact_card_modseq;
CREATE TABLE IF NOT EXISTS contact_card (
    id bigserial PRIMARY KEY,
    book_id integer NOT NULL REFERENCES address_book (id) ON DELETE CASCADE,
    href text NOT NULL,
    uid text NOT NULL,
    vcard text NOT NULL,
    email text,
    modseq bigint NOT NULL DEFAULT nextval('contact_card_modseq'),
    deleted boolean NOT NULL DEFAULT false,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (book_id, href)
);
CREATE UNIQUE INDEX IF NOT EXISTS uniq_contact_card_uid ON contact_card (book_id, uid) WHERE NOT deleted;
CREATE INDEX IF NOT EXISTS idx_contact_card_modseq ON contact_card (book_id, modseq);
CREATE INDEX IF NOT EXISTS idx_contact_card_email ON contact_card (book_id, email) WHERE email IS NOT NULL;
"""

BACKWARDS_SQL = r"""
DROP TABLE IF EXISTS contact_card;
DROP SEQUENCE IF EXISTS contact_card_modseq;
DROP TABLE IF EXISTS address_book;
DROP TABLE IF EXISTS calendar_dav_resource;
"""

forwards = sql_migration(ID, DESCRIPTION, FORWARDS_SQL, BACKWARDS_SQL)
