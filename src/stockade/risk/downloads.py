"""Downloaded content that gets run: through a pipe (``curl … | sh``), a substitution
(``sh -c "$(curl …)"``, ``bash <(wget …)``), or a file written and run in the same command
(``curl -o f …; sh f``). The downloaders' own specs (``programs/remote.py``) say which files
they write; the engine remembers them (``Context.record_download``).
"""

# ruff: noqa: SIM905  (tables are whitespace-separated strings on purpose: easy to audit)

from __future__ import annotations

from stockade.risk.model import Call, Words
from stockade.shell import Segment

#: The program words that fetch remote content.
DOWNLOADERS = frozenset(
    "curl wget fetch http https xh aria2c lynx w3m links elinks nc ncat netcat socat".split()
)
#: Wrappers skipped to find the program a command line finally runs (only used to spot
#: downloads feeding a shell: the wrappers themselves are classified by their specs).
_PASS_THROUGH = frozenset(
    """sudo doas env nice timeout nohup time stdbuf command exec builtin setsid chronic
        ionice xargs unbuffer proxychains proxychains4 torsocks busybox""".split()
)
#: A command line whose first word is none of these runs no downloader.
MAY_DOWNLOAD = DOWNLOADERS | _PASS_THROUGH
#: Pipe feeders looked at for downloads; a longer pipeline counts as fed by one.
_MAX_FEEDERS = 256


def innermost(words: Words) -> str:
    """The program a (possibly wrapped) command line finally runs, roughly: wrappers, their
    options and assignments are skipped."""
    index = 0
    while index < len(words):
        name = words[index].rpartition("/")[2]
        if name not in _PASS_THROUGH:
            return name
        index += 1
        while index < len(words) and (
            words[index][:1] == "-"
            or "=" in words[index]
            or (name == "timeout" and words[index][:1].isdigit())
        ):
            index += 1
    return ""


def is_download(words: Words) -> bool:
    """Does this command line run a downloader?"""
    return innermost(words) in DOWNLOADERS


def has_download(seg: Segment) -> bool:
    if seg.words and innermost(seg.words) in DOWNLOADERS:
        return True
    return any(tree_has_download(sub.segments) for sub in seg.substitutions)


def tree_has_download(segments: tuple[Segment, ...]) -> bool:
    return any(has_download(seg) for seg in segments)


def download_fed(call: Call) -> bool:
    """Does downloaded content reach this command: through a pipe into it, or through a
    substitution in its arguments or heredoc (``sh -c "$(curl …)"``, ``bash <(wget …)``)?"""
    seg = call.seg
    looked = 0
    for span in seg.fed_by:
        for index in span:
            looked += 1
            if looked > _MAX_FEEDERS or has_download(call.siblings[index]):
                return True
    return any(tree_has_download(sub.segments) for sub in seg.substitutions)
