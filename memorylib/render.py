"""Stage 5, render: a RecallResult -> the XML block that reaches the prompt.

Contract: ``<recalled_context query_id normalized_query user_scope>`` holding one
``<hit rank memory_id user_scope memory_kind>`` per hit, each with ``<score .../>``,
``<provenance .../>`` and ``<snippet>``. Every value is escaped, so a stored memory
can never close or forge a tag. No hits renders ``""`` (no empty wrapper).
Characters XML 1.0 cannot carry (the store never writes them) become U+FFFD.
"""

from __future__ import annotations

from ._checks import XML_ILLEGAL, type_name
from .errors import RemoteMemoryValidationError
from .records import RecallResult, StoredMemory

__all__ = ["escape_xml", "render_profile_block", "render_recall_context"]

_TEXT_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", "\r": "&#13;"})
_ATTR_ESCAPES = str.maketrans(
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
    return text.translate(_ATTR_ESCAPES if attribute else _TEXT_ESCAPES)


def _attrs(**values: object) -> str:
    return " ".join(
        f'{name}="{escape_xml(value, attribute=True)}"' for name, value in values.items()
    )


def render_recall_context(result: RecallResult) -> str:
    """The prompt block for the selected hits, or ``""`` when there are none."""
    if not isinstance(result, RecallResult):
        raise RemoteMemoryValidationError(f"result must be a RecallResult, got {type_name(result)}")
    if not result.hits:
        return ""
    query = result.query
    lines = [
        "<recalled_context "
        + _attrs(
            query_id=query.query_id,
            normalized_query=query.normalized_text,
            user_scope=query.user_scope,
        )
        + ">"
    ]
    for hit in result.hits:
        b = hit.score_breakdown
        lines += [
            "  <hit "
            + _attrs(
                rank=hit.rank,
                memory_id=hit.memory_id,
                user_scope=hit.scope.user_scope,
                memory_kind=hit.scope.memory_kind.value,
            )
            + ">",
            "    <score "
            + _attrs(
                total=f"{b.total:.6f}",
                lexical_coverage=f"{b.lexical_coverage:.6f}",
                recency=f"{b.recency:.6f}",
                lexical_contribution=f"{b.lexical_contribution:.6f}",
                recency_contribution=f"{b.recency_contribution:.6f}",
            )
            + "/>",
            "    <provenance "
            + _attrs(
                source_id=hit.provenance.source_id,
                source_type=hit.provenance.source_type,
                captured_at=hit.provenance.captured_at,
            )
            + "/>",
            f"    <snippet>{escape_xml(hit.snippet)}</snippet>",
            "  </hit>",
        ]
    lines.append("</recalled_context>")
    return "\n".join(lines)


def render_profile_block(profile: StoredMemory | None) -> str:
    """``<remote_profile memory_id source_id captured_at>`` with escaped content, or ""."""
    if profile is None:
        return ""
    if not isinstance(profile, StoredMemory):
        raise RemoteMemoryValidationError(
            f"profile must be a StoredMemory, got {type_name(profile)}"
        )
    head = _attrs(
        memory_id=profile.memory_id,
        source_id=profile.source.source_id,
        captured_at=profile.source.captured_at,
    )
    return f"<remote_profile {head}>\n{escape_xml(profile.content)}\n</remote_profile>"
