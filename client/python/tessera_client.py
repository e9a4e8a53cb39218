"""Python client for tessera-server, from the same server/tessera.proto as the C++ server and client.

    import tessera_client
    with tessera_client.connect("127.0.0.1:7482") as client:
        result = client.execute("SELECT n_name, n_regionkey FROM nation ORDER BY n_name LIMIT 3")
        print(result.column_names, result.rows)

Needs `grpcio` and `grpcio-tools` (pip). The message and stub modules are generated from tessera.proto on first
import, with grpc_tools' own protoc, into a cache directory ($TESSERA_CLIENT_CACHE, else ~/.cache/tessera-client);
they are not checked in because generated protobuf code must match the protobuf runtime installed beside it
(protobuf >= 5 refuses code generated for another version), and grpcio-tools pins a matching runtime.
The .proto is found at $TESSERA_PROTO, else ../../server/tessera.proto from this file (the repository layout).

Values come back as Python types: INTEGER/BIGINT -> int, DOUBLE -> float, DECIMAL -> decimal.Decimal,
CHAR/VARCHAR -> str, BOOLEAN -> bool, DATE -> datetime.date, TIMESTAMP -> datetime.datetime,
INTERVAL -> Interval(months, days, micros), NULL -> None.
Errors raise TesseraError with the gRPC status code (INVALID_ARGUMENT for bad SQL, NOT_FOUND, CANCELLED, ...)
and the server's message, the parser's caret lines included.
"""
import collections
import datetime
import decimal
import hashlib
import importlib
import os
import sys
import tempfile
import threading

import grpc

__all__ = ["connect", "Client", "Result", "RunningQuery", "TesseraError", "Interval", "DEFAULT_PORT"]

DEFAULT_PORT = 7482
# The largest data message of Client.copy_in (the server receives at most its --max-statement-bytes, 1 MiB by
# default, plus a margin).
COPY_CHUNK_BYTES = 256 << 10
Interval = collections.namedtuple("Interval", ["months", "days", "micros"])

_EPOCH_DATE = datetime.date(1970, 1, 1)
_EPOCH_TIMESTAMP = datetime.datetime(1970, 1, 1)
_stubs_lock = threading.Lock()
_stubs = None


def _proto_path():
    path = os.environ.get("TESSERA_PROTO") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), os.pardir, os.pardir, "server", "tessera.proto")
    return os.path.abspath(path)


def _generate(proto, out_dir):
    from grpc_tools import protoc  # pylint: disable=import-outside-toplevel
    import grpc_tools  # pylint: disable=import-outside-toplevel

    include = os.path.join(os.path.dirname(grpc_tools.__file__), "_proto")
    args = ["grpc_tools.protoc", f"-I{os.path.dirname(proto)}", f"-I{include}", f"--python_out={out_dir}",
            f"--grpc_python_out={out_dir}", proto]
    if protoc.main(args) != 0:
        raise RuntimeError(f"cannot generate Python code for {proto}")


def _load_stubs():
    """Returns (tessera_pb2, tessera_pb2_grpc), generating them once per .proto content and grpcio-tools version."""
    global _stubs
    with _stubs_lock:
        if _stubs is not None:
            return _stubs
        proto = _proto_path()
        with open(proto, "rb") as f:
            content = f.read()
        import google.protobuf  # pylint: disable=import-outside-toplevel
        versions = f"{grpc.__version__}/{google.protobuf.__version__}"
        key = hashlib.sha256(content + versions.encode()).hexdigest()[:16]
        cache = os.environ.get("TESSERA_CLIENT_CACHE") or os.path.join(os.path.expanduser("~"), ".cache",
                                                                       "tessera-client")
        target = os.path.join(cache, key)
        if not os.path.exists(os.path.join(target, "tessera_pb2_grpc.py")):
            try:
                os.makedirs(cache, exist_ok=True)
            except OSError:
                cache = os.path.join(tempfile.gettempdir(), "tessera-client")
                target = os.path.join(cache, key)
                os.makedirs(cache, exist_ok=True)
            if not os.path.exists(os.path.join(target, "tessera_pb2_grpc.py")):
                # Generate beside, then rename: concurrent first imports in several processes do not collide.
                staging = tempfile.mkdtemp(prefix=key + ".", dir=cache)
                _generate(proto, staging)
                try:
                    os.rename(staging, target)
                except OSError:  # another process won the race
                    pass
        if target not in sys.path:
            sys.path.insert(0, target)
        _stubs = (importlib.import_module("tessera_pb2"), importlib.import_module("tessera_pb2_grpc"))
        return _stubs


