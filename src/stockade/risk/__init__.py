r"""The risk classifier: every shell command gets one of five tiers, with the rules that decided it.

``classify("CMD")`` parses the command with :mod:`stockade.shell` and classifies every segment
(simple command), every command/process substitution and every redirect target; the command's
tier is the maximum. What decides a tier is plain data: the rule table below (generated from
:mod:`stockade.risk.rules`), one typed spec per program (``stockade.risk.programs.*``: its
tier, what its operands are, its options and what each option's value is, its subcommands, and
the small analyser for what data cannot say), and the shared vocabulary of secret and protected
names (:mod:`stockade.vocabulary`).

Layout: ``rules`` (the ids), ``model`` (the types), ``engine`` (the walker), ``specs`` (how a
spec is applied: options, operands, subcommands), ``paths`` (secrets, protected files, where a
path points), ``hooks`` (settings that run code), ``nested`` (shells, interpreters, eval),
``wrappers`` (programs that run programs), ``downloads`` (downloaded code that gets run),
``programs/`` (everything else, one module per family).

Fail closed: whatever cannot be analysed is ``destructive`` with a reason — parse errors, a
command word that is not static, nesting deeper than 8, inputs over 64 KiB, unknown programs,
unknown subcommands, options a wrapper does not list, inline code of interpreters. :func:`classify`
never raises.

Choices a reviewer should know about (each is a line of data, easy to change):

* Static shell code in a language the parser reads (``bash -c 'ls'``, a quoted heredoc into
  ``sh``, ``eval ls``, ``watch CMD``, ``ssh host CMD``) is classified like any command; code only
  known at run time, zsh/fish code and other interpreters' inline code (``python -c``) are
  destructive.
* awk and sed are analysed: a program without ``system``, ``getline``, pipes or output
  redirection only reads; a program the classifier does not see (``awk -f FILE``, ``sed -f
  FILE``) fails closed.
* An option that makes a program run another program (``rg --pre``, ``man -P``, ``bat
  --pager``, ``sort --compress-program``, ``nc -e``) makes the command at least as dangerous
  as that program.
* ``git checkout NAME`` is destructive unless it is provably a branch switch (``-b``,
  ``--detach``, ``NAME --``, ``-``): NAME may be a path whose edits it discards. ``git switch``
  is the unambiguous spelling.
* A file downloaded and run in the same command (``curl -o f URL; sh f``) is the built-in hard
  deny of downloaded code, like ``curl URL | sh``.
* ``source .venv/bin/activate`` is medium; any other ``source``/``.`` is destructive.
* ``PAGER=cat``, ``git -c core.pager=cat``: pager settings run their value, so only the values
  in ``hooks.SAFE_PAGERS`` are harmless.
* Project executables (``./gradlew``) and project scripts (``python x.py``) are medium; the same
  from outside the project is high. ``python -m`` of a module not in ``PYTHON_MODULES`` is high.
* ``PATH=…`` and ``HOME=…`` are high (later program names may resolve elsewhere).
* Settings overrides replace a program's own tier, never destructive findings about its
  arguments or the checks on secrets, paths, privileges, redirects and pipes.

Rule ids are stable; the built-in hard denies (``HARD`` below) are generated from the same
table and applied by the permissions gate. Tiers: R read-only, L low, M medium, H high,
D destructive, ``*`` depends.

"""

from __future__ import annotations

from typing import TYPE_CHECKING

from stockade._lazy import lazy_exports
from stockade.risk.rules import HARD_DENY_RULES, RULE_IDS, rule_table

if TYPE_CHECKING:  # pragma: no cover - for type checkers only
    from stockade.risk.engine import classify as classify
    from stockade.risk.model import Assessment as Assessment
    from stockade.risk.model import Reason as Reason

__doc__ = (__doc__ or "") + rule_table() + "\n"

_LAZY: dict[str, str] = {
    "Assessment": "stockade.risk.model",
    "Reason": "stockade.risk.model",
    "classify": "stockade.risk.engine",
}

__all__ = ["HARD_DENY_RULES", "RULE_IDS", "Assessment", "Reason", "classify"]

__getattr__, __dir__ = lazy_exports(__name__, _LAZY, globals(), __all__)
