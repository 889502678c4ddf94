"""What every page shares: URL state, friendly errors, exports.

Pages import from here; nothing in the kit imports a page, a view or the engine's models.
"""

from kit.errors import friendly_errors
from kit.exports import export_buttons
from kit.url import url_default, url_sync

__all__ = ["export_buttons", "friendly_errors", "url_default", "url_sync"]
