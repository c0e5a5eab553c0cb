from piccolo.columns import BigSerial, Text, Timestamptz, Varchar
from piccolo.table import Table


class QueueProbe(Table, tablename="queue_probe"):
    """An admin's "is anyone consuming this queue?" check: requested here, stamped by the worker."""

    id = BigSerial(primary_key=True)
    queue = Varchar(length=32)
    requested_at = Timestamptz()
    ran_at = Timestamptz(null=True, default=None)
    worker = Text(null=True, default=None)
