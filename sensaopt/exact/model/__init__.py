"""The exact model itself: its data and scaling (:mod:`.data`), the builder with its
variables, constraint families and objective (:mod:`.builder`), the numeric range
check (:mod:`.numeric`), and the way between schedules and model values (:mod:`.values`)."""
