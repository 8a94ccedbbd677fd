#!/usr/bin/env python3
"""A real OTLP/HTTP logs receiver for the `crashwatch ship` tests: JSON encoding only, decoded strictly.

Every POST is decoded with the official protobuf schema (PyPI `opentelemetry-proto`) through
`google.protobuf.json_format.Parse(..., ExportLogsServiceRequest(), ignore_unknown_fields=False)`,
after a stricter walk of the JSON against the same descriptors for the OTLP/JSON rules that the plain
proto3 JSON mapping does not enforce. What OTLP says (opentelemetry-proto docs/specification.md, "JSON
Protobuf Encoding" and "OTLP/HTTP Request/Response"), and what this receiver does with it:

  - Keys are the lowerCamelCase json names; "original field names are not valid" (json_format accepts
    both) -> a snake_case key is a decode error (400).
  - traceId / spanId are hex strings, not base64 -> anything but 32 / 16 hex digits (or empty) is a
    decode error; they are turned into bytes here before json_format sees them.
  - Enum values MUST be integers, never names (json_format accepts both) -> a name is a decode error.
  - 64-bit integers (timeUnixNano, observedTimeUnixNano, intValue, ...): "encoded as decimal strings, and
    either numbers or strings are accepted when decoding". So a JSON number is ACCEPTED (the request
    decodes, 200) but recorded in the log entry's "warnings": crashwatch's own contract
    (Tests/shipping/CONTRACT.md) promises strings, and test_ship.py fails on any warning.
  - Unknown fields: the spec says a receiver MUST ignore them (forward compatibility). This receiver is a
    test oracle for one sender whose contract lists its fields, so it rejects them (400) to catch typos
    such as "severityNumer" that a lenient receiver would silently drop.
  - Duplicate keys in one JSON object (last one wins in proto3 JSON) are a decode error here: a sender
    that writes one twice has a bug.
  - Content-Type must be application/json (parameters such as charset allowed, recorded); the response
    uses the same type. Content-Encoding: gzip is inflated; any other coding is an error. A chunked
    request body is accepted and recorded.
  - An empty request ({"resourceLogs":[]}, what `ship --check` sends) is answered like any other
    ("If the server receives an empty request ... the server SHOULD respond with success").

A request that fails decoding gets 400 with a google.rpc.Status JSON body {"code":3,"message":...}
(INVALID_ARGUMENT) whatever the fault script says, and its log entry has "error".

Options:
  --port N            listen on 127.0.0.1:N (0: any free port; default 0)
  --bind ADDR         listen address (default 127.0.0.1)
  --port-file F       written (atomically) with the port once listening
  --log F             JSON lines, one per request (and one per failed TLS handshake), flushed at once:
                      {"event":"request","seq","time","method","path","headers":{lower-case name: value
                      or list},"bodyBytes","gzip","chunked","fault","status","outcome","decoded" (the
                      request as MessageToDict, camelCase keys) | "error","warnings","body" (with
                      --log-body: the decoded JSON text), "clientCert" (subject, with TLS), "tls"}
                      A request's entry is written just before its response is sent (so it is in the
                      log before the client sees the answer); if sending fails, an entry
                      {"event":"send-failed","seq","outcome"} follows.
                      {"event":"started","seq","epoch","fault"} when a request's headers are read
                      (before its body), so a test can act while a request is in flight;
                      {"event":"tls-error","time","peer","error"}
  --log-body          also log each request's JSON text (after gunzip) as "body"
  --tls-cert F --tls-key F   serve HTTPS (the handshake runs in the connection's thread)
  --client-ca F       require a client certificate signed by this CA (mutual TLS)
  --fault SCRIPT      responses for successive POSTs, comma separated, the last repeating (default ok):
                        ok                     200, {} (an ExportLogsServiceResponse)
                        NNN[:retry-after=V][:message]   HTTP NNN with a google.rpc.Status JSON body
                                               (message defaults to "injected HTTP NNN"); V is seconds,
                                               or @N for an HTTP-date N seconds from now
                        slow:S                 wait S seconds (after reading the body), then ok
                        reset                  read part of the body, then close with a TCP RST
                                               (SO_LINGER 0), no response
                        close                  read the whole body, then close without a response
                        partial:N:reason       200 with {"partialSuccess":{"rejectedLogRecords":"N",
                                               "errorMessage":"reason"}}
                        bigpartial:B:N:reason  the same answer made B bytes long: the errorMessage first,
                                               then JSON whitespace, then "rejectedLogRecords":"N" at
                                               the very end (a verbose server whose rejection comes
                                               after any client's response-size limit)
                      e.g. "500,500,ok", "429:retry-after=2,ok", "400:bad report", "401".
  --fault-file F      read before every POST; when it exists and is not empty its script replaces
                      --fault, and whenever its text changes the script starts again from its first
                      step (so a test can switch from "500" to "ok" mid-run).

Every POST, whatever its path, takes the next step of the script and is decoded as logs: OTLP lets
clients and servers use other paths than /v1/logs, so the path is only recorded (a test checks it).
SIGTERM or SIGINT stop it with status 0. Python standard
library plus opentelemetry-proto (and its protobuf) only.
"""

