"""Every post-ingest step, in the order it runs: the one list to read or extend. Each step lives in its own module
beside the area that owns its work, and only enqueues (`mail/steps.py` says why)."""

from __future__ import annotations

from plmail.assistant.settings import AssistantSettingsStore
from plmail.assistant.step import ClassifyMailStep
from plmail.calendar.container import CalendarServices
from plmail.db.database import Database
from plmail.domain.ports import Enqueuer, PostIngestStep
from plmail.mail.vacation_step import VacationStep


def post_ingest_steps(db: Database, queues: Enqueuer, *, assistant_settings: AssistantSettingsStore,
                      calendar: CalendarServices) -> tuple[PostIngestStep, ...]:
    return (
        # First: releasing mail held for classification is scheduled before any other step can fail.
        ClassifyMailStep(queues, assistant_settings),
        calendar.step(queues),  # events from invitations and booking confirmations
        calendar.proposal_step(queues),  # proposals read from ordinary sentences
        VacationStep(db, queues),  # the automatic reply, for live mail while the user is away
    )
