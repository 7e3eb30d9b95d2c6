"""Reference solution for notebook 06's build-it exercise (for instructors).

Nothing for no hits; otherwise every value escaped on its way in: text with & < >,
attribute values with the double quote as well; score numbers with 6 decimals.
"""

# build-it: render (notebook 06c runs this cell, as saved, in your pipeline)
from xml.sax.saxutils import escape

from memorylib import RecallResult


def my_render_recall_context(result: RecallResult) -> str:
    if not result.hits:
        return ""

    def tag(name: str, end: str = ">", **values: object) -> str:
        pairs = " ".join(f'{k}="{escape(str(v), {chr(34): "&quot;"})}"' for k, v in values.items())
        return f"<{name} {pairs}{end}"

    query = result.query
    lines = [
        tag(
            "recalled_context",
            query_id=query.query_id,
            normalized_query=query.normalized_text,
            user_scope=query.user_scope,
        ),
    ]
    for hit in result.hits:
        b, source = hit.score_breakdown, hit.provenance
        numbers = {
            "total": b.total,
            "lexical_coverage": b.lexical_coverage,
            "recency": b.recency,
            "lexical_contribution": b.lexical_contribution,
            "recency_contribution": b.recency_contribution,
        }
        lines += [
            "  "
            + tag(
                "hit",
                rank=hit.rank,
                memory_id=hit.memory_id,
                user_scope=hit.scope.user_scope,
                memory_kind=hit.scope.memory_kind.value,
            ),
            "    " + tag("score", "/>", **{k: f"{v:.6f}" for k, v in numbers.items()}),
            "    "
            + tag(
                "provenance",
                "/>",
                source_id=source.source_id,
                source_type=source.source_type,
                captured_at=source.captured_at,
            ),
            f"    <snippet>{escape(hit.snippet)}</snippet>",
            "  </hit>",
        ]
    lines.append("</recalled_context>")
    return "\n".join(lines)
