"""Calendar: events extracted from mail, their recurrence, and the JSCalendar shapes they are stored in."""
