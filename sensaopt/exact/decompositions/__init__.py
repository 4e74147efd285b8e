"""Decompositions and cuts on top of the exact model: column generation over whole
per-job schedules (:mod:`.colgen`, exact pricing :mod:`.pricing`), branch and price
(:mod:`.branch_price`) and completion cover cuts (:mod:`.cuts`)."""
