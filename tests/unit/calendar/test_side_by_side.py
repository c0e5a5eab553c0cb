"""Overlapping events on a time grid share the day's width (issue 32: "overlapping events side by side")."""

from __future__ import annotations

from plmail.calendar.display import side_by_side


def test_events_apart_each_take_the_whole_width() -> None:
    assert side_by_side([(9 * 60, 10 * 60), (15 * 60, 16 * 60)]) == [(0, 1), (0, 1)]


def test_an_event_ending_as_the_next_begins_does_not_overlap_it() -> None:
    assert side_by_side([(540, 600), (600, 660)]) == [(0, 1), (0, 1)]


def test_two_overlapping_events_stand_side_by_side() -> None:
    assert side_by_side([(600, 720), (660, 720)]) == [(0, 2), (1, 2)]


def test_a_group_shares_its_columns_and_a_freed_column_is_reused() -> None:
    # 10-12 overlaps 11-11:30 and 11:30-13; the third takes the second column again, the group has two columns.
    assert side_by_side([(600, 720), (660, 690), (690, 780)]) == [(0, 2), (1, 2), (1, 2)]


def test_three_at_once_take_three_columns_and_a_later_event_starts_a_new_group() -> None:
    spans = [(540, 600), (540, 600), (550, 580), (900, 960)]
    assert side_by_side(spans) == [(0, 3), (1, 3), (2, 3), (0, 1)]


def test_a_zero_length_event_still_gets_a_place() -> None:
    assert side_by_side([(600, 600), (600, 660)]) == [(0, 2), (1, 2)]