import argparse
import base64
import email.utils
import faulthandler
import gzip
import json
import os
import signal
import socket
import ssl
import struct
import sys
import threading
import time
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from google.protobuf import json_format
from google.protobuf.descriptor import FieldDescriptor
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest

MAX_BODY = 64 * 1024 * 1024  # after inflating; OTLP recommends a limit (20 MiB), generous for tests

INT64_TYPES = {FieldDescriptor.TYPE_INT64, FieldDescriptor.TYPE_UINT64, FieldDescriptor.TYPE_FIXED64,
               FieldDescriptor.TYPE_SFIXED64, FieldDescriptor.TYPE_SINT64}
HEX_ID_FIELDS = {"trace_id": 16, "span_id": 8}  # byte lengths of the hex-encoded OTLP ids


class DecodeError(Exception):
    """The request is not a valid OTLP/JSON ExportLogsServiceRequest."""


def _is_repeated(field):
    # protobuf >= 5 has is_repeated; older ones only label.
    repeated = getattr(field, "is_repeated", None)
    if repeated is not None:
        return repeated() if callable(repeated) else repeated
    return field.label == FieldDescriptor.LABEL_REPEATED


def _reject_duplicates(pairs):
    keys = [key for key, _ in pairs]
    duplicates = sorted({key for key in keys if keys.count(key) > 1})
    if duplicates:
        raise DecodeError(f"duplicate key(s) {duplicates} in one JSON object")
    return dict(pairs)


def _check(value, descriptor, path, warnings):
    """Walks a JSON object against a message descriptor: OTLP/JSON rules json_format does not enforce.

    Returns the object with traceId/spanId hex turned into base64 (what json_format expects for bytes).
    """
    if value is None:
        return value
    if not isinstance(value, dict):
        raise DecodeError(f"{path}: expected a JSON object for {descriptor.full_name}, got {type(value).__name__}")
    by_json = {field.json_name: field for field in descriptor.fields}
    by_name = {field.name: field for field in descriptor.fields}
    result = {}
    for key, item in value.items():
        field = by_json.get(key)
        if field is None:
            if key in by_name:
                raise DecodeError(f"{path}.{key}: OTLP/JSON keys are lowerCamelCase ('{by_name[key].json_name}'), "
                                  f"not the proto field name")
            raise DecodeError(f"{path}: unknown field '{key}' in {descriptor.full_name}")
        where = f"{path}.{key}"
        if _is_repeated(field):
            if item is None:
                result[key] = item
                continue
            if not isinstance(item, list):
                raise DecodeError(f"{where}: expected a JSON array, got {type(item).__name__}")
            result[key] = [_check_scalar_or_message(element, field, f"{where}[{index}]", warnings)
                           for index, element in enumerate(item)]
        else:
            result[key] = _check_scalar_or_message(item, field, where, warnings)
    return result


