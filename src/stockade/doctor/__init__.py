"""``stockade doctor``: prove what the sandbox claims, live, on this machine.

Two parts:

* the quick checks (``quick.py``): one jail, the essentials every posture claims, plus a live
  seccomp check - what plain ``stockade doctor`` runs;
* the deep escape battery (``doctor --deep``): ``attempts.py`` is the table of escape attempts
  (plain data: name, class, what runs inside, how the host judges it), ``lab.py`` builds the
  host-side things an escape would change, ``judges.py`` decides each attempt from the host
  side, and ``battery.py`` runs the attempts in a few real jails.
"""

from __future__ import annotations

from stockade.doctor.quick import (
    Check,
    DoctorReport,
    invalid_settings_check,
    run_doctor,
    settings_checks,
)

__all__ = [
    "Check",
    "DoctorReport",
    "invalid_settings_check",
    "run_doctor",
    "settings_checks",
]
