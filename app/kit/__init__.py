"""What every page shares: URL state, friendly errors, exports.

Pages import from here; nothing in the kit imports a page, a view or the engine's models.
"""

from kit.answers import answer_heading
from kit.errors import friendly_errors
from kit.exports import export_buttons, table_exports
from kit.i18n import language, language_picker, t
from kit.url import url_default, url_sync

__all__ = [
    "answer_heading",
    "export_buttons",
    "friendly_errors",
    "language",
    "language_picker",
    "t",
    "table_exports",
    "url_default",
    "url_sync",
]
