"""The phases of the exact solve, in the order :mod:`sensaopt.exact.pipeline` runs them:
shortfall (:mod:`.shortfall`), then either deadline-hard (:mod:`.deadline_hard`) or the
loss phases (:mod:`.loss`, :mod:`.lexicographic`); the horizon proof (:mod:`.horizon`)
and the greedy completion of partial schedules (:mod:`.complete`) serve them."""
