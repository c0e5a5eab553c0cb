"""Log set-up for the command line: plain lines, or one JSON object per line (PLMAIL_LOG_FORMAT=json).

The account and job a line is about come from context variables the job workers set before a job runs,
so every line a job's code writes carries them without each call site passing them along.
"""

from __future__ import annotations

import contextvars
import logging
import sys
from typing import Any

from pythonjsonlogger.json import JsonFormatter

current_job_id: contextvars.ContextVar[str | None] = contextvars.ContextVar("plmail_job_id", default=None)
current_account_id: contextvars.ContextVar[int | None] = contextvars.ContextVar("plmail_account_id", default=None)

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


def bind_job(job: Any) -> None:
    """Called before a job runs, in the task whose context the job's own task copies."""
    current_job_id.set(getattr(job, "id", None))
    kwargs = getattr(job, "kwargs", None) or {}
    account = kwargs.get("account_id")
    current_account_id.set(account if isinstance(account, int) else None)


class ContextIds(logging.Filter):
    """Adds job_id and account_id to a record when they are known and the call did not give them."""

    def filter(self, record: logging.LogRecord) -> bool:
        job_id = current_job_id.get()
        if job_id is not None and not hasattr(record, "job_id"):
            record.job_id = job_id
        account_id = current_account_id.get()
        if account_id is not None and not hasattr(record, "account_id"):
            record.account_id = account_id
        return True


def json_formatter() -> logging.Formatter:
    return JsonFormatter(
        "{levelname}{name}{message}",
        style="{",
        rename_fields={"levelname": "level", "name": "logger"},
        timestamp="time",
    )


def configure_logging(level: str, log_format: str = "text") -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(ContextIds())
    handler.setFormatter(json_formatter() if log_format == "json" else logging.Formatter(TEXT_FORMAT))
    root = logging.getLogger()
    for old in list(root.handlers):
        root.removeHandler(old)
    root.addHandler(handler)
    root.setLevel(getattr(logging, level, logging.INFO))
    if level != "DEBUG":
        # saq logs every job at INFO; that drowns everything else on a busy installation.
        logging.getLogger("saq").setLevel(logging.WARNING)
