"""Repositories for test set-up and checks: the app's services expose services only."""

from __future__ import annotations

from plmail.calendar.repos.events import CalendarEventRepository
from plmail.calendar.repos.objects import CalendarRepository
from plmail.db.repos.account_admin import AccountAdminRepository
from plmail.db.repos.accounts import AccountRepository
from plmail.mail.repos.label_counts import LabelCountRepository
from plmail.services import Services


def account_admin(services: Services) -> AccountAdminRepository:
    return AccountAdminRepository(services.db)


def account_rows(services: Services) -> AccountRepository:
    return AccountRepository(services.db)


def calendar_rows(services: Services) -> CalendarRepository:
    return CalendarRepository(services.db)


def event_rows(services: Services) -> CalendarEventRepository:
    return CalendarEventRepository(services.db)


def label_counts(services: Services) -> LabelCountRepository:
    return LabelCountRepository(services.db)