def _check_scalar_or_message(item, field, where, warnings):
    if item is None:
        return item
    if field.type == FieldDescriptor.TYPE_MESSAGE:
        return _check(item, field.message_type, where, warnings)
    if field.type in INT64_TYPES:
        if isinstance(item, bool) or not isinstance(item, (int, str)):
            raise DecodeError(f"{where}: a 64-bit integer must be a decimal string (or a number), got {json.dumps(item)}")
        if isinstance(item, int):
            warnings.append(f"{where}: 64-bit integer sent as a JSON number ({item}), not a decimal string")
        elif not item.lstrip("-").isdigit():
            raise DecodeError(f"{where}: a 64-bit integer string must be decimal digits, got {json.dumps(item)}")
        return item
    if field.type == FieldDescriptor.TYPE_ENUM:
        if isinstance(item, bool) or not isinstance(item, int):
            raise DecodeError(f"{where}: OTLP/JSON enum values must be integers, got {json.dumps(item)}")
        return item
    if field.type == FieldDescriptor.TYPE_BYTES and field.name in HEX_ID_FIELDS:
        size = HEX_ID_FIELDS[field.name]
        if not isinstance(item, str):
            raise DecodeError(f"{where}: expected a hex string, got {json.dumps(item)}")
        if item == "":
            return item
        try:
            raw = bytes.fromhex(item)
        except ValueError:
            raw = None
        if raw is None or len(item) != 2 * size:
            raise DecodeError(f"{where}: OTLP/JSON ids are {2 * size} hex digits (not base64), got {json.dumps(item)}")
        return base64.b64encode(raw).decode()
    return item


def decode_request(body_text):
    """(decoded dict, warnings) of an OTLP/JSON ExportLogsServiceRequest, or raises DecodeError."""
    try:
        document = json.loads(body_text, object_pairs_hook=_reject_duplicates)
    except DecodeError:
        raise
    except ValueError as error:
        raise DecodeError(f"not JSON: {error}")
    warnings = []
    checked = _check(document, ExportLogsServiceRequest.DESCRIPTOR, "$", warnings)
    message = ExportLogsServiceRequest()
    try:
        json_format.Parse(json.dumps(checked), message, ignore_unknown_fields=False)
    except json_format.ParseError as error:
        raise DecodeError(f"json_format.Parse: {error}")
    decoded = json_format.MessageToDict(message, preserving_proto_field_name=False, use_integers_for_enums=True)
    # Give the ids back in OTLP's hex form (MessageToDict writes base64 like any bytes field).
    for resource_logs in decoded.get("resourceLogs", []):
        for scope_logs in resource_logs.get("scopeLogs", []):
            for record in scope_logs.get("logRecords", []):
                for key in ("traceId", "spanId"):
                    if key in record:
                        record[key] = base64.b64decode(record[key]).hex()
    return decoded, warnings


# ---------------------------------------------------------------------------------------------------
# Fault scripts
# ---------------------------------------------------------------------------------------------------

# Further step kinds a receiver built on this one adds (sentry_receiver.py): prefix -> parser of the whole step.
EXTRA_STEPS = {}


def parse_step(text):
    """One step of a fault script as a dict; raises ValueError for a malformed step."""
    text = text.strip()
    for prefix, parse in EXTRA_STEPS.items():
        if text.startswith(prefix):
            return parse(text)
    if text == "ok":
        return {"kind": "ok"}
    if text in ("reset", "close"):
        return {"kind": text}
    if text.startswith("slow:"):
        return {"kind": "slow", "seconds": float(text[5:])}
    if text.startswith("bigpartial:"):
        _, size, count, *reason = text.split(":", 3)
        return {"kind": "bigpartial", "bytes": int(size), "rejected": int(count), "message": reason[0] if reason else ""}
    if text.startswith("partial:"):
        _, count, *reason = text.split(":", 2)
        return {"kind": "partial", "rejected": int(count), "message": reason[0] if reason else ""}
    head, _, rest = text.partition(":")
    if len(head) == 3 and head.isdigit():
        step = {"kind": "status", "status": int(head), "retryAfter": None, "message": f"injected HTTP {head}"}
        if rest.startswith("retry-after="):
            value, _, rest = rest[len("retry-after="):].partition(":")
            if not value:
                raise ValueError(f"empty retry-after in {text!r}")
            step["retryAfter"] = value
        if rest:
            step["message"] = rest
        return step
    raise ValueError(f"unknown fault step {text!r}")


def parse_script(text):
    steps = [parse_step(part) for part in text.split(",") if part.strip()]
    return steps or [{"kind": "ok"}]


class FaultScript:
    """The steps for successive POSTs; thread-safe."""

    def __init__(self, script, fault_file):
        self.base = parse_script(script)
        self.fault_file = fault_file
        self.file_text = None
        self.steps = self.base
        self.index = 0
        self.lock = threading.Lock()

    def next(self):
        with self.lock:
            if self.fault_file:
                try:
                    with open(self.fault_file) as handle:
                        text = handle.read().strip()
                except FileNotFoundError:
                    text = ""
                if text != self.file_text:
                    self.file_text = text
                    self.steps = parse_script(text) if text else self.base
                    self.index = 0
            step = self.steps[min(self.index, len(self.steps) - 1)]
            self.index += 1
            return dict(step)