class TesseraError(Exception):
    """A failed call: `code` is a grpc.StatusCode, `message` the server's text."""

    def __init__(self, code, message, unknown_session=False):
        super().__init__(f"{code.name}: {message}")
        self.code = code
        self.message = message
        # The server did not know the session (closed after its idle timeout, or restarted) and ran nothing.
        self.unknown_session = unknown_session

    @staticmethod
    def from_rpc(error):
        trailing = error.trailing_metadata() if hasattr(error, "trailing_metadata") else None
        unknown_session = any(key == "tessera-unknown-session" for key, _ in (trailing or ()))
        return TesseraError(error.code(), error.details() or "", unknown_session)


class Result:
    """A statement's result: columns (name, SQL type name), rows (tuples), and the summary."""

    def __init__(self):
        self.columns = []
        self.rows = []
        self.status_message = ""
        self.rows_affected = 0
        self.returns_rows = False
        self.query_id = 0
        self.execution_us = 0
        self.total_us = 0
        self.data = None  # Client.copy_out without a file: the COPY's bytes

    @property
    def column_names(self):
        return [name for name, _ in self.columns]

    def __repr__(self):
        if self.returns_rows:
            return f"<Result {len(self.rows)} rows, columns {self.column_names}>"
        return f"<Result {self.status_message!r}>"


def _decoder(pb2, column_type):
    """Returns (array name, function from the wire value to the Python value) for one column."""
    kind = column_type.id
    if kind in (pb2.TYPE_INTEGER, pb2.TYPE_BIGINT):
        return "int_values", int
    if kind == pb2.TYPE_BOOLEAN:
        return "int_values", bool
    if kind == pb2.TYPE_DATE:
        return "int_values", lambda v: _EPOCH_DATE + datetime.timedelta(days=v)
    if kind == pb2.TYPE_TIMESTAMP:
        return "int_values", lambda v: _EPOCH_TIMESTAMP + datetime.timedelta(microseconds=v)
    if kind == pb2.TYPE_DOUBLE:
        return "double_values", float
    if kind == pb2.TYPE_DECIMAL:
        scale = -column_type.scale
        if column_type.precision > 18:
            return "string_values", lambda v: decimal.Decimal(int(v)).scaleb(scale)
        return "int_values", lambda v: decimal.Decimal(v).scaleb(scale)
    if kind in (pb2.TYPE_CHAR, pb2.TYPE_VARCHAR):
        return "string_values", lambda v: v.decode("utf-8", errors="replace")
    if kind == pb2.TYPE_INTERVAL:
        return "interval_values", lambda v: Interval(v.months, v.days, v.micros)
    return None, None  # NULL


def _append_batch(pb2, decoders, batch, rows):
    count = batch.row_count
    columns = []
    for (array, decode), column in zip(decoders, batch.columns):
        nulls = column.nulls
        if array is None:
            columns.append([None] * count)
            continue
        values = getattr(column, array)
        if nulls:
            columns.append([None if nulls[i] else decode(values[i]) for i in range(count)])
        else:
            columns.append([decode(v) for v in values])
    rows.extend(zip(*columns) if columns else [()] * count)


class RunningQuery:
    """An Execute in flight (Client.start): its server id at once, its result when done."""

    def __init__(self, client, call):
        self._client = client
        self._call = call
        self._query_id = None

    @property
    def query_id(self):
        if self._query_id is None:
            try:
                metadata = dict(self._call.initial_metadata())
            except grpc.RpcError as error:
                raise TesseraError.from_rpc(error) from None
            self._query_id = int(metadata.get("tessera-query-id", 0))
        return self._query_id

    def cancel(self):
        """Asks the server to cancel this query (the result then raises CANCELLED)."""
        return self._client.cancel(query_id=self.query_id)

    def abandon(self):
        """Drops the call on the client side, as a client that goes away would."""
        self._call.cancel()

    def result(self):
        pb2 = self._client._pb2  # pylint: disable=protected-access
        result = Result()
        decoders = []
        try:
            for response in self._call:
                which = response.WhichOneof("payload")
                if which == "header":
                    result.columns = [(c.name, c.type.sql_name) for c in response.header.columns]
                    decoders = [_decoder(pb2, c.type) for c in response.header.columns]
                    result.returns_rows = True
                elif which == "batch":
                    _append_batch(pb2, decoders, response.batch, result.rows)
                elif which == "summary":
                    summary = response.summary
                    result.status_message = summary.status_message
                    result.rows_affected = summary.rows_affected
                    result.returns_rows = summary.returns_rows
                    result.query_id = summary.query_id
                    result.execution_us = summary.execution_us
                    result.total_us = summary.total_us
        except grpc.RpcError as error:
            raise TesseraError.from_rpc(error) from None
        return result


