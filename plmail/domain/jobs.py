"""Every kind of job plmail queues, declared once: its name, where it runs, and how hard it is tried.

Services enqueue a spec through the `Enqueuer` port; the job catalog maps each spec to its thin job
function; the workers run each function under the spec's name. A provider's own job (Gmail's fetch
batch) is declared in that provider's folder with the same `JobSpec`.
"""

from __future__ import annotations

from dataclasses import dataclass

from plmail.domain.enums import QueueName

ENRICH_QUEUES = frozenset({QueueName.ENRICH_LIVE, QueueName.ENRICH, QueueName.ENRICH_BACKLOG})


@dataclass(frozen=True, slots=True)
class JobSpec:
    name: str  # the job's name in the queue table; saq calls the function registered under it
    queue: QueueName  # where it goes unless the caller routes it elsewhere
    also_on: frozenset[QueueName] = frozenset()  # further queues whose workers run it when routed there
    timeout: int = 300
    retries: int = 1
    retry_delay: float = 5.0
    retry_backoff: bool = True
    cron: str | None = None  # croniter syntax (a sixth field means seconds): the workers schedule it themselves

    @property
    def queues(self) -> frozenset[QueueName]:
        return self.also_on | {self.queue}


# --- accounts: syncs, first imports, provider propagation (the ingest queues) --------------------------------
SYNC_ACCOUNT = JobSpec("sync_account", QueueName.INGEST, timeout=1800, retries=4, retry_delay=10.0)
# The fallback poll, for servers without IDLE and anything IDLE missed.
SYNC_ALL_ACCOUNTS = JobSpec("sync_all_accounts", QueueName.INGEST, cron="*/15 * * * *")
IMPORT_MAIL_PAGE = JobSpec("import_mail_page", QueueName.INGEST_BACKLOG, timeout=900, retries=5, retry_delay=10.0)
# On ingest, not on a queue of its own (the seed's export): the ingest worker holds the provider's connection
# and rate budget, and telling a provider about a change is work of that connection.
PROPAGATE_PROVIDER_CHANGES = JobSpec("propagate_provider_changes", QueueName.INGEST, timeout=600, retries=8,
                                     retry_delay=10.0)
PROPAGATE_STRANDED_CHANGES = JobSpec("propagate_stranded_changes", QueueName.INGEST, cron="*/10 * * * *")

# --- writing mail -------------------------------------------------------------------------------------------
# Drafts and Sent copies touch the provider's folders: ingest, where the provider connections are.
PUSH_DRAFT = JobSpec("push_draft", QueueName.INGEST, timeout=300, retries=6, retry_delay=10.0)
DISCARD_DRAFT = JobSpec("discard_draft", QueueName.INGEST, timeout=300, retries=6, retry_delay=10.0)
FILE_SENT_COPY = JobSpec("file_sent_copy", QueueName.INGEST, timeout=300, retries=8, retry_delay=10.0)
# A copy of mail sent elsewhere, kept in a provider account's Sent (JMAP's Email/import), filed at the provider.
# Tried for hours (backoff from 30 s): the copy is safe in plmail meanwhile and the account says why it waits.
FILE_KEPT_COPY = JobSpec("file_kept_copy", QueueName.INGEST, timeout=300, retries=12, retry_delay=30.0)
# The submission itself has a queue of its own: a slow SMTP server delays no sync and no release of held mail.
# Its tries are the outbox's own (it counts them on the submission); saq retries only what the outbox re-raises.
SEND_SUBMISSION = JobSpec("send_submission", QueueName.SEND, timeout=300, retries=6, retry_delay=15.0)
# The safety net: a submission whose job was lost (a worker killed) is queued again; a claimed one nobody
# finished is marked "may have been sent".
SEND_DUE = JobSpec("send_due", QueueName.SEND, cron="* * * * *")
# One attempt: a reply that failed to go is not sent twice (the engine says why in the log).
SEND_VACATION_REPLY = JobSpec("send_vacation_reply", QueueName.SEND, timeout=120, retries=1)

# --- follow-up work for stored mail (the enrich queues, routed by recency and account liveness) --------------
# One attempt only for both: a message that does not parse will not parse on a second attempt, and the job
# already guards each message, so a retry could only repeat what succeeded.
EXTRACT_EVENTS = JobSpec("extract_events", QueueName.ENRICH, also_on=ENRICH_QUEUES, timeout=600, retries=1)
PROPOSE_EVENTS = JobSpec("propose_events", QueueName.ENRICH, also_on=ENRICH_QUEUES, timeout=600, retries=1)
APPLY_RULE_TO_EXISTING = JobSpec("apply_rule_to_existing", QueueName.ENRICH)
RESORT_MAIL = JobSpec("resort_mail", QueueName.ENRICH, timeout=3600, retries=2)
WAKE_SNOOZED = JobSpec("wake_snoozed", QueueName.ENRICH, cron="* * * * *")
# Search vectors of a first import's pages, stored without them (mail/search_index.py): each minute, newest first.
INDEX_SEARCH = JobSpec("index_search", QueueName.ENRICH_BACKLOG, cron="* * * * *", timeout=120)
# The triggers keep the counts; this nightly check re-derives them and logs any drift it repairs.
REPAIR_LABEL_COUNTS = JobSpec("repair_label_counts", QueueName.ENRICH, cron="7 4 * * *", timeout=3600)

# --- the assistant ---------------------------------------------------------------------------------------------
CLASSIFY_MESSAGES = JobSpec("classify_messages", QueueName.ENRICH_BACKLOG, also_on=ENRICH_QUEUES, timeout=1800,
                            retries=1)
RELEASE_HELD = JobSpec("release_held", QueueName.RELEASE, timeout=60, retries=3, retry_delay=1.0)
RELEASE_OVERDUE_HELD = JobSpec("release_overdue_held", QueueName.RELEASE, cron="* * * * *")
CLASSIFY_BACKLOG = JobSpec("classify_backlog", QueueName.ENRICH, cron="*/15 * * * *")

# --- housekeeping ----------------------------------------------------------------------------------------------
# A probe runs on whichever queue it was put on: it proves that some worker consumes that queue.
PROBE_QUEUE = JobSpec("probe_queue", QueueName.INGEST, also_on=frozenset(QueueName), timeout=30, retries=1)
PRUNE_LOGIN_THROTTLE = JobSpec("prune_login_throttle", QueueName.ENRICH, cron="17 * * * *")
PRUNE_QUEUE_PROBES = JobSpec("prune_queue_probes", QueueName.ENRICH, cron="23 3 * * *")
# Calendar reminders to browsers (issue 33): each minute, the occurrences whose reminder time has come.
REMIND_EVENTS = JobSpec("remind_events", QueueName.ENRICH, cron="* * * * *")
PRUNE_APPLIED_ACTIONS = JobSpec("prune_applied_actions", QueueName.ENRICH, cron="29 3 * * *")
SWEEP_BLOBS = JobSpec("sweep_blobs", QueueName.ENRICH, cron="53 3 * * *", timeout=1800)
ABSORB_LEGACY_BLOBS = JobSpec("absorb_legacy_blobs", QueueName.ENRICH, cron="*/10 * * * *", timeout=600)
PRUNE_JMAP = JobSpec("prune_jmap", QueueName.ENRICH, cron="41 4 * * *", timeout=1800)
