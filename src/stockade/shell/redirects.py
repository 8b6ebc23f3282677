"""The tree walk, second layer: redirects, heredocs (their bodies and the commands glued after
them) and redirected statements."""

from __future__ import annotations

from typing import Any

from stockade.shell.model import (
    MAX_SUBSTITUTION_DEPTH,
    Feed,
    Redirect,
    Segment,
    Substitution,
    extend_feed,
)
from stockade.shell.syntax import (
    BACKTICK_SPAN,
    BACKTICK_UNESCAPE,
    C_COMMAND,
    C_COMMENT,
    C_ERROR,
    C_FILE_DESCRIPTOR,
    C_FILE_REDIRECT,
    C_HEREDOC_BODY,
    C_HEREDOC_END,
    C_HEREDOC_REDIRECT,
    C_HEREDOC_START,
    C_LIST,
    C_OTHER,
    C_PIPE_OP,
    C_PIPELINE,
    IGNORED,
    LONE_DASH,
    QUOTED_DELIMITER,
    REDIRECTS,
    STATEMENTS,
)
from stockade.shell.words import WordWalk


class RedirectWalk(WordWalk):
    """Redirect targets, heredoc bodies, redirected statements."""

    __slots__ = ()

    def redirect(
        self,
        node: Any,
        subs: list[Substitution],
        depth: int,
        trailing: list[Any] | None,
        extra: list[tuple[str, bool]] | None,
    ) -> list[Redirect]:
        """One redirect node (plus any redirect the grammar nests inside a heredoc redirect:
        ``cat <<EOF > f`` puts ``> f`` inside the heredoc node). Words after the target
        (``ls > f x``) are arguments of the command to bash but children of the redirect to the
        grammar; they go to ``extra`` (or, where no command can take them, become a problem)."""
        cat_of = self.cat
        cat = cat_of[node.kind_id]
        fd: int | None = None
        op = ""
        targets: list[Any] = []
        body: str | None = None
        nested: list[Redirect] = []
        for child in node.children:
            ccat = cat_of[child.kind_id]
            if ccat == C_FILE_DESCRIPTOR:
                digits = self.node_text(child)
                fd = int(digits) if digits.isdigit() and len(digits) < 6 else -1
            elif ccat == C_HEREDOC_BODY:
                body = self.node_text(child)
                self.collect_substitutions(child, subs, depth)
                if (
                    "`" in body
                    and targets
                    and QUOTED_DELIMITER.search(self.node_text(targets[0])) is None
                ):
                    self.heredoc_backticks(child, subs, depth)
            elif ccat in (C_HEREDOC_END, C_ERROR, C_COMMENT):
                continue
            elif ccat == C_HEREDOC_START:
                targets.append(child)
            elif cat == C_HEREDOC_REDIRECT and ccat == C_FILE_REDIRECT:
                # `cat <<EOF > file`: a sibling redirect of the command, nested by the grammar
                nested.extend(self.redirect(child, subs, depth, None, extra))
            elif cat == C_HEREDOC_REDIRECT and (ccat in STATEMENTS or ccat in REDIRECTS):
                if trailing is None:
                    self.problem_at(
                        "parse.unsupported",
                        "a command after a heredoc in an unexpected place",
                        child,
                    )
                else:
                    trailing.append(child)
            elif not child.is_named:
                if not op:
                    op = child.type
                    if cat == C_HEREDOC_REDIRECT and self.node_text(child).startswith("-<<"):
                        # `python3 -<<EOF` is `python3 - <<EOF`; the grammar glues the `-` on
                        if extra is None:
                            self.problem_at(
                                "parse.misparse",
                                "a `-` glued to a heredoc where no command can take it",
                                child,
                            )
                        else:
                            extra.append(("-", True))
                elif ccat not in IGNORED:
                    op += child.type  # `<&-`, `>&-`
            else:
                targets.append(child)
        if cat == C_HEREDOC_REDIRECT:
            delimiter = self.node_text(targets[0]) if targets else ""
            if len(targets) > 1:
                # `rm <<EOF -rf /`: words after the delimiter are arguments of the command
                self.extra_words(node, targets[1:], subs, depth, extra)
            return [Redirect(op, delimiter, True, fd, body or ""), *nested]
        if not targets:
            return [Redirect(op, "", True, fd)]
        groups = self.split_words(targets)
        target, is_static = self.word_parts(groups[0], subs, depth)
        if len(groups) > 1:
            self.extra_words(node, [n for group in groups[1:] for n in group], subs, depth, extra)
        return [Redirect(op, target, is_static, fd)]

    def extra_words(
        self,
        node: Any,
        nodes: list[Any],
        subs: list[Substitution],
        depth: int,
        extra: list[tuple[str, bool]] | None,
    ) -> None:
        """Words the grammar hangs on a redirect belong to the command (or are a problem)."""
        if extra is None:
            self.problem_at(
                "parse.unsupported",
                "words after a redirect target where no command can take them",
                node,
            )
        for group in self.split_words(nodes):
            word = self.word_parts(group, subs, depth)
            if extra is not None:
                extra.append(word)

    def heredoc_backticks(self, body: Any, subs: list[Substitution], depth: int) -> None:
        """Backticks in an unquoted heredoc run, but the grammar leaves them as plain text:
        find each `…` span in the body's text pieces and parse it as a substitution."""
        for child in body.children or [body]:
            if child is not body and child.is_named and self.cat[child.kind_id] != C_OTHER:
                continue  # $(…), ${…}: parsed already
            text = self.node_text(child)
            for match in BACKTICK_SPAN.finditer(text):
                if not match.group(2):
                    self.problem_at("parse.error", "unterminated backtick in a heredoc", child)
                    return
                code = BACKTICK_UNESCAPE.sub(r"\1", match.group(1))
                if depth + 1 > MAX_SUBSTITUTION_DEPTH or self.reparse is None:
                    self.problem_at(
                        "parse.too-deep",
                        f"substitutions nested deeper than {MAX_SUBSTITUTION_DEPTH}",
                        child,
                    )
                    return
                inner = self.reparse(code, depth + 1)
                self.problems.extend(inner.problems)
                subs.append(Substitution("`", inner.segments))

    def redirected(
        self,
        node: Any,
        out: list[Segment],
        feed: Feed,
        depth: int,
        tree_depth: int,
        function: str | None,
        pipeline_id: int,
        stage: int,
        stages: list[int] | None = None,
        body_done: bool = False,
    ) -> int | None:
        """A statement with redirects (and, after a heredoc, possibly the rest of the line).

        ``stages`` is the stage counter of an enclosing pipeline: ``a | b 2>&1 | c`` is one
        pipeline to bash, though the grammar nests ``a | b 2>&1`` as a redirected pipeline.
        Returns what :meth:`pipeline` returns for such a nested pipeline. ``body_done``: the
        body was already walked (by :meth:`chain`) and its last segment is ``out[-1]``."""
        inner_start: int | None = None
        cat_of = self.cat
        redirects: list[Redirect] = []
        subs: list[Substitution] = []
        trailing: list[Any] = []  # statements the grammar hangs inside a heredoc redirect
        extra: list[tuple[str, bool]] = []  # `a && b > f x`: x is an argument of b
        first = len(out) - 1 if body_done and out else len(out)
        body_is_command = False
        body_ends_in_command = False
        body_end = 0
        has_body = False
        prev_end = -1
        for child in node.children:
            start = child.start_byte
            cat = cat_of[child.kind_id]
            if prev_end >= 0 and (start != prev_end + 1 or self.srcb[prev_end] != 32):
                if (
                    has_body
                    and cat in REDIRECTS
                    and LONE_DASH.fullmatch(self.srcb, prev_end, start) is not None
                ):
                    # `python3 - <<EOF`, `cat - 2>&1`: the grammar drops a `-` argument that
                    # stands right before a redirect
                    extra.append(("-", True))
                else:
                    self.gap(prev_end, start, False)
            prev_end = child.end_byte
            if cat in REDIRECTS:
                redirects.extend(self.redirect(child, subs, depth, trailing, extra))
                if extra and not body_ends_in_command:
                    self.problem_at(
                        "parse.error",
                        "words after a redirect of a compound command (bash rejects this)",
                        child,
                    )
            elif not has_body and cat in STATEMENTS:
                has_body = True
                body_ends_in_command = ends_in_command(child, cat_of)
                body_end = child.end_byte
                if body_done:
                    continue
                if cat == C_COMMAND:
                    body_is_command = True
                    out.append(self.command(child, feed, depth, function, pipeline_id, stage))
                elif cat == C_PIPELINE and stages is not None and pipeline_id:
                    inner_start = self.pipeline(
                        child, out, feed, depth, tree_depth + 1, function, pipeline_id, stages
                    )
                elif cat == C_PIPELINE:
                    self.pipelines += 1
                    self.pipeline(
                        child, out, feed, depth, tree_depth + 1, function, self.pipelines, [0]
                    )
                else:
                    self.statement(child, out, feed, depth, tree_depth + 1, function)
            elif cat not in IGNORED:
                self.problem_at(
                    "parse.unsupported",
                    f"unexpected {child.type!r} in a redirected statement",
                    child,
                )
        if len(out) > first:
            # bash applies a redirect after a list/pipeline to its last command (the grammar
            # hangs it on the whole list, tree-sitter-bash #345)
            last = out[-1]
            changes: dict[str, Any] = {
                "redirects": last.redirects + tuple(redirects),
                "substitutions": last.substitutions + tuple(subs),
            }
            if extra and last.kind == "command":
                changes["words"] = last.words + tuple(text for text, _ in extra)
                changes["static"] = last.static + tuple(flag for _, flag in extra)
            if body_is_command:
                changes["text"] = self.node_text(node)
                if last.env_stripped:
                    changes["env_stripped"] = last.env_stripped + self.text(body_end, node.end_byte)
            elif body_ends_in_command and redirects and not trailing:
                # `a | b > f`: b's text includes the redirect, as when it stands alone
                tail = self.text(body_end, node.end_byte)
                changes["text"] = last.text + tail
                if last.env_stripped:
                    changes["env_stripped"] = last.env_stripped + tail
            out[-1] = last._replace(**changes)
        else:
            out.append(
                Segment(
                    self.node_text(node),
                    (),
                    (),
                    (),
                    tuple(redirects),
                    tuple(subs),
                    "",
                    pipeline_id,
                    stage,
                    feed,
                    "redirect",
                    function,
                )
            )
        if trailing:
            self.heredoc_trailing(trailing, out, feed, depth, tree_depth, function, first)
        return inner_start

    def heredoc_trailing(
        self,
        trailing: list[Any],
        out: list[Segment],
        feed: Feed,
        depth: int,
        tree_depth: int,
        function: str | None,
        first: int,
    ) -> None:
        """``cat <<EOF | sh`` — the grammar nests ``| sh`` inside the heredoc redirect."""
        cat_of = self.cat
        body_feed = extend_feed(feed, first, len(out))
        for node in trailing:
            children = node.children
            piped = bool(children) and cat_of[children[0].kind_id] == C_PIPE_OP
            if not piped:
                self.statement(node, out, feed, depth, tree_depth + 1, function)
                continue
            pipeline_id = out[first].pipeline if len(out) > first else 0
            if pipeline_id == 0:
                self.pipelines += 1
                pipeline_id = self.pipelines
                for i in range(first, len(out)):
                    out[i] = out[i]._replace(pipeline=pipeline_id, stage=0)
            stage = [max((s.stage for s in out[first:] if s.pipeline == pipeline_id), default=0)]
            # `| sh && rm x`: the grammar puts a list after the pipe; only its first
            # pipeline is fed by the heredoc command
            for child in children:
                cat = cat_of[child.kind_id]
                if cat == C_PIPE_OP:
                    stage[0] += 1
                elif cat == C_LIST:
                    grand = child.children
                    for index, item in enumerate(grand):
                        if cat_of[item.kind_id] not in STATEMENTS:
                            continue
                        if index == 0:
                            self.stage_statement(
                                item,
                                out,
                                body_feed,
                                depth,
                                tree_depth,
                                function,
                                pipeline_id,
                                stage,
                            )
                        else:
                            self.statement(item, out, feed, depth, tree_depth + 1, function)
                elif cat in STATEMENTS:
                    self.stage_statement(
                        child, out, body_feed, depth, tree_depth, function, pipeline_id, stage
                    )

    def redirect_only(self, node: Any, feed: Feed, depth: int, function: str | None) -> Segment:
        subs: list[Substitution] = []
        redirects = self.redirect(node, subs, depth, None, None)
        return Segment(
            self.node_text(node),
            (),
            (),
            (),
            tuple(redirects),
            tuple(subs),
            "",
            0,
            0,
            feed,
            "redirect",
            function,
        )


def ends_in_command(node: Any, cat_of: list[int]) -> bool:
    """True if the statement ``node`` ends in a simple command (through lists and pipelines)."""
    while node is not None and cat_of[node.kind_id] in (C_LIST, C_PIPELINE):
        node = node.named_children[-1] if node.named_child_count else None
    return node is not None and cat_of[node.kind_id] == C_COMMAND
