"""The calendar with hours (issue 32), in headless Chromium: day and week on a time grid, two events at 09:00 and 15:00
drawn in one day column six hour-heights apart; a drag moves one to 11:00 (the stored event with it; the calendar has
no provider write path yet, so the stored event is what a provider copy would follow) and Undo restores it; the
keyboard does the same; a drag on the lower edge resizes, a drag on empty grid opens the editor on that span; the
month marks today; no sideways scroll from 320 to 1920 px and axe-core finds nothing, in light and dark; screenshots
in test-output/ui/ for a person to look at. One server, database and browser for the module (tests/e2e/daily_ui.py).
"""

from __future__ import annotations

import asyncio
import uuid
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from playwright.async_api import Locator, Page, expect

from plmail.calendar.editor import EventForm
from plmail.calendar.sources import EventSource
from plmail.calendar.writer import EventDraft
from tests.e2e.daily_ui import AXE, OUTPUT, WIDTHS, World
from tests.e2e.test_browser_daily_ui import _WIDER_THAN_THE_VIEWPORT

pytestmark = pytest.mark.browser

BERLIN = ZoneInfo("Europe/Berlin")  # Eve's zone in the daily-UI world


def _at(day: date, hour: int, minute: int = 0) -> datetime:
    return datetime.combine(day, datetime.min.time(), BERLIN).replace(hour=hour, minute=minute)


def _test_day() -> date:
    """A Wednesday three weeks ahead: a day of its own, away from the week the screenshots show."""
    today = datetime.now(BERLIN).date()
    return today + timedelta(days=21 - today.weekday() + 2)


async def _eve(world: World) -> int:
    return (await world.services.users.by_email("eve@example.org")).id


async def _event(world: World, title: str, start: datetime, end: datetime | None = None, *,
                 all_day: bool = False) -> int:
    user_id = await _eve(world)
    await world.services.calendar.browser.provision(user_id)
    form = EventForm(title=title, start=start.date() if all_day else start,
                     end=(end or start + timedelta(hours=1)) if not all_day else start.date() + timedelta(days=1),
                     all_day=all_day)
    return await world.services.calendar.editor.create(user_id, form, user_zone="Europe/Berlin")


async def _from_mail(world: World, title: str, start: datetime, source: EventSource) -> int:
    """An event as mail brings one (an invitation's .ics, a booking's structured data)."""
    user_id = await _eve(world)
    calendars = await world.services.calendar.browser.provision(user_id)
    default = next(c.id for c in calendars if c.is_default)
    draft = EventDraft(uid=f"{uuid.uuid4()}@example.org", start=start, end=start + timedelta(hours=1), title=title,
                       time_zone="Europe/Berlin", source=source)
    created = await world.services.calendar.writer.create(default, user_id, draft, user_zone="Europe/Berlin",
                                                          reference=start)
    assert created is not None
    return created


async def _stored(world: World, event_id: int) -> tuple[datetime, datetime]:
    event = await world.services.calendar.writer.owned(await _eve(world), event_id)
    assert event is not None
    return event.values.starts_at.astimezone(BERLIN), event.values.ends_at.astimezone(BERLIN)


async def _hour(page: Page) -> float:
    box = await page.locator(".tg-hour").first.bounding_box()
    assert box is not None
    return box["height"]


async def _top(item: Locator) -> float:
    box = await item.bounding_box()
    assert box is not None
    return box["y"]


async def _drag(page: Page, item: Locator, dy: float, *, x_offset: float = 0, at_bottom: bool = False) -> None:
    box = await item.bounding_box()
    assert box is not None
    x = box["x"] + box["width"] / 2
    y = box["y"] + (box["height"] - 2 if at_bottom else min(box["height"] / 2, 12))
    await page.mouse.move(x, y)
    await page.mouse.down()
    for step in range(1, 9):
        await page.mouse.move(x + x_offset * step / 8, y + dy * step / 8)
    await page.mouse.up()


