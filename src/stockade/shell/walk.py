"""The tree walk, top layer: statements, lists and pipelines (who feeds whose stdin)."""

from __future__ import annotations

from typing import Any

from stockade.shell.commands import CommandWalk
from stockade.shell.model import MAX_TREE_DEPTH, Feed, Segment, extend_feed
from stockade.shell.syntax import (
    C_ASSIGN,
    C_ASSIGNS,
    C_COMMAND,
    C_COMMENT,
    C_COMPOUND,
    C_CONTAINER,
    C_CONTROL,
    C_DECL,
    C_FUNCTION,
    C_HEREDOC_REDIRECT,
    C_LIST,
    C_PIPE_OP,
    C_PIPELINE,
    C_REDIRECTED,
    C_SEPARATOR,
    C_TEST,
    IGNORED,
    REDIRECTS,
    STATEMENTS,
)


class Walk(CommandWalk):
    """Statements, containers, lists and pipelines: the whole walk."""

    __slots__ = ()

    def statement(
        self,
        node: Any,
        out: list[Segment],
        feed: Feed,
        depth: int,
        tree_depth: int,
        function: str | None,
    ) -> None:
        """Append the segments of one statement node (any statement category) to ``out``."""
        cat = self.cat[node.kind_id]
        if cat == C_COMMAND:
            out.append(self.command(node, feed, depth, function, 0, 0))
            return
        if tree_depth > MAX_TREE_DEPTH:
            self.problem_at(
                "parse.too-deep", f"syntax nested deeper than {MAX_TREE_DEPTH} levels", node
            )
            return
        if cat in (C_CONTAINER, C_LIST, C_COMPOUND):
            self.container(node, out, feed, depth, tree_depth, function)
        elif cat == C_PIPELINE or (cat == C_REDIRECTED and self.flattenable(node)):
            self.chain(node, out, feed, depth, tree_depth, function)
        elif cat == C_REDIRECTED:
            self.redirected(node, out, feed, depth, tree_depth, function, 0, 0)
        elif cat in (C_ASSIGN, C_ASSIGNS):
            out.append(self.bare_assignments(node, feed, depth, function))
        elif cat == C_DECL:
            out.append(self.declaration(node, feed, depth, function))
        elif cat == C_TEST:
            out.append(self.test(node, feed, depth, function))
        elif cat == C_FUNCTION:
            self.function_definition(node, out, feed, depth, tree_depth)
        elif cat == C_CONTROL:
            self.control(node, out, feed, depth, tree_depth, function)
        elif cat != C_COMMENT:
            self.problem_at("parse.unsupported", f"unsupported shell construct {node.type!r}", node)

    def container(
        self,
        node: Any,
        out: list[Segment],
        feed: Feed,
        depth: int,
        tree_depth: int,
        function: str | None,
    ) -> None:
        """Statements in sequence: program, lists, groups, if/while bodies, negation."""
        cat_of = self.cat
        srcb = self.srcb
        prev_end = -1
        arithmetic = self.cat[node.kind_id] == C_COMPOUND and node.type == "compound_statement"
        for child in node.children:
            start = child.start_byte
            if prev_end >= 0 and (start != prev_end + 1 or srcb[prev_end] != 32):
                self.gap(prev_end, start, False)
            prev_end = child.end_byte
            cat = cat_of[child.kind_id]
            if cat == C_COMMAND:
                out.append(self.command(child, feed, depth, function, 0, 0))
            elif cat in STATEMENTS:
                self.statement(child, out, feed, depth, tree_depth + 1, function)
            elif cat in REDIRECTS:
                # `{ …; } > file` inside a larger construct
                out.append(self.redirect_only(child, feed, depth, function))
            elif cat in IGNORED:
                continue
            else:
                # words in a statement position: `(( … ))` arithmetic, case patterns
                kind = "arithmetic" if arithmetic else "control"
                out.append(self.control_words(node, [child], feed, depth, function, kind))

    def flattenable(self, node: Any) -> bool:
        """A redirected pipeline or list (``a | b 2>&1``, ``a && b > f``) whose redirects hold
        no heredoc that continues the line (those keep the grammar's structure)."""
        cat_of = self.cat
        body = node.named_children[0] if node.named_child_count else None
        if body is None or cat_of[body.kind_id] not in (C_PIPELINE, C_LIST):
            return False
        for child in node.children:
            if cat_of[child.kind_id] == C_HEREDOC_REDIRECT and any(
                cat_of[grandchild.kind_id] in STATEMENTS or grandchild.type == "|"
                for grandchild in child.children
            ):
                return False
        return True

    def flatten(self, node: Any, tokens: list[tuple[str, Any]], tree_depth: int) -> None:
        """The units and operators of nested pipeline/list/redirected nodes, in source order:
        ``("unit", node)``, ``("op", "|" / "&&" / "||")``, ``("redirect", node)`` (the
        redirects of ``node`` apply to the unit before them)."""
        cat_of = self.cat
        if tree_depth > MAX_TREE_DEPTH:
            self.problem_at(
                "parse.too-deep", f"syntax nested deeper than {MAX_TREE_DEPTH} levels", node
            )
            return
        if cat_of[node.kind_id] == C_REDIRECTED:
            self.flatten(node.named_children[0], tokens, tree_depth + 1)
            tokens.append(("redirect", node))
            return
        srcb = self.srcb
        prev_end = -1
        for child in node.children:
            start = child.start_byte
            if prev_end >= 0 and (start != prev_end + 1 or srcb[prev_end] != 32):
                self.gap(prev_end, start, False)
            prev_end = child.end_byte
            cat = cat_of[child.kind_id]
            if cat in (C_PIPE_OP, C_SEPARATOR):
                tokens.append(("op", "|" if cat == C_PIPE_OP else child.type))
            elif cat in (C_PIPELINE, C_LIST) or (cat == C_REDIRECTED and self.flattenable(child)):
                self.flatten(child, tokens, tree_depth + 1)
            elif cat in STATEMENTS:
                tokens.append(("unit", child))
            elif cat not in IGNORED:
                self.problem_at(
                    "parse.unsupported", f"unexpected {child.type!r} in a pipeline or list", child
                )

    def chain(
        self,
        node: Any,
        out: list[Segment],
        feed: Feed,
        depth: int,
        tree_depth: int,
        function: str | None,
    ) -> None:
        """Pipelines and ``&&``/``||`` lists with bash's precedence. The grammar nests them
        wrongly (``a | b && c`` as ``a | (b && c)``, ``a && b 2>f | c`` as ``(a && b 2>f) | c``),
        so the nodes are flattened into units and operators and regrouped: ``|`` binds
        tighter than ``&&``/``||``."""
        tokens: list[tuple[str, Any]] = []
        self.flatten(node, tokens, tree_depth)
        groups: list[list[tuple[Any, list[Any]]]] = [[]]  # pipelines of (unit, redirect nodes)
        expect_unit = True
        for kind, value in tokens:
            if kind == "unit" and expect_unit:
                groups[-1].append((value, []))
                expect_unit = False
            elif kind == "redirect" and not expect_unit:
                groups[-1][-1][1].append(value)
            elif kind == "op" and not expect_unit:
                if value != "|":
                    groups.append([])
                expect_unit = True
            else:
                self.problem_at(
                    "parse.unsupported", "a pipeline or list the parser could not follow", node
                )
                return
        for group in groups:
            pipeline_id = 0
            if len(group) > 1:
                self.pipelines += 1
                pipeline_id = self.pipelines
            stage_feed = feed
            for stage, (unit, redirect_nodes) in enumerate(group):
                start = len(out)
                self.unit(unit, out, stage_feed, depth, tree_depth, function, pipeline_id, stage)
                for redirect_node in redirect_nodes:
                    if len(out) > start:
                        self.redirected(
                            redirect_node,
                            out,
                            stage_feed,
                            depth,
                            tree_depth + 1,
                            function,
                            pipeline_id,
                            stage,
                            body_done=True,
                        )
                stage_feed = extend_feed(stage_feed, start, len(out))

    def unit(
        self,
        node: Any,
        out: list[Segment],
        feed: Feed,
        depth: int,
        tree_depth: int,
        function: str | None,
        pipeline_id: int,
        stage: int,
    ) -> None:
        """One stage of a pipeline (or a lone command of a list)."""
        cat = self.cat[node.kind_id]
        if cat == C_COMMAND:
            out.append(self.command(node, feed, depth, function, pipeline_id, stage))
            return
        first = len(out)
        if cat == C_REDIRECTED:
            self.redirected(node, out, feed, depth, tree_depth + 1, function, pipeline_id, stage)
        else:
            self.statement(node, out, feed, depth, tree_depth + 1, function)
        if pipeline_id:
            for i in range(first, len(out)):
                if out[i].pipeline == 0:
                    out[i] = out[i]._replace(pipeline=pipeline_id, stage=stage)

    def pipeline(
        self,
        node: Any,
        out: list[Segment],
        feed: Feed,
        depth: int,
        tree_depth: int,
        function: str | None,
        pipeline_id: int,
        stage: list[int],
    ) -> int | None:
        """Flatten (possibly nested) pipeline nodes into one pipeline with numbered stages.

        Returns where the first stage's segments start when the grammar put segments that bash
        runs before the pipeline into it (``a && b 2>f | c``), else None."""
        cat_of = self.cat
        srcb = self.srcb
        prev_end = -1
        first_stage: int | None = None
        piped = False
        stage_feed = feed
        stage_start = len(out)
        for child in node.children:
            start = child.start_byte
            if prev_end >= 0 and (start != prev_end + 1 or srcb[prev_end] != 32):
                self.gap(prev_end, start, False)
            prev_end = child.end_byte
            cat = cat_of[child.kind_id]
            if cat == C_PIPE_OP:
                stage[0] += 1
                stage_feed = extend_feed(stage_feed, stage_start, len(out))
                stage_start = len(out)
                piped = True
            elif cat in STATEMENTS:
                last_stage = self.stage_item(
                    child, out, stage_feed, feed, depth, tree_depth, function, pipeline_id, stage
                )
                if last_stage is not None:
                    stage_start = last_stage
                    if not piped:
                        first_stage = last_stage
            elif cat not in IGNORED:
                self.problem_at(
                    "parse.unsupported", f"unexpected {child.type!r} in a pipeline", child
                )
        return first_stage

    def stage_item(
        self,
        child: Any,
        out: list[Segment],
        stage_feed: Feed,
        feed: Feed,
        depth: int,
        tree_depth: int,
        function: str | None,
        pipeline_id: int,
        stage: list[int],
    ) -> int | None:
        """One statement between pipe operators. Returns the index where the stage's own
        segments start when that is not where the statement's segments start (the grammar
        puts list elements that bash runs outside the pipeline into it)."""
        cat_of = self.cat
        cat = cat_of[child.kind_id]
        if cat == C_COMMAND:
            out.append(self.command(child, stage_feed, depth, function, pipeline_id, stage[0]))
        elif cat == C_PIPELINE:
            return self.pipeline(
                child, out, stage_feed, depth, tree_depth + 1, function, pipeline_id, stage
            )
        elif cat == C_LIST:
            # the grammar reads `a | b && c` as `a | (b && c)`; bash runs `(a | b) && c`: the
            # list's first element continues the pipeline, the rest run after it, unfed
            items = [c for c in child.children if cat_of[c.kind_id] in STATEMENTS]
            if not items:
                return None
            result = self.stage_item(
                items[0],
                out,
                stage_feed,
                feed,
                depth,
                tree_depth + 1,
                function,
                pipeline_id,
                stage,
            )
            for item in items[1:]:
                self.statement(item, out, feed, depth, tree_depth + 1, function)
            return result
        elif cat == C_REDIRECTED:
            first = len(out)
            inner_start = self.redirected(
                child,
                out,
                stage_feed,
                depth,
                tree_depth + 1,
                function,
                pipeline_id,
                stage[0],
                stage,
            )
            body = child.named_children[0] if child.named_child_count else None
            if (
                body is not None
                and cat_of[body.kind_id] == C_LIST
                and body.named_child_count
                and len(out) > first + 1
            ):
                # the grammar reads `a && b 2>f | c` as `(a && b 2>f) | c`; bash runs
                # `a && (b 2>f | c)`: only the list's last command (or the stages of its last
                # pipeline, `a && b | d 2>f | c`) belong to this pipeline
                tail = cat_of[body.named_children[-1].kind_id]
                last = len(out) - 1
                if tail == C_COMMAND:
                    out[last] = out[last]._replace(pipeline=pipeline_id, stage=stage[0])
                    return last
                inner = out[last].pipeline
                if tail == C_PIPELINE and inner:
                    begin = last
                    while begin > first and out[begin - 1].pipeline == inner:
                        begin -= 1
                    base = stage[0]
                    for i in range(begin, last + 1):
                        out[i] = out[i]._replace(pipeline=pipeline_id, stage=base + out[i].stage)
                    stage[0] = out[last].stage
                    return begin
            return inner_start
        else:
            first = len(out)
            self.statement(child, out, stage_feed, depth, tree_depth + 1, function)
            for i in range(first, len(out)):
                if out[i].pipeline == 0:
                    out[i] = out[i]._replace(pipeline=pipeline_id, stage=stage[0])
        return None

    def stage_statement(
        self,
        node: Any,
        out: list[Segment],
        feed: Feed,
        depth: int,
        tree_depth: int,
        function: str | None,
        pipeline_id: int,
        stage: list[int],
    ) -> None:
        """One statement that is (the start of) the next stage of an existing pipeline."""
        cat = self.cat[node.kind_id]
        if cat == C_PIPELINE:
            self.pipeline(node, out, feed, depth, tree_depth + 1, function, pipeline_id, stage)
            return
        first = len(out)
        self.statement(node, out, feed, depth, tree_depth + 1, function)
        for i in range(first, len(out)):
            if out[i].pipeline == 0:
                out[i] = out[i]._replace(pipeline=pipeline_id, stage=stage[0])
