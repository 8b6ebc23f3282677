"""A minimal inotify(7) binding (ctypes): which watched directories changed since last asked.

The repository index uses it so that a session's later commands cost what they changed, not
what the project holds: after the first scan every directory is watched, and a refresh
re-reads only the directories the kernel reported. Events come from the VFS, so changes
made inside a jail (another mount namespace, the same inodes) are reported too.
"""

from __future__ import annotations

import ctypes
import errno
import os
import struct
from typing import Final

IN_MODIFY_ENTRIES: Final = (
    0x00000004  # IN_ATTRIB (a directory's mode: -wx hides entries)
    | 0x00000040  # IN_MOVED_FROM
    | 0x00000080  # IN_MOVED_TO
    | 0x00000100  # IN_CREATE
    | 0x00000200  # IN_DELETE
    | 0x00000400  # IN_DELETE_SELF
    | 0x00000800  # IN_MOVE_SELF
)
IN_ONLYDIR: Final = 0x01000000
IN_DONT_FOLLOW: Final = 0x02000000
IN_IGNORED: Final = 0x00008000
IN_Q_OVERFLOW: Final = 0x00004000
IN_NONBLOCK: Final = os.O_NONBLOCK
IN_CLOEXEC: Final = os.O_CLOEXEC
_EVENT: Final = struct.Struct("iIII")

_libc = ctypes.CDLL(None, use_errno=True)
_libc.inotify_init1.argtypes = [ctypes.c_int]
_libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]


class Watcher:
    """Directories watched for entries added, removed or renamed. ``changed()`` returns the
    paths with events since the last call, or None when events were lost (queue overflow)."""

    def __init__(self) -> None:
        fd = _libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        self.fd: int = fd
        self._paths: dict[int, str] = {}
        self.full = False  # a watch was refused (the user's watch limit): not every dir

    def watch(self, directory: str) -> bool:
        if self.full:
            return False
        wd = _libc.inotify_add_watch(
            self.fd, os.fsencode(directory), IN_MODIFY_ENTRIES | IN_ONLYDIR | IN_DONT_FOLLOW
        )
        if wd < 0:
            if ctypes.get_errno() == errno.ENOSPC:
                self.full = True
            return False
        self._paths[wd] = directory
        return True

    def changed(self) -> set[str] | None:
        found: set[str] = set()
        overflow = False
        while True:
            try:
                data = os.read(self.fd, 65536)
            except BlockingIOError:
                break
            offset = 0
            while offset + _EVENT.size <= len(data):
                wd, mask, _cookie, length = _EVENT.unpack_from(data, offset)
                offset += _EVENT.size + length
                if mask & IN_Q_OVERFLOW:
                    overflow = True
                    continue
                path = self._paths.get(wd)
                if path is None:
                    continue
                found.add(path)
                if mask & IN_IGNORED:
                    del self._paths[wd]
        return None if overflow else found

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
