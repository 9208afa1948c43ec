"""A script's `verify` function run on every config's outputs, inside tiletune's check.

tiletune's worker runs a space's check command (`verify: {command: [...]}`) once and hands it each
trial's buffers as .npy files, one JSON line per trial; the command here is a tiny relay that
forwards those lines over a Unix socket to this process, where the script's own function (a
closure, a lambda: anything) runs on numpy arrays shaped like the script's arguments. A config
it rejects is `wrong_result`. If the function raises, tiletune is stopped and the exception is
raised from tune_kernel, as Kernel Tuner does."""
import json
import os
import socket
import sys
import threading

RELAY = '''"""Relays tiletune's check requests (stdin) to the Python process that tunes (a Unix socket).
When either side goes away (tiletune stopped because the script's verify raised), it exits
quietly: the script's own exception is the error the user sees."""
import os
import socket
import sys

try:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(sys.argv[1])
    replies = sock.makefile("rb")
    for line in sys.stdin.buffer:
        sock.sendall(line)
        reply = replies.readline()
        if not reply:
            sys.exit(1)
        sys.stdout.buffer.write(reply)
        sys.stdout.buffer.flush()
except (BrokenPipeError, ConnectionError):
    os._exit(1)  # not sys.exit: flushing the closed stdout at exit would print a second traceback
'''


def load_output(path, arg):
    """A buffer's .npy as the script's argument looked: its dtype and shape."""
    import numpy
    data = numpy.load(path, allow_pickle=False)
    want = arg.array.dtype
    if data.dtype != want:
        data = data.view(want)
    return data.reshape(arg.array.shape)


class CheckServer:
    """Answers the relay's requests with `handle(request) -> (ok, detail)` on a thread of its own."""

    def __init__(self, directory, handle):
        self.handle = handle
        self.error = None          # the exception the handler raised, re-raised by the caller
        self.on_error = None       # called once when it does (stops tiletune)
        self.path = os.path.join(directory, "check.sock")
        relay = os.path.join(directory, "check_relay.py")
        with open(relay, "w", encoding="utf-8") as f:
            f.write(RELAY)
        self.command = [sys.executable, relay, self.path]
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(self.path)
        self.sock.listen(8)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn):
        with conn, conn.makefile("rb") as lines:
            for line in lines:
                try:
                    ok, detail = self.handle(json.loads(line))
                    reply = {"ok": bool(ok)}
                    if detail:
                        reply["detail"] = str(detail)[:2000]
                except BaseException as e:  # the script's function failed: stop, raise it from tune_kernel
                    if self.error is None:
                        self.error = e
                        if self.on_error:
                            self.on_error()
                    reply = {"ok": False, "detail": f"the verify function raised {type(e).__name__}: {e}"[:2000]}
                try:
                    conn.sendall((json.dumps(reply) + "\n").encode())
                except OSError:
                    return

    def close(self):
        try:
            self.sock.close()
        finally:
            if os.path.exists(self.path):
                os.unlink(self.path)
