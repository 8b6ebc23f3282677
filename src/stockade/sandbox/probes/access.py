"""Try file, network and IPC operations and print what happened to each, as JSON.

Usage: python3 -I -S access.py OP:ARG[:ARG] ...   ->  {"OP:ARG...": "OK" | "<errno name>"}

  read:PATH          open and read a file            write:PATH      create/overwrite a file
  list:PATH          list a directory                mkdir:PATH      create a directory
  symlink:DST:LINK   create LINK pointing to DST     rename:SRC:DST  rename(2)
  connect:PORT       TCP connect to 127.0.0.1:PORT   bind:PORT       TCP bind 127.0.0.1:PORT
  kill:PID           signal 0 to PID                 abstract:NAME   connect to @NAME (unix)

A jail's posture check runs it with a canary inside and outside the writable roots.
"""

from __future__ import annotations

import errno
import json
import os
import socket
import sys


def _do(op: str, args: list[str]) -> None:
    if op == "read":
        with open(args[0], "rb") as f:
            f.read(1)
    elif op == "write":
        with open(args[0], "w") as f:
            f.write("written from inside\n")
    elif op == "list":
        os.listdir(args[0])
    elif op == "mkdir":
        os.mkdir(args[0])
    elif op == "symlink":
        os.symlink(args[0], args[1])
    elif op == "rename":
        os.rename(args[0], args[1])
    elif op == "connect":
        with socket.create_connection(("127.0.0.1", int(args[0])), timeout=5):
            pass
    elif op == "bind":
        with socket.socket() as s:
            s.bind(("127.0.0.1", int(args[0])))
    elif op == "kill":
        os.kill(int(args[0]), 0)
    elif op == "abstract":
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.connect("\0" + args[0])
    else:
        raise ValueError(op)


def main(argv: list[str]) -> int:
    results = {}
    for spec in argv[1:]:
        op, *args = spec.split(":")
        try:
            _do(op, args)
            results[spec] = "OK"
        except OSError as exc:
            results[spec] = errno.errorcode.get(exc.errno or 0, str(exc))
    print(json.dumps(results), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
