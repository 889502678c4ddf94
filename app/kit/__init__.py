"""What every page shares: URL state, presenter mode, exports, language, friendly errors.

Pages import from here; nothing in the kit imports a page, a view or the engine's models.
"""

from kit.answers import answer_heading
from kit.errors import fragment, friendly_errors
from kit.exports import chart, export_buttons, html_chart, table_exports
from kit.i18n import engine_text, language, language_picker, md_escape, t
from kit.page import page_bottom, page_top
from kit.presenter import controls, notes, palette, presenting
from kit.tables import data_table
from kit.url import (
    example_and_text,
    flag,
    ints,
    url_choice,
    url_default,
    url_index,
    url_number,
    url_sync,
)

__all__ = [
    "answer_heading",
    "chart",
    "html_chart",
    "controls",
    "data_table",
    "engine_text",
    "md_escape",
    "example_and_text",
    "export_buttons",
    "flag",
    "fragment",
    "friendly_errors",
    "ints",
    "language",
    "language_picker",
    "notes",
    "page_bottom",
    "page_top",
    "palette",
    "presenting",
    "t",
    "table_exports",
    "url_choice",
    "url_default",
    "url_index",
    "url_number",
    "url_sync",
]
