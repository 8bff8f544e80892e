import io
import json
import logging

from common.log_setup import LoggingConfig, configure_logging


def test_json_lines_to_file_and_text_to_terminal(tmp_path):
    path = tmp_path / "logs" / "aerie.jsonl"
    terminal = io.StringIO()
    configure_logging(LoggingConfig(level="INFO", file=str(path)), stream=terminal)
    log = logging.getLogger("aerie.test")
    log.info("refused goto", extra={"fields": {"event": "refused", "reason": "outside geofence"}})
    log.debug("not shown")
    for handler in logging.getLogger().handlers:
        handler.flush()
    lines = path.read_text().splitlines()
    assert len(lines) == 1
    entry = json.loads(lines[0])
    assert entry["msg"] == "refused goto" and entry["event"] == "refused" and entry["level"] == "INFO"
    assert "refused goto" in terminal.getvalue() and "reason=outside geofence" in terminal.getvalue()
    assert "not shown" not in terminal.getvalue()
    configure_logging(LoggingConfig(level="WARNING"))
