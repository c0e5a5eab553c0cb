from piccolo.columns import BigInt, BigSerial, Timestamptz, Varchar
from piccolo.table import Table


class JmapChangeLog(Table, tablename="jmap_change_log"):
    """One row per change; the sequence is the JMAP state token for (account, object type).

    account_id is a plain number, not a foreign key: rows are written from long sync jobs, and the
    log must outlive nothing but its own pruning.
    """

    sequence = BigSerial(primary_key=True)
    account_id = BigInt()
    object_type = Varchar(length=32)
    entity_id = Varchar(length=64)
    change_type = Varchar(length=16)
    created_at = Timestamptz()
