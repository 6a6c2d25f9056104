#!/usr/bin/env python3
"""(in the guest) One command to reel's control socket; prints the reply.

    reel-control.py SOCKET COMMAND

socat is not in the guest (the host's root); python3 is. Exit status 1 when
the socket cannot be reached or reel does not answer within 10 s.
"""
import socket
import sys


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    path, command = sys.argv[1], sys.argv[2]
    reply = b""
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(10)
            s.connect(path)
            s.sendall(command.encode() + b"\n")
            while not reply.endswith(b"\n"):
                chunk = s.recv(4096)
                if not chunk:
                    break
                reply += chunk
    except OSError as e:
        print(f"reel-control: {path}: {e}", file=sys.stderr)
        return 1
    if not reply.endswith(b"\n"):
        print(f"reel-control: no complete reply to {command!r}", file=sys.stderr)
        return 1
    print(reply.decode(errors="replace").strip())
    return 0


if __name__ == "__main__":
    sys.exit(main())
