"""The escape battery of ``stockade doctor --deep``, as plain data: one row per attempt.

Reviewers: this package is the list of everything stockade claims to stop, each claim tried for
real. A row says

* ``name`` (unique) and ``klass`` (one of ``CLASSES``),
* ``does``: what the attempt tries, in one line,
* ``steps``: what runs inside the jail (verbs of ``sandbox/probes/escapes.py``), with
  ``{placeholders}`` the lab fills in (``lab.py``: paths, ports, pids, tokens),
* ``judge``: how the HOST decides whether it got out (``judges.py``) - a file that appeared or
  changed, a token that reached a file the jail wrote, a host listener that got a hit, an fd
  the host sees in the jailed process, a process still alive after the run; several judges
  mean "any of them",
* ``needs``: what must hold on this machine for the attempt to mean anything (root, a kernel
  feature, a host file the launcher itself could write); unmet means ``not-applicable``,
* ``admitted``: a limitation the backend's posture states openly (no PID namespace under
  Landlock): an attempt that gets out through it is ``not-applicable``, never ``held``.

Placeholders every attempt may use: ``{x}`` its own file in the exchange dir, ``{slot}`` its fd
slot, ``{tag}`` its short id, ``{trip}`` its host listener's address, ``{name}`` its name with
dots as dashes (for unique file names), plus the lab's values (see ``lab.Lab.values``).
"""

from __future__ import annotations

from typing import Final

from stockade.doctor.attempts.files import FILESYSTEM, METADATA, PLANTED, PROTECTED, SETUID
from stockade.doctor.attempts.host import (
    KERNEL,
    PERSISTENCE,
    PROCESSES,
    SECCOMP,
    SECRETS,
    TERMINALS,
)
from stockade.doctor.attempts.model import CLASSES, SCENARIOS, Attempt, Judge
from stockade.doctor.attempts.network import (
    ENVIRONMENT,
    NETWORK_ALLOWLIST,
    NETWORK_DENY,
    STOCKADE_STATE,
)

#: Every attempt, in report order (by class).
ATTEMPTS: Final[tuple[Attempt, ...]] = (
    *FILESYSTEM,
    *PROTECTED,
    *SECRETS,
    *KERNEL,
    *PROCESSES,
    *PERSISTENCE,
    *NETWORK_DENY,
    *NETWORK_ALLOWLIST,
    *ENVIRONMENT,
    *STOCKADE_STATE,
    *SECCOMP,
    *SETUID,
    *METADATA,
    *TERMINALS,
    *PLANTED,
)

__all__ = ["ATTEMPTS", "CLASSES", "SCENARIOS", "Attempt", "Judge"]