class Client:
    """One session on a tessera-server. Thread-safe for cancel/progress/list calls from other threads; run one
    execute at a time (the server refuses a second concurrent one with FAILED_PRECONDITION)."""

    def __init__(self, target=f"127.0.0.1:{DEFAULT_PORT}", token=None, tls=False, root_certificates=None,
                 server_name=None, priority=0, settings=None, timeout=10.0, lease_seconds=6):
        self._pb2, pb2_grpc = _load_stubs()
        self._metadata = (("authorization", f"Bearer {token}"),) if token else ()
        options = [("grpc.max_receive_message_length", -1), ("grpc.max_send_message_length", -1)]
        if tls or root_certificates:
            if server_name:
                options.append(("grpc.ssl_target_name_override", server_name))
            credentials = grpc.ssl_channel_credentials(root_certificates=root_certificates)
            self._channel = grpc.secure_channel(target, credentials, options=options)
        else:
            self._channel = grpc.insecure_channel(target, options=options)
        self._stub = pb2_grpc.TesseraStub(self._channel)
        # The lease: a daemon thread renews the session every third of it, so the server frees the session within
        # lease_seconds of this process dying (0: no lease, the server's idle timeout applies).
        self._open_request = self._pb2.OpenSessionRequest(priority=priority, settings=settings or {},
                                                          lease_seconds=lease_seconds)
        self._timeout = timeout
        try:
            self._open_session()
        except TesseraError:
            self._channel.close()
            raise
        self._closed = threading.Event()
        if lease_seconds > 0:
            self._keep_alive = threading.Thread(target=self._renew_lease, args=(lease_seconds / 3,), daemon=True)
            self._keep_alive.start()

    def _renew_lease(self, period):
        while not self._closed.wait(period):
            try:
                self._stub.KeepAlive(self._pb2.KeepAliveRequest(session_id=self.session_id), metadata=self._metadata,
                                     timeout=5)
            except grpc.RpcError:
                pass  # retried at the next period; a session the server forgot is reopened by the next execute

    def _open_session(self):
        response = self._call(self._stub.OpenSession, self._open_request, timeout=self._timeout, wait_for_ready=True)
        self.session_id = response.session_id
        self.settings = dict(response.settings.settings)

    def _call(self, method, request, timeout=None, **kwargs):
        try:
            return method(request, metadata=self._metadata, timeout=timeout, **kwargs)
        except grpc.RpcError as error:
            raise TesseraError.from_rpc(error) from None

    def start(self, sql, priority=0, max_batch_rows=0, timeout=None):
        """Sends `sql` and returns a RunningQuery at once."""
        if isinstance(sql, str):
            sql = sql.encode()  # the request carries UTF-8 bytes (tessera.proto, ExecuteRequest.sql)
        request = self._pb2.ExecuteRequest(session_id=self.session_id, sql=sql, priority=priority,
                                           max_batch_rows=max_batch_rows)
        return RunningQuery(self, self._stub.Execute(request, metadata=self._metadata, timeout=timeout))

    def execute(self, sql, priority=0, max_batch_rows=0, timeout=None):
        """Runs ';'-separated statements; returns the last one's Result. When the server no longer knows the
        session (idle timeout, restart) it opens a new one with the connect() settings and sends `sql` again (the
        server had run nothing); settings made with SET since are lost then."""
        try:
            return self.start(sql, priority, max_batch_rows, timeout).result()
        except TesseraError as error:
            if not error.unknown_session:
                raise
        self._open_session()
        return self.start(sql, priority, max_batch_rows, timeout).result()

    def copy_in(self, sql, data, chunk_bytes=COPY_CHUNK_BYTES, timeout=None):
        """Runs one COPY ... FROM STDIN whose data is `data`: bytes or str, a binary or text file object (read in
        pieces), or an iterable of bytes / str pieces (borders anywhere). The data streams in messages of at most
        `chunk_bytes`, paced by gRPC's flow control; a bad line raises INVALID_ARGUMENT naming it and the table is
        unchanged. Returns a Result ("COPY n", rows_affected)."""
        def pieces():
            if isinstance(data, (bytes, bytearray, memoryview, str)):
                yield data
            elif hasattr(data, "read"):
                while True:
                    piece = data.read(chunk_bytes)
                    if not piece:
                        return
                    yield piece
            else:
                yield from data

        def requests():
            yield self._pb2.CopyInRequest(statement=self._pb2.ExecuteRequest(session_id=self.session_id,
                                                                              sql=sql.encode() if isinstance(sql, str)
                                                                              else sql))
            for piece in pieces():
                if isinstance(piece, str):
                    piece = piece.encode()
                for at in range(0, len(piece), chunk_bytes):
                    yield self._pb2.CopyInRequest(data=bytes(piece[at:at + chunk_bytes]))

        try:
            summary = self._stub.CopyIn(requests(), metadata=self._metadata, timeout=timeout)
        except grpc.RpcError as error:
            error = TesseraError.from_rpc(error)
            # Only data given whole can be sent again: pieces read from a file or an iterator may be gone.
            if not error.unknown_session or not isinstance(data, (bytes, bytearray, memoryview, str)):
                raise error from None
            self._open_session()
            summary = self._call(self._stub.CopyIn, requests(), timeout=timeout)
        return self._copy_result(summary)

    def copy_out(self, sql, out=None, timeout=None):
        """Runs one COPY ... TO STDOUT (of a table or a query). With `out` (a binary file object, or anything
        with write(bytes)) the data is written there as it streams; without, it is collected in Result.data. Returns
        a Result ("COPY n", rows_affected)."""
        if isinstance(sql, str):
            sql = sql.encode()
        pieces = []
        summary = None
        try:
            call = self._stub.CopyOut(self._pb2.ExecuteRequest(session_id=self.session_id, sql=sql),
                                      metadata=self._metadata, timeout=timeout)
            for response in call:
                if response.WhichOneof("payload") == "summary":
                    summary = response.summary
                elif out is not None:
                    out.write(response.data)
                else:
                    pieces.append(response.data)
        except grpc.RpcError as error:
            raise TesseraError.from_rpc(error) from None
        result = self._copy_result(summary)
        result.data = b"".join(pieces) if out is None else None
        return result

    @staticmethod
    def _copy_result(summary):
        result = Result()
        if summary is not None:
            result.status_message = summary.status_message
            result.rows_affected = summary.rows_affected
            result.query_id = summary.query_id
            result.execution_us = summary.execution_us
            result.total_us = summary.total_us
        return result

    def cancel(self, query_id=None, session_id=None):
        """Cancels by query id, else by session (this one by default). True if a query was running."""
        if query_id is not None:
            request = self._pb2.CancelRequest(query_id=query_id)
        else:
            request = self._pb2.CancelRequest(session_id=session_id or self.session_id)
        return self._call(self._stub.Cancel, request, timeout=10).cancelled

    def progress(self, query_id=None, session_id=None):
        """Progress of a running query (by query id, else by session) as the ProgressResponse message."""
        if query_id is not None:
            request = self._pb2.ProgressRequest(query_id=query_id)
        else:
            request = self._pb2.ProgressRequest(session_id=session_id or self.session_id)
        return self._call(self._stub.GetProgress, request, timeout=10)

    def list_queries(self):
        return list(self._call(self._stub.ListQueries, self._pb2.ListQueriesRequest(), timeout=10).queries)

    def list_tables(self):
        return list(self._call(self._stub.ListTables, self._pb2.ListTablesRequest(), timeout=10).tables)

    def describe(self, table):
        return self._call(self._stub.DescribeTable, self._pb2.DescribeTableRequest(name=table), timeout=10)

    def set_priority(self, priority):
        request = self._pb2.UpdateSessionRequest(session_id=self.session_id, priority=priority)
        return self._call(self._stub.UpdateSession, request, timeout=10)

    def update_settings(self, **settings):
        request = self._pb2.UpdateSessionRequest(session_id=self.session_id,
                                                 settings={k: str(v) for k, v in settings.items()})
        response = self._call(self._stub.UpdateSession, request, timeout=10)
        self.settings = dict(response.settings)
        return response

    def health(self, timeout=10):
        return self._call(self._stub.Health, self._pb2.HealthRequest(), timeout=timeout)

    def close(self):
        if self._channel is None:
            return
        self._closed.set()
        try:
            self._call(self._stub.CloseSession, self._pb2.CloseSessionRequest(session_id=self.session_id), timeout=5)
        except TesseraError:
            pass  # the server is gone or already forgot the session
        self._channel.close()
        self._channel = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def connect(target=f"127.0.0.1:{DEFAULT_PORT}", **kwargs):
    """Opens a session: Client(target, token=..., tls=..., root_certificates=..., server_name=..., priority=...,
    lease_seconds=6)."""
    return Client(target, **kwargs)
