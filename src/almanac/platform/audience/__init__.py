"""Who reads which plug-in: reader lists of private plug-ins, the `shown` preference with the
organization default, readers' reports, and the days and records a reader reads. Free of
FastAPI; every clock read comes in as `now`."""

from almanac.platform.audience.days import (
    EncodedPluginDays,
    PluginDays,
    PluginRecords,
    RawRecord,
    RecordHistoryEntry,
    check_language,
    check_range,
    compact_json,
    day_records,
    plugin_records,
    read_days,
    read_days_json,
    shown_plugins,
)
from almanac.platform.audience.models import ReportCategory
from almanac.platform.audience.preferences import (
    SHOWN_KEY,
    Shown,
    set_organization_default,
    set_shown,
    shown_key,
    shown_of,
)
from almanac.platform.audience.readers import (
    MAX_ORGANIZATIONS,
    MAX_PEOPLE,
    ReaderList,
    reader_list,
    set_reader_list,
)
from almanac.platform.audience.reports import (
    ReportView,
    file_report,
    plugin_reports,
    publisher_reports,
)
from almanac.platform.audience.visibility import (
    ReadablePlugin,
    public_plugin,
    readable_plugin,
    visible_plugins,
)

__all__ = [
    "MAX_ORGANIZATIONS",
    "MAX_PEOPLE",
    "SHOWN_KEY",
    "EncodedPluginDays",
    "PluginDays",
    "PluginRecords",
    "RawRecord",
    "ReadablePlugin",
    "ReaderList",
    "RecordHistoryEntry",
    "ReportCategory",
    "ReportView",
    "Shown",
    "check_language",
    "check_range",
    "compact_json",
    "day_records",
    "file_report",
    "plugin_records",
    "plugin_reports",
    "public_plugin",
    "publisher_reports",
    "read_days",
    "read_days_json",
    "readable_plugin",
    "reader_list",
    "set_organization_default",
    "set_reader_list",
    "set_shown",
    "shown_key",
    "shown_of",
    "shown_plugins",
    "visible_plugins",
]
