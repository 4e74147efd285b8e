"""SensaScale (SPEC §2), one module per step: analysis (1-2), pairing (3),
placement with safe backfill (4), adjust (5); knobs in config."""

from .config import SensaScaleConfig, SensaScalePaperConfig
from .policy import SensaScalePaperPolicy, SensaScalePolicy

__all__ = ["SensaScaleConfig", "SensaScalePaperConfig", "SensaScalePaperPolicy", "SensaScalePolicy"]