async def test_two_events_stand_six_hours_apart_and_a_drag_moves_one_undo_restores_it(world: World) -> None:
    day = _test_day()
    early = await _event(world, "Standup", _at(day, 9))
    late = await _event(world, "Review", _at(day, 15))
    page = await world.page(width=1366, height=900)
    problems: list[str] = []
    page.on("pageerror", lambda error: problems.append(str(error)))
    await page.goto(f"{world.base}/calendar?view=week&day={day.isoformat()}")
    column = page.locator(f'section.day-col[data-day="{day.isoformat()}"]')
    first, second = column.locator(f'[data-event-id="{early}"]'), column.locator(f'[data-event-id="{late}"]')
    await expect(first).to_contain_text("09:00–10:00")
    await expect(second).to_contain_text("15:00–16:00")
    hour = await _hour(page)
    assert hour >= 40  # an hour is a row a person can aim at
    assert abs((await _top(second)) - (await _top(first)) - 6 * hour) <= 1.5
    first_box, second_box = await first.bounding_box(), await second.bounding_box()
    assert first_box is not None and second_box is not None
    assert abs(first_box["x"] - second_box["x"]) <= 1  # the same day column
    assert abs(first_box["height"] - hour) <= 3  # an hour long

    before = await _top(first)
    await _drag(page, first, 2 * hour)
    toast = page.locator("[data-calendar-toast]")
    await expect(toast).to_contain_text("Standup")
    await expect(column.locator(f'[data-event-id="{early}"]')).to_contain_text("11:00–12:00")
    await page.screenshot(path=OUTPUT / "calendar-grid-moved-with-undo-1366.png")
    assert await _stored(world, early) == (_at(day, 11), _at(day, 12))
    assert abs((await _top(column.locator(f'[data-event-id="{early}"]'))) - before - 2 * hour) <= 1.5
    assert await _stored(world, late) == (_at(day, 15), _at(day, 16))  # the other one stays

    await toast.get_by_role("button", name="Undo").click()
    await expect(page.locator("[data-calendar-toast]")).to_contain_text("undone")
    await expect(column.locator(f'[data-event-id="{early}"]')).to_contain_text("09:00–10:00")
    assert await _stored(world, early) == (_at(day, 9), _at(day, 10))

    # The lower edge: Review grows by an hour.
    await _drag(page, column.locator(f'[data-event-id="{late}"] [data-resize]'), hour, at_bottom=True)
    await expect(page.locator("[data-calendar-toast]")).to_contain_text("Review")
    await expect(column.locator(f'[data-event-id="{late}"]')).to_contain_text("15:00–17:00")
    assert await _stored(world, late) == (_at(day, 15), _at(day, 17))

    # A drag across columns moves to the next day at the same time.
    width = (await column.bounding_box() or {"width": 0})["width"]
    await _drag(page, column.locator(f'[data-event-id="{early}"]'), 0, x_offset=width)
    await expect(page.locator("[data-calendar-toast]")).to_contain_text("Standup")
    following = page.locator(f'section.day-col[data-day="{(day + timedelta(days=1)).isoformat()}"]')
    await expect(following.locator(f'[data-event-id="{early}"]')).to_contain_text("09:00–10:00")
    assert await _stored(world, early) == (_at(day + timedelta(days=1), 9), _at(day + timedelta(days=1), 10))
    assert problems == []
    await page.context.close()


async def test_the_keyboard_moves_and_resizes_an_event_and_undoes(world: World) -> None:
    day = _test_day() + timedelta(days=7)
    event = await _event(world, "Dentist", _at(day, 9))
    page = await world.page(width=1366, height=900)
    await page.goto(f"{world.base}/calendar?view=day&day={day.isoformat()}")
    item = page.locator(f'.grid-event[data-event-id="{event}"]')
    await item.focus()
    for _ in range(8):  # eight quarter hours
        await page.keyboard.press("ArrowDown")
    await expect(page.locator("[data-cal-live]")).to_contain_text("11:00–12:00")
    assert await _stored(world, event) == (_at(day, 9), _at(day, 10))  # nothing saved before Enter
    await page.keyboard.press("Enter")
    await expect(page.locator("[data-calendar-toast]")).to_contain_text("Dentist")
    assert await _stored(world, event) == (_at(day, 11), _at(day, 12))
    await expect(page.locator(f'.grid-event[data-event-id="{event}"]')).to_be_focused()

    await page.keyboard.press("Shift+ArrowDown")
    await page.keyboard.press("Shift+ArrowDown")
    await page.keyboard.press("Enter")
    await expect(page.locator(f'.grid-event[data-event-id="{event}"]')).to_contain_text("11:00–12:30")
    assert await _stored(world, event) == (_at(day, 11), _at(day, 12, 30))

    # Escape forgets what the arrows did.
    await page.keyboard.press("ArrowUp")
    await page.keyboard.press("Escape")
    await page.keyboard.press("Enter")  # nothing pending: Enter opens the event, as on any link
    await expect(page.get_by_role("heading", name="Dentist")).to_be_visible()
    assert await _stored(world, event) == (_at(day, 11), _at(day, 12, 30))

    # z is Undo, as in the mail list (the shortcuts setting is on).
    await page.go_back()
    item = page.locator(f'.grid-event[data-event-id="{event}"]')
    await item.focus()
    await page.keyboard.press("ArrowUp")
    await page.keyboard.press("ArrowUp")
    await page.keyboard.press("Enter")
    await expect(page.locator("[data-calendar-toast]")).to_contain_text("Dentist")
    assert await _stored(world, event) == (_at(day, 10, 30), _at(day, 12))
    await page.locator("[data-calendar-toast] button", has_text="Undo").focus()
    await page.keyboard.press("Enter")
    await expect(page.locator("[data-calendar-toast]")).to_contain_text("undone")
    assert await _stored(world, event) == (_at(day, 11), _at(day, 12, 30))
    await page.context.close()


