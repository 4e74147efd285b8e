"""SensaScale (SPEC §2), one module per step: analysis (1-2), pairing (3), placement
(4: the search in placement, the round's bookkeeping in round_plan, the reservations
in backfill, the fragmentation repair in repack), adjust (5); knobs in config."""

from .config import SensaScaleConfig, SensaScalePaperConfig
from .policy import SensaScalePaperPolicy, SensaScalePolicy

__all__ = ["SensaScaleConfig", "SensaScalePaperConfig", "SensaScalePaperPolicy", "SensaScalePolicy"]
