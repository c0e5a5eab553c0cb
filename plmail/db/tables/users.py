from piccolo.columns import (
    JSONB,
    BigInt,
    BigSerial,
    Boolean,
    Bytea,
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
    # Set by an administrator: no sign-in, no session, no app password works while it is set.
    disabled_at = Timestamptz(null=True, default=None)
    # The TOTP secret (RFC 6238), sealed with the installation key; set once enrolment is confirmed.
    totp_secret = Bytea(null=True, default=None)
    totp_enabled_at = Timestamptz(null=True, default=None)
    # The last time step a code was accepted for: a code is good once, even within its window.
    totp_last_step = BigInt(null=True, default=None)
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
    """Counted events per key within a window (failed sign-ins per address and client, per client, per device;
    connection tests per user), so throttling survives a restart."""

    id = BigSerial(primary_key=True)
    key = Varchar(length=400, unique=True)
    failures = Integer(default=0)
    window_started_at = Timestamptz()
    locked_until = Timestamptz(null=True, default=None)


class WebSession(Table, tablename="web_session"):
    """A signed-in browser. The cookie holds a random token; only its SHA-256 is kept, so a database dump
    signs nobody in. Signing out deletes the row, which is what ends the session."""

    id = BigSerial(primary_key=True)
    user = ForeignKey(references=User, on_delete=OnDelete.cascade, null=False, db_column_name="user_id", index=True)
    token_hash = Varchar(length=64, unique=True)
    created_at = Timestamptz()
    last_seen_at = Timestamptz()
    expires_at = Timestamptz()  # the absolute end, whatever the activity
    remember = Boolean(default=False)  # a persistent cookie; otherwise it ends with the browser
    user_agent = Text(default="")
    client_address = Varchar(length=64, default="")
    # When this session last gave the password again (settings that a session alone may not change).
    reauthenticated_at = Timestamptz(null=True, default=None)


class TrustedDevice(Table, tablename="trusted_device"):
    """A browser that signed in successfully before (the device cookie): the sign-in throttle never refuses
    it the right password, and while `second_factor_until` lies ahead it skips the TOTP code."""

    id = BigSerial(primary_key=True)
    user = ForeignKey(references=User, on_delete=OnDelete.cascade, null=False, db_column_name="user_id", index=True)
    token_hash = Varchar(length=64, unique=True)
    created_at = Timestamptz()
    last_seen_at = Timestamptz()
    second_factor_until = Timestamptz(null=True, default=None)
    user_agent = Text(default="")


class RecoveryCode(Table, tablename="recovery_code"):
    """One-time codes for signing in without the authenticator; only their SHA-256 is kept."""

    id = BigSerial(primary_key=True)
    user = ForeignKey(references=User, on_delete=OnDelete.cascade, null=False, db_column_name="user_id", index=True)
    code_hash = Varchar(length=64)
    used_at = Timestamptz(null=True, default=None)
    created_at = Timestamptz()