async def test_a_drag_on_empty_grid_opens_the_editor_on_that_span_and_a_click_on_its_hour(world: World) -> None:
    day = _test_day() + timedelta(days=14)
    page = await world.page(width=1366, height=900)
    await page.goto(f"{world.base}/calendar?view=day&day={day.isoformat()}")
    column = page.locator(f'section.day-col[data-day="{day.isoformat()}"]')
    hour = await _hour(page)
    await column.evaluate(f"c => c.closest('[data-grid-scroll]').scrollTop = {12 * hour}")  # noon at the top
    box = await column.bounding_box()
    assert box is not None
    x = box["x"] + box["width"] / 2
    await page.mouse.move(x, box["y"] + 13 * hour + 2)
    await page.mouse.down()
    await page.mouse.move(x, box["y"] + 14 * hour + hour / 2)
    await page.mouse.move(x, box["y"] + 14 * hour + hour - 4)
    await page.mouse.up()
    await expect(page.get_by_role("heading", name="New event")).to_be_visible()
    assert await page.locator('input[name="start_date"]').input_value() == day.isoformat()
    assert await page.locator('input[name="start_time"]').input_value() == "13:00"
    assert await page.locator('input[name="end_time"]').input_value() == "15:00"
    # The span is checked on the server: an end before the start falls back to the usual hour.
    await page.goto(f"{world.base}/calendar/new?day={day.isoformat()}&start=14:00&end=13:00")
    assert await page.locator('input[name="start_time"]').input_value() == "09:00"
    await page.context.close()


async def test_overlapping_events_side_by_side_colours_and_provenance_badges(world: World) -> None:
    day = _test_day() + timedelta(days=21)
    one = await _event(world, "Planning", _at(day, 10), _at(day, 12))
    two = await _event(world, "Call with Ana", _at(day, 11), _at(day, 12))
    invitation = await _from_mail(world, "Board meeting", _at(day, 14), EventSource.ICS)
    booking = await _from_mail(world, "Table at Lotte", _at(day, 19), EventSource.STRUCTURED_DATA)
    await _event(world, "Holiday", _at(day, 0), all_day=True)
    page = await world.page(width=1366, height=900)
    await page.goto(f"{world.base}/calendar?view=day&day={day.isoformat()}")
    left = await page.locator(f'[data-event-id="{one}"]').bounding_box()
    right = await page.locator(f'[data-event-id="{two}"]').bounding_box()
    assert left is not None and right is not None
    assert right["x"] >= left["x"] + left["width"] - 1  # side by side, not on top of each other
    assert abs(left["width"] - right["width"]) <= 1
    await expect(page.locator(f'[data-event-id="{invitation}"]')).to_contain_text("from an invitation")
    await expect(page.locator(f'[data-event-id="{booking}"]')).to_contain_text("from a booking")
    await expect(page.locator(".tg-allday")).to_contain_text("Holiday")
    colour = await page.locator(f'[data-event-id="{one}"]').evaluate("e => getComputedStyle(e).borderLeftColor")
    assert colour == "rgb(26, 115, 232)"  # the default calendar's blue
    await page.context.close()


def _current_week_monday() -> date:
    today = datetime.now(BERLIN).date()
    return today - timedelta(days=today.weekday())


async def _seed_a_week(world: World) -> None:
    """A believable week around today for the screenshots."""
    monday = _current_week_monday()
    plan = [(0, 9, 0, 30, "Team standup"), (0, 13, 0, 90, "Design review"), (1, 8, 30, 60, "Gym"),
            (1, 11, 0, 120, "Quarterly planning"), (1, 12, 0, 60, "Lunch with Sam"), (2, 10, 0, 45, "1:1 with Lea"),
            (3, 15, 0, 60, "Dentist"), (4, 9, 0, 30, "Team standup"), (4, 17, 30, 150, "Cinema")]
    for weekday, hour, minute, length, title in plan:
        start = _at(monday + timedelta(days=weekday), hour, minute)
        await _event(world, title, start, start + timedelta(minutes=length))
    await _from_mail(world, "Board meeting", _at(monday + timedelta(days=2), 14), EventSource.ICS)
    await _from_mail(world, "Table at Lotte", _at(monday + timedelta(days=3), 19, 30), EventSource.STRUCTURED_DATA)
    await _event(world, "Berlin trip", _at(monday + timedelta(days=4), 0), all_day=True)
    today = datetime.now(BERLIN).date()
    for hour, minute, length, title in ((6, 0, 45, "Run by the river"), (7, 30, 60, "Breakfast with Jo"),
                                        (8, 0, 30, "Call Anna")):
        start = _at(today, hour, minute)
        await _event(world, title, start, start + timedelta(minutes=length))
    await _from_mail(world, "Train to Hamburg", _at(today, 9, 15), EventSource.STRUCTURED_DATA)


