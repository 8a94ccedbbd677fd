#!/usr/bin/env python3
"""A scripted Sentry envelope receiver for the `crashwatch ship --sentry` tests: otlp_receiver.py's server,
log and fault scripts, with the Sentry envelope protocol in place of OTLP/JSON.

What it checks of every POST (Sentry's developer documentation, "Envelopes" and "Authentication"):
  - Content-Type application/x-sentry-envelope (gzip inflated as for OTLP);
  - X-Sentry-Auth: `Sentry sentry_version=7, sentry_client=…, sentry_key=KEY` with the --key given
    (anything else: 401, as a server refuses an unknown key), and the path /api/<--project>/envelope/
    (else 404);
  - the envelope: a header line (a JSON object; with items, its event_id is 32 hex digits and its dsn
    names the same key and project), then for each item a header line with "type" and "length" and exactly
    that many payload bytes followed by a newline (or the end); an event item's payload is a JSON object
    whose event_id equals the header's. An envelope without items (`ship --check`) is accepted.
  A body that breaks one of these gets 400 {"detail": "decode error: …"}.

The log entry's "decoded" is {"header": {...}, "items": [{"header": {...}, "event": {...}}]}.

Fault steps: those of otlp_receiver.py (ok answers {"id": event_id}; NNN[:retry-after=V][:message] answers
{"detail": message}), plus
  ratelimit:S[:CATEGORIES]    429 with X-Sentry-Rate-Limits "S:CATEGORIES:key" (CATEGORIES ';'-separated,
                              empty: all) and no Retry-After
  okratelimit:S[:CATEGORIES]  200 (the event is taken) with the same header: hold back for S seconds
Options: those of otlp_receiver.py, plus --key KEY (default "testkey") and --project ID (default 42).
"""

import json
import re
import sys

import otlp_receiver
from otlp_receiver import DecodeError, Handler

HEX32 = re.compile(r"^[0-9a-f]{32}$")


def _parse_rate_limit(text):
    kind, _, rest = text.partition(":")
    seconds, _, categories = rest.partition(":")
    if not seconds:
        raise ValueError(f"{kind} needs seconds: {text!r}")
    return {"kind": kind, "seconds": seconds, "categories": categories}


otlp_receiver.EXTRA_STEPS["ratelimit:"] = _parse_rate_limit
otlp_receiver.EXTRA_STEPS["okratelimit:"] = _parse_rate_limit


def _auth_fields(value):
    """The key=value pairs of an X-Sentry-Auth header, or None when it is not one."""
    if not value or not value.startswith("Sentry "):
        return None
    fields = {}
    for part in value[len("Sentry "):].split(","):
        key, equals, item = part.strip().partition("=")
        if not equals:
            return None
        fields[key] = item
    return fields


def parse_envelope(raw):
    """{"header", "items"} of an envelope's bytes, or raises DecodeError."""
    def line_at(offset):
        end = raw.find(b"\n", offset)
        return (raw[offset:], len(raw)) if end < 0 else (raw[offset:end], end + 1)

    def json_object(text, what):
        try:
            value = json.loads(text)
        except ValueError as error:
            raise DecodeError(f"{what} is not JSON: {error}")
        if not isinstance(value, dict):
            raise DecodeError(f"{what} is not a JSON object")
        return value

    header_line, offset = line_at(0)
    header = json_object(header_line, "the envelope header")
    items = []
    while offset < len(raw):
        item_line, offset = line_at(offset)
        if not item_line.strip():
            continue
        item_header = json_object(item_line, f"item {len(items)}'s header")
        length = item_header.get("length")
        if not isinstance(length, int) or isinstance(length, bool) or length < 0:
            raise DecodeError(f"item {len(items)}'s header has no length (crashwatch always gives one): {item_header}")
        payload = raw[offset:offset + length]
        if len(payload) != length:
            raise DecodeError(f"item {len(items)}: length {length} but only {len(payload)} bytes follow")
        offset += length
        if offset < len(raw):
            if raw[offset:offset + 1] != b"\n":
                raise DecodeError(f"item {len(items)}: its payload is not followed by a newline")
            offset += 1
        item = {"header": item_header}
        if item_header.get("type") == "event":
            item["event"] = json_object(payload, f"item {len(items)}'s event")
        items.append(item)
    return {"header": header, "items": items}


class SentryHandler(Handler):
    server_version = "sentry-test-receiver/1"
    media_type = "application/x-sentry-envelope"

    def decode(self, text):
        self.failure_status = None
        options = self.server.options
        fields = _auth_fields(self.headers.get("X-Sentry-Auth"))
        if fields is None or fields.get("sentry_key") != options.key or fields.get("sentry_version") != "7" \
                or not fields.get("sentry_client"):
            self.failure_status = 401
            raise DecodeError(f"bad X-Sentry-Auth: {self.headers.get('X-Sentry-Auth')!r}")
        if self.path != f"/api/{options.project}/envelope/":
            self.failure_status = 404
            raise DecodeError(f"no project at {self.path}")
        envelope = parse_envelope(text.encode("utf-8"))
        header = envelope["header"]
        dsn = header.get("dsn", "")
        if not re.match(rf"^https?://{re.escape(options.key)}@[^/]+/(.*/)?{options.project}$", dsn):
            raise DecodeError(f"the envelope header's dsn {dsn!r} is not this project's")
        if envelope["items"]:
            event_id = header.get("event_id")
            if not isinstance(event_id, str) or not HEX32.match(event_id):
                raise DecodeError(f"the envelope header's event_id {event_id!r} is not 32 hex digits")
            for item in envelope["items"]:
                if "event" in item and item["event"].get("event_id") != event_id:
                    raise DecodeError("the event's event_id differs from the envelope header's")
        return envelope, []

    def ok_body(self, entry):
        return {"id": (entry.get("decoded") or {}).get("header", {}).get("event_id")}

    def error_body(self, status, message):
        return {"detail": message}

    def extra_step(self, step, entry):
        if step["kind"] not in ("ratelimit", "okratelimit"):
            return False
        value = f"{step['seconds']}:{step['categories']}:key"
        entry["rateLimits"] = value
        status = 429 if step["kind"] == "ratelimit" else 200
        entry["status"] = status
        body = self.ok_body(entry) if status == 200 else {"detail": "rate limited"}
        self._send(status, body, [("X-Sentry-Rate-Limits", value)])
        return True


def add_options(parser):
    parser.add_argument("--key", default="testkey")
    parser.add_argument("--project", default="42")


if __name__ == "__main__":
    sys.exit(otlp_receiver.main(sys.argv[1:], handler=SentryHandler, name="sentry_receiver", add_options=add_options))
