"""Stage 5, render: a RecallResult -> the XML block that reaches the prompt.

Contract: ``<recalled_context query_id normalized_query user_scope>`` holding one
``<hit rank memory_id user_scope memory_kind>`` per hit, in the order of ``result.hits``
(rank order, as stage 4 gives them), each with ``<score .../>``,
``<provenance .../>`` and ``<snippet>``. Every value is escaped, so a stored memory
can never close or forge a tag. No hits renders ``""`` (no empty wrapper).
Characters XML 1.0 cannot carry (the store never writes them) become U+FFFD.
Beyond the chapter, for another analysis than the chapter's term rule: one
``<analysis analyzer .../>`` line after the opening tag (the analyzer and its
parameters), and in each hit one ``<match term words steps weight frequency>`` per
matched term, holding a ``<found_in memory_id distance weight count/>`` per record it
was counted in when the policy has context.
"""

from __future__ import annotations

from .checks import XML_ILLEGAL, require
from .explanation import TermMatch
from .records import RecallResult, RecallScoreBreakdown, StoredMemory

__all__ = ["escape_xml", "render_profile_block", "render_recall_context"]

# &, < and > always; a carriage return too, which an XML parser would normalize away, and
# in an attribute also tab and newline (normalized to spaces) and both quotes. One
# character at a time (str.translate), so an entity is never escaped twice. The output is
# that of xml.sax.saxutils.escape with these entities (a test compares them), without
# importing it: it imports urllib.request, http, email and ssl (20 to 60 ms measured here).
_TEXT_ENTITIES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", "\r": "&#13;"})
_ATTRIBUTE_ENTITIES = str.maketrans(
    {
        "&": "&amp;",
        "<": "&lt;",
        ">": "&gt;",
        '"': "&quot;",
        "'": "&apos;",
        "\n": "&#10;",
        "\r": "&#13;",
        "\t": "&#9;",
    }
)


def escape_xml(value: object, *, attribute: bool = False) -> str:
    """Escape text for XML element content or a double-quoted attribute value."""
    text = XML_ILLEGAL.sub("\ufffd", str(value))
    return text.translate(_ATTRIBUTE_ENTITIES if attribute else _TEXT_ENTITIES)


def _element(name: str, /, close: str = ">", **attributes: object) -> str:
    values = " ".join(
        f'{key}="{escape_xml(value, attribute=True)}"' for key, value in attributes.items()
    )
    return f"<{name} {values}{close}"


def _score_attributes(score: RecallScoreBreakdown) -> dict[str, str]:
    """The chapter's five numbers; another scorer also names itself and its evidence."""
    shown = {
        "total": score.total,
        "lexical_coverage": score.lexical_coverage,
        "recency": score.recency,
        "lexical_contribution": score.lexical_contribution,
        "recency_contribution": score.recency_contribution,
    }
    if score.scorer != "coverage":
        shown.update(bm25=score.bm25, evidence=score.evidence)
    if score.vector_model is not None:
        shown.update(
            vector_similarity=score.vector_similarity,
            vector_contribution=score.vector_contribution,
        )
    attributes = {name: f"{value:.6f}" for name, value in shown.items() if value is not None}
    if score.scorer != "coverage":
        attributes["scorer"] = score.scorer
    if score.vector_model is not None:
        attributes["vector_model"] = score.vector_model
    return attributes


def _match_lines(match: TermMatch) -> list[str]:
    head = _element(
        "match",
        close="/>" if not match.found_in else ">",
        term=match.term,
        words=" ".join(match.words),
        steps=" ".join(match.steps),
        weight=f"{match.weight:.6f}",
        frequency=f"{match.frequency:.6f}",
    )
    if not match.found_in:
        return ["    " + head]
    inner = [
        "      "
        + _element(
            "found_in",
            close="/>",
            memory_id=source.memory_id,
            distance=source.distance,
            weight=f"{source.weight:.6f}",
            count=source.count,
        )
        for source in match.found_in
    ]
    return ["    " + head, *inner, "    </match>"]


def render_recall_context(result: RecallResult) -> str:
    """The prompt block for the selected hits, or ``""`` when there are none."""
    result = require(result, RecallResult, "result")
    if not result.hits:
        return ""
    query = result.query
    lines = [
        _element(
            "recalled_context",
            query_id=query.query_id,
            normalized_query=query.normalized_text,
            user_scope=query.user_scope,
        )
    ]
    explained = result.hits[0].score_breakdown
    if explained.analyzer is not None:  # one policy ranked every hit: say it once
        lines.append(
            "  "
            + _element(
                "analysis",
                close="/>",
                analyzer=explained.analyzer,
                **dict(explained.analysis_parameters),
            )
        )
    for hit in result.hits:
        score = hit.score_breakdown
        source = hit.provenance
        lines += [
            "  "
            + _element(
                "hit",
                rank=hit.rank,
                memory_id=hit.memory_id,
                user_scope=hit.scope.user_scope,
                memory_kind=hit.scope.memory_kind.value,
            ),
            "    " + _element("score", close="/>", **_score_attributes(score)),
            *(line for match in score.term_matches for line in _match_lines(match)),
            "    "
            + _element(
                "provenance",
                close="/>",
                source_id=source.source_id,
                source_type=source.source_type,
                captured_at=source.captured_at,
            ),
            f"    <snippet>{escape_xml(hit.snippet)}</snippet>",
            "  </hit>",
        ]
    lines.append("</recalled_context>")
    return "\n".join(lines)


def render_profile_block(profile: StoredMemory | None) -> str:
    """``<remote_profile memory_id source_id captured_at>`` with escaped content, or ""."""
    if profile is None:
        return ""
    profile = require(profile, StoredMemory, "profile")
    head = _element(
        "remote_profile",
        memory_id=profile.memory_id,
        source_id=profile.source.source_id,
        captured_at=profile.source.captured_at,
    )
    return f"{head}\n{escape_xml(profile.content)}\n</remote_profile>"
