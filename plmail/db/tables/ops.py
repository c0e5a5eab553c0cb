from piccolo.columns import JSONB, BigSerial, Text, Timestamptz, Varchar
from piccolo.table import Table


class QueueProbe(Table, tablename="queue_probe"):
    """An admin's "is anyone consuming this queue?" check: requested here, stamped by the worker."""

    id = BigSerial(primary_key=True)
    queue = Varchar(length=32)
    requested_at = Timestamptz()
    ran_at = Timestamptz(null=True, default=None)
    worker = Text(null=True, default=None)


class AppSetting(Table, tablename="app_setting"):
    """Installation-wide settings changed from the admin page (the model host, holding mail)."""

    id = BigSerial(primary_key=True)
    key = Varchar(length=64, unique=True)
    value = JSONB(default="{}")
    updated_at = Timestamptz()