@pytest.fixture(scope="module")
async def week_seeded(world: World) -> World:
    await _seed_a_week(world)
    return world


async def test_no_sideways_scroll_axe_clean_screenshots_light_and_dark(week_seeded: World) -> None:
    world = week_seeded
    assert AXE.exists(), f"axe-core is missing at {AXE}: tools/test installs it from the npm registry"
    OUTPUT.mkdir(parents=True, exist_ok=True)
    too_wide: list[str] = []
    found: list[str] = []
    axe = AXE.read_text()
    two_at_a_time = asyncio.Semaphore(2)  # the server renders one page while Chromium checks the other

    async def at(width: int, dark: bool) -> None:
        async with two_at_a_time:
            page = await world.page(width=width, height=844 if width < 768 else 900, dark=dark)
            for view in ("day", "week", "month"):
                await page.goto(f"{world.base}/calendar?view={view}")
                if view != "month":
                    await expect(page.locator("[data-time-grid].laid-out")).to_be_visible()
                    # today is marked and the current time drawn in its column
                    await expect(page.locator(".tg-dayhead.today")).to_have_count(1)
                    await expect(page.locator(".day-col.today [data-now-line]")).to_be_visible()
                else:
                    await expect(page.locator("td.today .day-number")).to_have_attribute("aria-current", "date")
                scroll_width = await page.evaluate("document.documentElement.scrollWidth")
                if scroll_width > width:
                    culprits = await page.evaluate(_WIDER_THAN_THE_VIEWPORT)
                    too_wide.append(f"{view} at {width} px is {scroll_width} px wide: {culprits}")
                shade = "dark" if dark else "light"
                await page.screenshot(path=OUTPUT / f"calendar-grid-{view}-{width}-{shade}.png")
                await page.evaluate(axe)
                result = await page.evaluate("axe.run(document, {resultTypes: ['violations']})")
                for violation in result["violations"]:  # of any impact
                    targets = [n["target"] for n in violation["nodes"][:3]]
                    found.append(f"{view} {width} {shade}: {violation['id']} ({violation['impact']}) {targets}")
            await page.context.close()

    await asyncio.gather(*(at(width, dark) for width in WIDTHS for dark in (False, True)))  # 320 … 1920
    too_wide.sort()
    found.sort()
    assert not too_wide, too_wide
    assert not found, "\n".join(found)


async def test_the_month_on_a_phone_is_dots_and_a_day_list_and_german_words(week_seeded: World) -> None:
    world = week_seeded
    page = await world.page(width=390, height=844)
    await page.goto(f"{world.base}/calendar?view=month")
    await expect(page.locator(".month-list")).to_be_visible()
    await expect(page.locator(".month-list")).to_contain_text("Train to Hamburg")  # today's, first
    await expect(page.locator(".month-list section").first).to_contain_text("Today")
    dot = page.locator("table.month .entry").first
    box = await dot.bounding_box()
    assert box is not None and box["width"] < 10  # a dot, not a title
    # and no link: a 6 px target no finger hits (WCAG 2.5.8); the day's number and the list open the events
    await expect(page.locator("table.month .entry a").first).to_be_hidden()
    wide = await world.page(width=1366)
    await wide.goto(f"{world.base}/calendar?view=month")
    await expect(wide.locator(".month-list")).to_be_hidden()
    await expect(wide.locator("table.month")).to_contain_text("Team standup")
    await expect(wide.locator(".mini-month")).to_be_visible()
    german = await world.page("dora", width=1366)
    await german.goto(f"{world.base}/calendar?view=week")
    await expect(german.locator(".calendar-nav")).to_contain_text("Heute")
    await expect(german.locator(".tg-allday")).to_contain_text("ganztägig")
    await german.screenshot(path=OUTPUT / "calendar-grid-week-1366-de.png")
    for opened in (page, wide, german):
        await opened.context.close()