# ---------------------------------------------------------------------------------------------------
# Server
# ---------------------------------------------------------------------------------------------------

class Log:
    def __init__(self, path):
        self.handle = open(path, "a", encoding="utf-8") if path else None
        self.lock = threading.Lock()
        self.seq = 0

    def next_seq(self):
        with self.lock:
            self.seq += 1
            return self.seq

    def write(self, entry):
        if self.handle is None:
            return
        line = json.dumps(entry, ensure_ascii=False)
        with self.lock:
            self.handle.write(line + "\n")
            self.handle.flush()


def rfc3339(now=None):
    now = time.time() if now is None else now
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now * 1000) % 1000:03d}Z"


def subject_text(certificate):
    if not certificate:
        return None
    parts = []
    for rdn in certificate.get("subject", ()):
        for name, value in rdn:
            short = {"commonName": "CN", "organizationName": "O", "organizationalUnitName": "OU",
                     "countryName": "C"}.get(name, name)
            parts.append(f"{short}={value}")
    return ",".join(parts)


class Abort(Exception):
    """The connection was dropped on purpose (reset/close faults): nothing more to send."""


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, as OTLP clients expect; every response has a length
    timeout = 60  # an idle keep-alive connection is closed after a minute (its thread ends)
    server_version = "otlp-test-receiver/1"
    # The protocol's seams (sentry_receiver.py overrides them): the media type taken, how a body decodes,
    # the body of a success and of an injected error, and steps of its own.
    media_type = "application/json"

    def decode(self, text):
        """(decoded, warnings) of a request body, or raises DecodeError."""
        return decode_request(text)

    def ok_body(self, entry):
        return {}

    def error_body(self, status, message):
        code = {400: 3, 401: 16, 403: 7, 404: 5, 408: 4, 413: 8, 429: 8, 500: 13, 501: 12, 502: 14,
                503: 14, 504: 4}.get(status, 2)
        return {"code": code, "message": message}

    def extra_step(self, step, entry):
        """Answers a step kind this protocol adds (EXTRA_STEPS); False when it is not one."""
        return False

    def log_message(self, format, *args):  # the JSON log says everything; keep stderr quiet
        pass

    # --- body reading -----------------------------------------------------------------------------
    def _read_body(self, limit=None):
        """(bytes, chunked); with `limit`, reads at most that many bytes (for the reset fault)."""
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = bytearray()
            while True:
                size_line = self.rfile.readline(1024)
                if not size_line:
                    raise DecodeError("connection closed inside a chunked body")
                size = int(size_line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline(1024) not in (b"\r\n", b"\n", b""):
                        pass
                    return bytes(data), True
                data += self.rfile.read(size)
                self.rfile.readline(1024)
                if limit is not None and len(data) >= limit:
                    return bytes(data[:limit]), True
                if len(data) > MAX_BODY:
                    raise DecodeError(f"body larger than {MAX_BODY} bytes")
        length = self.headers.get("Content-Length")
        if length is None:
            raise DecodeError("POST without Content-Length or chunked transfer coding")
        length = int(length)
        if length > MAX_BODY:
            raise DecodeError(f"body of {length} bytes is larger than {MAX_BODY}")
        if limit is not None:
            length = min(length, limit)
        return self.rfile.read(length), False

    # --- responses --------------------------------------------------------------------------------
    def _send(self, status, payload, extra_headers=()):
        """Sends a JSON response (`payload` as an object, or bytes already encoded). For a POST, its log
        entry is written first (with outcome "answered"), so the entry is in the log before the client can
        see the answer; when sending then fails, a {"event":"send-failed","seq"} entry follows (readers
        apply it to the request's entry)."""
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        entry = getattr(self, "entry", None)
        if entry is not None:
            entry["status"] = status
            entry["outcome"] = "answered"
            entry["finished"] = time.time()
            self.server.log.write(entry)
            self.entry_written = True
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in extra_headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)
        self.wfile.flush()

    def _drop(self, rst):
        """Closes the connection without a response: with `rst`, SO_LINGER 0 turns the close into a TCP
        RST (and unread request bytes would force one anyway); over TLS no close_notify is sent."""
        sock = self.connection
        try:
            if rst:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            else:
                sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.close_connection = True
        try:
            sock.close()
        except OSError:
            pass
        raise Abort()

    def _headers_dict(self):
        result = {}
        for name, value in self.headers.items():
            key = name.lower()
            if key in result:
                result[key] = (result[key] if isinstance(result[key], list) else [result[key]]) + [value]
            else:
                result[key] = value
        return result

    def do_GET(self):
        self._send(405, {"code": 12, "message": "OTLP/HTTP accepts POST only"}, [("Allow", "POST")])

    do_PUT = do_DELETE = do_HEAD = do_GET

    def do_POST(self):
        server = self.server
        started = time.time()
        entry = {"event": "request", "seq": server.log.next_seq(), "time": rfc3339(started), "epoch": started,
                 "method": "POST", "path": self.path, "headers": self._headers_dict(),
                 "peer": f"{self.client_address[0]}:{self.client_address[1]}", "tls": server.tls is not None,
                 "clientCert": getattr(self, "client_subject", None)}
        step = server.faults.next()
        entry["fault"] = step
        self.entry, self.entry_written = entry, False
        server.log.write({"event": "started", "seq": entry["seq"], "epoch": started, "fault": step})
        try:
            self._handle(entry, step)
        except Abort:
            entry.setdefault("outcome", "dropped")
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError, socket.timeout, OSError) as error:
            outcome = f"client gone before the response: {error}"
            self.close_connection = True
            if self.entry_written:
                server.log.write({"event": "send-failed", "seq": entry["seq"], "outcome": outcome})
            entry["outcome"] = outcome
        finally:
            if not self.entry_written:
                entry["finished"] = time.time()
                server.log.write(entry)
            self.entry = None

    def _handle(self, entry, step):
        if step["kind"] == "reset":
            length = int(self.headers.get("Content-Length") or 0)
            data, _ = self._read_body(limit=max(1, min(length // 2, 4096)) if length else 1)
            entry["bodyBytes"] = len(data)
            entry["status"] = None
            entry["outcome"] = "reset (RST after a partial body)"
            self._drop(rst=True)

        error = None
        try:
            raw, chunked = self._read_body()
        except DecodeError as failure:
            raw, chunked, error = b"", False, str(failure)
        entry["bodyBytes"] = len(raw)
        entry["chunked"] = chunked
        encoding = self.headers.get("Content-Encoding", "identity").strip().lower()
        entry["gzip"] = encoding == "gzip"
        media_type = self.headers.get("Content-Type", "")
        text = None
        if error is None:
            if media_type.split(";")[0].strip().lower() != self.media_type:
                error = f"Content-Type {media_type!r}: this receiver takes {self.media_type} only"
            elif encoding not in ("identity", "gzip"):
                error = f"Content-Encoding {encoding!r}: only gzip (or none) is supported"
            else:
                try:
                    data = gzip.decompress(raw) if encoding == "gzip" else raw
                    if len(data) > MAX_BODY:
                        raise DecodeError(f"inflated body larger than {MAX_BODY} bytes")
                    text = data.decode("utf-8")
                except (OSError, EOFError, zlib.error) as failure:
                    error = f"gzip: {failure}"
                except UnicodeDecodeError as failure:
                    error = f"body is not UTF-8: {failure}"
                except DecodeError as failure:
                    error = str(failure)
        if error is None:
            try:
                entry["decoded"], entry["warnings"] = self.decode(text)
            except DecodeError as failure:
                error = str(failure)
        if self.server.log_body and text is not None:
            entry["body"] = text
        if error is not None:
            entry["error"] = error
            status = getattr(self, "failure_status", None) or 400  # a protocol's decode may name another status
            entry["status"] = status
            self._send(status, self.error_body(status, f"decode error: {error}"))
            entry["outcome"] = "answered"
            return
        if self.extra_step(step, entry):
            entry["outcome"] = "answered"
            return

        kind = step["kind"]
        if kind == "close":
            entry["status"] = None
            entry["outcome"] = "closed without a response"
            self._drop(rst=False)
        if kind == "slow":
            time.sleep(step["seconds"])
            kind = "ok"
        if kind == "ok":
            entry["status"] = 200
            self._send(200, self.ok_body(entry))
        elif kind == "partial":
            entry["status"] = 200
            self._send(200, {"partialSuccess": {"rejectedLogRecords": str(step["rejected"]),
                                                "errorMessage": step["message"]}})
        elif kind == "bigpartial":
            head = json.dumps({"errorMessage": step["message"]})[:-1].encode()  # '{"errorMessage": "…"'
            tail = b', "rejectedLogRecords": "%d"}}' % step["rejected"]
            padding = max(0, step["bytes"] - len(b'{"partialSuccess": ') - len(head) - len(tail))
            body = b'{"partialSuccess": ' + head + b" " * padding + tail
            json.loads(body)  # still one valid ExportLogsServiceResponse
            entry["status"] = 200
            entry["responseBytes"] = len(body)
            self._send(200, body)
        elif kind == "status":
            status = step["status"]
            headers = []
            if step["retryAfter"] is not None:
                value = step["retryAfter"]
                if value.startswith("@"):
                    value = email.utils.formatdate(time.time() + float(value[1:]), usegmt=True)
                headers.append(("Retry-After", value))
                entry["retryAfter"] = value
            entry["status"] = status
            self._send(status, self.error_body(status, step["message"]), headers)
        entry["outcome"] = "answered"


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 128

    def __init__(self, address, log, faults, tls, log_body, handler=Handler, options=None):
        self.log = log
        self.faults = faults
        self.tls = tls
        self.log_body = log_body
        self.handler = handler
        self.options = options
        super().__init__(address, handler)

    def finish_request(self, request, client_address):
        # TLS handshake here, in the connection's own thread: a stuck client cannot block accept().
        subject = None
        if self.tls is not None:
            request.settimeout(10)
            try:
                request = self.tls.wrap_socket(request, server_side=True)
            except (ssl.SSLError, OSError) as error:
                self.log.write({"event": "tls-error", "time": rfc3339(), "epoch": time.time(),
                                "peer": f"{client_address[0]}:{client_address[1]}", "error": str(error)})
                return
            subject = subject_text(request.getpeercert())
            request.settimeout(None)
        handler = self.handler.__new__(self.handler)
        handler.client_subject = subject
        handler.__init__(request, client_address, self)
        if self.tls is not None:
            try:
                request.close()
            except OSError:
                pass

    def handle_error(self, request, client_address):
        pass  # a client that went away mid-request is logged by the handler; no tracebacks


def main(argv, handler=Handler, name="otlp_receiver", add_options=None):
    parser = argparse.ArgumentParser(description=f"{name}: a receiver for the crashwatch ship tests")
    if add_options:
        add_options(parser)
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--bind", default="127.0.0.1")
    parser.add_argument("--port-file")
    parser.add_argument("--log")
    parser.add_argument("--log-body", action="store_true")
    parser.add_argument("--tls-cert")
    parser.add_argument("--tls-key")
    parser.add_argument("--client-ca")
    parser.add_argument("--fault", default="ok")
    parser.add_argument("--fault-file")
    options = parser.parse_args(argv)
    try:
        faults = FaultScript(options.fault, options.fault_file)
    except ValueError as error:
        parser.error(str(error))
    tls = None
    if options.tls_cert:
        tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        tls.load_cert_chain(options.tls_cert, options.tls_key)
        if options.client_ca:
            tls.verify_mode = ssl.CERT_REQUIRED
            tls.load_verify_locations(options.client_ca)
    elif options.client_ca:
        parser.error("--client-ca needs --tls-cert and --tls-key")
    server = Server((options.bind, options.port), Log(options.log), faults, tls, options.log_body, handler, options)

    def stop(signo, frame):
        print(f"{name}: signal {signo} from outside: stopping", file=sys.stderr, flush=True)
        threading.Thread(target=server.shutdown, daemon=True).start()
    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    if options.port_file:
        temporary = options.port_file + ".tmp"
        with open(temporary, "w") as handle:
            handle.write(f"{server.server_address[1]}\n")
        os.rename(temporary, options.port_file)
    faulthandler.enable()  # a fatal signal still says where it struck (stderr)
    try:
        server.serve_forever(poll_interval=0.2)
    except BaseException as error:
        print(f"{name}: serve_forever ended by {error!r}", file=sys.stderr, flush=True)
        raise
    print(f"{name}: stopped by a signal", file=sys.stderr, flush=True)
    server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
