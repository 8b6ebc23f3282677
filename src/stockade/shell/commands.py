"""The tree walk, third layer: simple commands, assignments, declarations, tests, control word
lists and function definitions."""

from __future__ import annotations

from typing import Any

from stockade.shell.model import Assignment, Feed, Redirect, Segment, Substitution
from stockade.shell.redirects import RedirectWalk
from stockade.shell.syntax import (
    C_ASSIGN,
    C_CMD_SUB,
    C_COMMAND_NAME,
    C_COMMENT,
    C_DOLLAR,
    C_PROC_SUB,
    C_VARIABLE_NAME,
    C_WORD,
    IGNORED,
    REDIRECTS,
    STATEMENTS,
    UNQUOTED_EXPANDS,
    VARIABLE_NAME,
    unescape_unquoted,
)


class CommandWalk(RedirectWalk):
    """Simple commands and the other one-segment statements."""

    __slots__ = ()

    def command(
        self,
        node: Any,
        feed: Feed,
        depth: int,
        function: str | None,
        pipeline_id: int,
        stage: int,
    ) -> Segment:
        """The hot path: one ``command`` node → one Segment."""
        cat_of = self.cat
        src = self.src
        srcb = self.srcb
        ascii_src = self.ascii
        plain = self.plain
        words: list[str] = []
        static: list[bool] = []
        assignments: list[Assignment] = []
        redirects: list[Redirect] = []
        subs: list[Substitution] = []
        name_start = -1
        prev_end = -1
        for child in node.children:
            start = child.start_byte
            end = child.end_byte
            glued = False
            if prev_end >= 0 and (start != prev_end + 1 or srcb[prev_end] != 32):
                glued = self.gap(prev_end, start, name_start >= 0) and bool(words)
            prev_end = end
            cat = cat_of[child.kind_id]
            if cat == C_WORD:
                text = src[start:end] if ascii_src else srcb[start:end].decode("utf-8", "replace")
                if plain:
                    is_static = True
                else:
                    is_static = UNQUOTED_EXPANDS.search(text) is None
                    text = unescape_unquoted(text)
            elif cat == C_COMMAND_NAME:
                name_start = start
                inner = child.children
                if len(inner) == 1:
                    text, is_static = self.word(inner[0], subs, depth)
                else:
                    text, is_static = self.word_parts(inner, subs, depth)
            elif cat == C_ASSIGN and name_start < 0:
                assignments.append(self.assignment(child, subs, depth))
                continue
            elif cat in REDIRECTS:
                extra: list[tuple[str, bool]] = []
                redirects.extend(self.redirect(child, subs, depth, None, extra))
                for extra_text, extra_static in extra:
                    words.append(extra_text)
                    static.append(extra_static)
                continue
            elif cat == C_DOLLAR:
                # `$"…"` (locale translation) is an anonymous `$` glued to a string
                text, is_static = "", True
            elif cat == C_COMMENT:
                continue
            else:
                text, is_static = self.word(child, subs, depth)
            if glued:
                words[-1] += text
                static[-1] = static[-1] and is_static
            else:
                words.append(text)
                static.append(is_static)
        node_start = node.start_byte
        node_end = prev_end if prev_end >= 0 else node.end_byte
        text = src[node_start:node_end] if ascii_src else self.text(node_start, node_end)
        if name_start < 0:
            env_stripped = ""
        elif name_start == node_start:
            env_stripped = text
        else:
            env_stripped = self.text(name_start, node_end)
        return Segment(
            text,
            tuple(words),
            tuple(static),
            tuple(assignments),
            tuple(redirects),
            tuple(subs),
            env_stripped,
            pipeline_id,
            stage,
            feed,
            "command" if words else "assignment",
            function,
        )

    def assignment(self, node: Any, subs: list[Substitution], depth: int) -> Assignment:
        assignment = self._assignment(node, subs, depth)
        if VARIABLE_NAME.fullmatch(assignment.name) is None:
            # `--x=y`: the grammar calls it an assignment, bash runs it as a command
            self.problem_at(
                "parse.misparse",
                f"{assignment.name!r} is not a variable name, so bash runs this as a command",
                node,
            )
        return assignment

    def _assignment(self, node: Any, subs: list[Substitution], depth: int) -> Assignment:
        name = ""
        value_parts: list[Any] = []
        seen_op = False
        for child in node.children:
            if seen_op:
                value_parts.append(child)
            elif child.type in ("=", "+="):
                seen_op = True
            else:
                name += self.node_text(child)
                # `a[$(cmd)]=1`: a subscript can run substitutions
                self.collect_substitutions(child, subs, depth)
        if not value_parts:
            return Assignment(name, "", True)
        if len(value_parts) == 1:
            value, is_static = self.word(value_parts[0], subs, depth)
        else:
            value, is_static = self.word_parts(value_parts, subs, depth)
        return Assignment(name, value, is_static)

    def bare_assignments(self, node: Any, feed: Feed, depth: int, function: str | None) -> Segment:
        subs: list[Substitution] = []
        if self.cat[node.kind_id] == C_ASSIGN:
            assignments = [self.assignment(node, subs, depth)]
        else:
            assignments = [
                self.assignment(child, subs, depth)
                for child in node.children
                if self.cat[child.kind_id] == C_ASSIGN
            ]
        return Segment(
            self.node_text(node),
            (),
            (),
            tuple(assignments),
            (),
            tuple(subs),
            "",
            0,
            0,
            feed,
            "assignment",
            function,
        )

    def declaration(self, node: Any, feed: Feed, depth: int, function: str | None) -> Segment:
        """``export``/``declare``/``local``/``readonly``/``typeset``/``unset`` + arguments."""
        subs: list[Substitution] = []
        words: list[str] = []
        static: list[bool] = []
        assignments: list[Assignment] = []
        children = node.children
        if len(children) > 1 and children[0].end_byte == children[1].start_byte:
            # `export$X`: one word to bash (a command named export…), not the builtin
            self.problem_at(
                "parse.misparse",
                "a declaration keyword glued to more text is not a declaration",
                node,
            )
        for child in children:
            cat = self.cat[child.kind_id]
            if cat == C_ASSIGN:
                assignments.append(self.assignment(child, subs, depth))
            elif cat == C_COMMENT:
                continue
            elif not child.is_named or cat == C_VARIABLE_NAME:
                words.append(self.node_text(child))
                static.append(True)
            else:
                text, is_static = self.word(child, subs, depth)
                words.append(text)
                static.append(is_static)
        text = self.node_text(node)
        return Segment(
            text,
            tuple(words),
            tuple(static),
            tuple(assignments),
            (),
            tuple(subs),
            text,
            0,
            0,
            feed,
            "declaration",
            function,
        )

    def test(self, node: Any, feed: Feed, depth: int, function: str | None) -> Segment:
        """``[[ … ]]`` / ``[ … ]``: the test only reads, but substitutions in it run."""
        subs: list[Substitution] = []
        self.collect_substitutions(node, subs, depth)
        children = node.children
        opener = children[0].type if children and not children[0].is_named else "[["
        # the operands, as written: the classifier looks for arithmetic-injection tricks
        operands = tuple(self.node_text(c) for c in children[1:-1])
        text = self.node_text(node)
        return Segment(
            text,
            (opener, *operands),
            (True,) + (False,) * len(operands),
            (),
            (),
            tuple(subs),
            text,
            0,
            0,
            feed,
            "test",
            function,
        )

    def control_words(
        self,
        owner: Any,
        nodes: list[Any],
        feed: Feed,
        depth: int,
        function: str | None,
        kind: str,
    ) -> Segment:
        subs: list[Substitution] = []
        for child in nodes:
            if self.cat[child.kind_id] in (C_CMD_SUB, C_PROC_SUB):
                self.substitution(child, subs, depth)
            else:
                self.collect_substitutions(child, subs, depth)
        first = owner.children[0] if owner.child_count else None
        keyword = first.type if first is not None and not first.is_named else owner.type
        text = self.text(nodes[0].start_byte, nodes[-1].end_byte)
        return Segment(
            text,
            (keyword, *(self.node_text(n) for n in nodes)),
            (True,) + (False,) * len(nodes),
            (),
            (),
            tuple(subs),
            "",
            0,
            0,
            feed,
            kind,
            function,
        )

    def control(
        self,
        node: Any,
        out: list[Segment],
        feed: Feed,
        depth: int,
        tree_depth: int,
        function: str | None,
    ) -> None:
        """for/select/case/c-style for: the word lists are expanded, the bodies run."""
        words: list[Any] = []
        for child in node.children:
            cat = self.cat[child.kind_id]
            if cat in STATEMENTS:
                self.statement(child, out, feed, depth, tree_depth + 1, function)
            elif cat in REDIRECTS:
                out.append(self.redirect_only(child, feed, depth, function))
            elif cat not in IGNORED and child.is_named:
                words.append(child)
        if words:
            kind = "arithmetic" if node.type == "c_style_for_statement" else "control"
            out.append(self.control_words(node, words, feed, depth, function, kind))

    def function_definition(
        self,
        node: Any,
        out: list[Segment],
        feed: Feed,
        depth: int,
        tree_depth: int,
    ) -> None:
        """The body is classified as if it runs (it may be called); the name is recorded."""
        name = ""
        first = len(out)
        for child in node.children:
            cat = self.cat[child.kind_id]
            if cat == C_WORD and not name:
                name = unescape_unquoted(self.node_text(child))
            elif cat in STATEMENTS:
                self.statement(child, out, feed, depth, tree_depth + 1, name or "?")
            elif cat in REDIRECTS:
                out.append(self.redirect_only(child, feed, depth, name or "?"))
        called = {segment.words[0] for segment in out[first:] if segment.words}
        self.functions[name] = tuple(sorted(called))
