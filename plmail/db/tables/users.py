from piccolo.columns import (
    JSONB,
    BigSerial,
    Boolean,
    ForeignKey,
    Integer,
    OnDelete,
    Serial,
    Text,
    Timestamptz,
    Varchar,
)
from piccolo.table import Table


class User(Table, tablename="app_user"):
    id = Serial(primary_key=True)
    email = Varchar(length=320, unique=True)  # stored lower-cased
    display_name = Text(default="")
    password_hash = Text()
    is_admin = Boolean(default=False)
    locale = Varchar(length=8, default="en")
    time_zone = Varchar(length=64, default="UTC")
    # Bumped on password change or "sign out everywhere": cookies carrying an older epoch stop working.
    session_epoch = Integer(default=0)
    settings = JSONB(default="{}")  # per-user preferences such as switched-off inbox tabs
    last_login_at = Timestamptz(null=True, default=None)
    created_at = Timestamptz()
    updated_at = Timestamptz()


class AppPassword(Table, tablename="app_password"):
    """A per-device secret for JMAP clients; only its SHA-256 is kept (the secret is 256 random bits)."""

    id = BigSerial(primary_key=True)
    user = ForeignKey(references=User, on_delete=OnDelete.cascade, null=False, db_column_name="user_id", index=True)
    name = Text()
    secret_hash = Varchar(length=64, unique=True)
    secret_hint = Varchar(length=16, default="")
    last_used_at = Timestamptz(null=True, default=None)
    revoked_at = Timestamptz(null=True, default=None)
    created_at = Timestamptz()


class LoginThrottle(Table, tablename="login_throttle"):
    """Failed sign-ins per key ("email:…" or "ip:…"), so throttling survives a restart."""

    id = BigSerial(primary_key=True)
    key = Varchar(length=400, unique=True)
    failures = Integer(default=0)
    window_started_at = Timestamptz()
    locked_until = Timestamptz(null=True, default=None)
