"""Locating keys in TOML text: tomllib keeps no positions, settings errors need the line."""

from __future__ import annotations

import tomllib

import pytest

from stockade.toml_lines import key_lines, line_of

DOCUMENT = '''\
# a comment with = and [brackets]
[sandbox]
read_deny = [
  "~/a",  # trailing comment, "quoted"
  "${PROJECT_ROOT}/b",
]
"quoted key".x = 1
notes = """
[not.a.table]
fake = 1
"""
literal = \'\'\'
also = "not a key"
\'\'\'
limits.pids_max = 10
escaped = "a \\" [x] = 1"

[sandbox.limits2]
memory_max_bytes = "1G"

[risk]
programs = { mytool = "low", "a b" = "high" }

[[arr]]
k = 1
[[arr]]
k = 2

[network]
allowed_domains = [
  { domain = "x.lan", allow_private = true },
  "y.com",
]
'''


def test_the_fixture_is_valid_toml() -> None:
    tomllib.loads(DOCUMENT)


@pytest.mark.parametrize(
    ("path", "line"),
    [
        (("sandbox",), 2),
        (("sandbox", "read_deny"), 3),
        (("sandbox", "read_deny", 0), 4),
        (("sandbox", "read_deny", 1), 5),
        (("sandbox", "quoted key", "x"), 7),
        (("sandbox", "notes"), 8),
        (("sandbox", "literal"), 12),
        (("sandbox", "limits", "pids_max"), 15),
        (("sandbox", "escaped"), 16),
        (("sandbox", "limits2", "memory_max_bytes"), 19),
        (("risk", "programs"), 22),
        (("risk", "programs", "a b"), 22),
        (("arr", 1, "k"), 27),
        (("network", "allowed_domains", 0, "allow_private"), 31),
        (("network", "allowed_domains", 1), 32),
    ],
)
def test_every_key_and_element_has_its_line(path: tuple[str | int, ...], line: int) -> None:
    assert key_lines(DOCUMENT)[path] == line


def test_strings_and_comments_never_look_like_keys() -> None:
    lines = key_lines(DOCUMENT)
    assert ("not", "a", "table") not in lines
    assert ("sandbox", "fake") not in lines
    assert ("sandbox", "also") not in lines
    assert ("x",) not in lines


def test_line_of_falls_back_to_the_nearest_written_ancestor() -> None:
    lines = key_lines(DOCUMENT)
    assert line_of(lines, ("sandbox", "read_deny", 7)) == 3
    assert line_of(lines, ("nothing",)) is None
