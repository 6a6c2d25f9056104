#!/usr/bin/env python3
"""(in the guest) Drives reel through its control socket, one step after another.

    reel-session.py SOCKET STEP...

Each STEP prints one line, `STEP<TAB>REPLY`:
- `shown`: polls `status` until no seek is pending and a frame is on screen;
  REPLY is that status;
- `until:FIELD=VALUE`, `until:FIELD>NUMBER`, `until:FIELD<NUMBER`: polls
  `status` until the field matches; REPLY is that status;
- `sleep:SECONDS`: waits; REPLY is empty;
- anything else is a command (`seek 0.6`, `step`, `quit`, ...); REPLY is
  reel's answer.

A poll that does not match within 60 s prints `STEP<TAB>timeout: LAST STATUS`
and ends the session with exit status 1; so does a socket error. The socket
may appear late (reel starting): the first connection is retried for 60 s.
"""
import socket
import sys
import time

LIMIT = 60.0


def ask(path, command, wait_for_socket=False):
    deadline = time.monotonic() + (LIMIT if wait_for_socket else 0)
    while True:
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
                s.settimeout(LIMIT)
                s.connect(path)
                s.sendall(command.encode() + b"\n")
                reply = b""
                while not reply.endswith(b"\n"):
                    chunk = s.recv(4096)
                    if not chunk:
                        break
                    reply += chunk
                return reply.decode(errors="replace").strip()
        except (FileNotFoundError, ConnectionRefusedError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def fields(reply):
    return dict(w.split("=", 1) for w in reply.split() if "=" in w)


def matches(condition, status):
    if condition == "shown":
        return status.get("state") != "seeking" and "width" in status
    for op in "=><":
        if op in condition:
            key, value = condition.split(op, 1)
            got = status.get(key)
            if got is None:
                return False
            if op == "=":
                return got == value
            number = float(got)
            return number > float(value) if op == ">" else number < float(value)
    raise ValueError(f"bad condition {condition!r}")


def main():
    if len(sys.argv) < 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    path, steps = sys.argv[1], sys.argv[2:]
    ask(path, "status", wait_for_socket=True)
    for step in steps:
        try:
            if step.startswith("sleep:"):
                time.sleep(float(step[6:]))
                reply = ""
            elif step == "shown" or step.startswith("until:"):
                condition = step.removeprefix("until:")
                deadline = time.monotonic() + LIMIT
                while True:
                    reply = ask(path, "status")
                    if matches(condition, fields(reply)):
                        break
                    if time.monotonic() > deadline:
                        print(f"{step}\ttimeout: {reply}", flush=True)
                        return 1
                    time.sleep(0.05)
            else:
                reply = ask(path, step)
        except OSError as e:
            print(f"{step}\terror: {e}", flush=True)
            return 1
        print(f"{step}\t{reply}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
