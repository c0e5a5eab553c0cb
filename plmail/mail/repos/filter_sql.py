"""Message filters in JMAP's FilterOperator/FilterCondition shape, compiled to SQL.

One compiler serves JMAP's Email/query and the user's filter rules, so a rule and a phone's query can
never disagree about what "from contains" means, and matching happens in PostgreSQL where the
search vector lives. The compiled fragment reads message columns through the alias `m`.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from plmail.db.repos.threads import thread_tab
from plmail.domain.errors import FilterError

MAX_DEPTH = 10
MAX_CONDITIONS = 100
# Keywords with a column of their own, and the IMAP system flags that mean the others; any other keyword is
# one of the message's flags, matched without regard to case (IMAP keeps the server's spelling).
_KEYWORDS = {
    "$seen": "m.seen_at IS NOT NULL",
    "$flagged": "m.starred_at IS NOT NULL",
}
_SYSTEM_FLAGS = {"$draft": "\\Draft", "$answered": "\\Answered", "$deleted": "\\Deleted"}
_KEYWORD_TEXT = re.compile(r"^[\x21-\x7e]{1,255}$")
_WORDS = re.compile(r"[\w.@+-]+")
_TEXT_PROPERTIES = {"from", "to", "cc", "bcc", "subject", "body", "text", "listId", "filename"}


@dataclass(slots=True)
class Params:
    """Positional parameters ($1, $2, …) shared by the fragment and the query around it."""

    values: list[Any] = field(default_factory=list)

    def add(self, value: Any) -> str:
        self.values.append(value)
        return f"${len(self.values)}"


@dataclass(frozen=True, slots=True)
class FilterVocabulary:
    """Which properties a caller may use: JMAP takes mailbox (binding) ids, rules take label ids."""

    mailboxes: bool = True
    labels: bool = False
    accounts: bool = False
    thread_keywords: bool = True
    mailboxes_are_labels: bool = False  # the unified account: a Mailbox id is a label id


JMAP_VOCABULARY = FilterVocabulary()
UNIFIED_VOCABULARY = FilterVocabulary(mailboxes_are_labels=True)
RULE_VOCABULARY = FilterVocabulary(mailboxes=False, labels=True, accounts=True, thread_keywords=False)


def like(value: str) -> str:
    escaped = value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


class FilterCompiler:
    """Method `_c_<property>` compiles one JMAP condition property (names as JMAP spells them)."""

    def __init__(self, vocabulary: FilterVocabulary = JMAP_VOCABULARY) -> None:
        self.vocabulary = vocabulary

    def compile(self, tree: Mapping[str, Any] | None, params: Params) -> str:
        if not tree:
            return "TRUE"
        counter = [0]
        return self._node(tree, params, 1, counter)

    def _node(self, node: Any, params: Params, depth: int, counter: list[int]) -> str:
        if not isinstance(node, Mapping):
            raise FilterError("A filter must be an object.", "invalidArguments")
        if depth > MAX_DEPTH:
            raise FilterError(f"Filters may nest at most {MAX_DEPTH} deep.", "invalidArguments")
        if "operator" in node:
            if set(node) - {"operator", "conditions"}:
                raise FilterError("An operator holds only 'operator' and 'conditions'.", "invalidArguments")
            operator = node["operator"]
            conditions = node.get("conditions")
            if operator not in ("AND", "OR", "NOT") or not isinstance(conditions, list) or not conditions:
                raise FilterError("An operator needs AND, OR or NOT and a list of conditions.", "invalidArguments")
            parts = [self._node(child, params, depth + 1, counter) for child in conditions]
            if operator == "AND":
                return "(" + " AND ".join(parts) + ")"
            joined = "(" + " OR ".join(parts) + ")"
            return joined if operator == "OR" else f"(NOT {joined})"
        if not node:
            raise FilterError("An empty condition matches nothing useful.", "invalidArguments")
        parts = []
        for name, value in node.items():
            counter[0] += 1
            if counter[0] > MAX_CONDITIONS:
                raise FilterError(f"A filter may have at most {MAX_CONDITIONS} conditions.", "invalidArguments")
            parts.append(self._condition(name, value, params))
        return "(" + " AND ".join(parts) + ")"

    def _condition(self, name: str, value: Any, params: Params) -> str:
        if name in _TEXT_PROPERTIES:
            if not isinstance(value, str) or not value.strip():
                raise FilterError(f"'{name}' needs some text.", "invalidArguments")
            return self._text(name, value.strip(), params)
        handler = getattr(self, f"_c_{name}", None)
        if handler is None:
            raise FilterError(f"Filtering by '{name}' is not supported.")
        result: str = handler(value, params)
        return result

    def _text(self, name: str, value: str, params: Params) -> str:
        if name == "text":
            p = params.add(value[:500])
            # English stems words, 'simple' keeps addresses and hosts whole.
            return (f"EXISTS (SELECT 1 FROM message_search ms WHERE ms.message_id = m.id "
                    f"AND ms.search_vector @@ (websearch_to_tsquery('english', {p}) "
                    f"|| websearch_to_tsquery('simple', {p})))")
        p = params.add(like(value))
        if name == "from":
            return f"(m.from_address ILIKE {p} OR m.from_name ILIKE {p})"
        if name in ("to", "cc", "bcc"):
            column = {"to": "to_addresses", "cc": "cc_addresses", "bcc": "bcc_addresses"}[name]
            # The three lists' trigram index finds the candidates; the named list decides.
            return (f"(plmail_recipients_text(m.to_addresses, m.cc_addresses, m.bcc_addresses) ILIKE {p} "
                    f"AND m.{column}::text ILIKE {p})")
        if name == "subject":
            return f"(m.subject ILIKE {p})"
        if name == "body":
            return f"(m.body_text ILIKE {p})"
        if name == "listId":
            return f"(plmail_list_id(m.headers) ILIKE {p})"
        return f"EXISTS (SELECT 1 FROM message_part mp WHERE mp.message_id = m.id AND mp.filename ILIKE {p})"

    # Conditions that are not free text, one method each.

    def _c_fromWords(self, value: Any, params: Params) -> str:
        """The search box's from: — whole words of the sender's name, address, local part or domain."""
        return address_terms_sql("f", address_words(value, "fromWords"), params)

    def _c_toWords(self, value: Any, params: Params) -> str:
        """The search box's to: — whole words of a recipient's name, address, local part or domain."""
        return address_terms_sql("t", address_words(value, "toWords"), params)

    def _c_ccWords(self, value: Any, params: Params) -> str:
        return address_terms_sql("c", address_words(value, "ccWords"), params)

    def _c_bccWords(self, value: Any, params: Params) -> str:
        return address_terms_sql("b", address_words(value, "bccWords"), params)

    def _c_header(self, value: Any, params: Params) -> str:
        if not isinstance(value, list) or not 1 <= len(value) <= 2 or not all(isinstance(v, str) for v in value):
            raise FilterError("'header' takes [name] or [name, text].", "invalidArguments")
        name = params.add(value[0].strip().lower())
        if len(value) == 1:
            return f"EXISTS (SELECT 1 FROM jsonb_each(m.headers) h WHERE lower(h.key) = {name})"
        text = params.add(like(value[1]))
        return (f"EXISTS (SELECT 1 FROM jsonb_each_text(m.headers) h "
                f"WHERE lower(h.key) = {name} AND h.value ILIKE {text})")

    def _c_hasAttachment(self, value: Any, params: Params) -> str:
        if not isinstance(value, bool):
            raise FilterError("'hasAttachment' is true or false.", "invalidArguments")
        return f"(m.has_attachments = {params.add(value)})"

    def _c_minSize(self, value: Any, params: Params) -> str:
        return f"(coalesce(m.size, 0) >= {params.add(_number(value, 'minSize'))})"

    def _c_maxSize(self, value: Any, params: Params) -> str:
        return f"(coalesce(m.size, 0) < {params.add(_number(value, 'maxSize'))})"

    def _c_before(self, value: Any, params: Params) -> str:
        return f"(m.received_at < {params.add(_instant(value, 'before'))})"

    def _c_after(self, value: Any, params: Params) -> str:
        return f"(m.received_at >= {params.add(_instant(value, 'after'))})"

    def _c_hasKeyword(self, value: Any, params: Params) -> str:
        return keyword_sql(value, params)

    def _c_notKeyword(self, value: Any, params: Params) -> str:
        return f"(NOT {keyword_sql(value, params)})"

    def _thread_keyword(self, value: Any, params: Params, quantifier: str) -> str:
        if not self.vocabulary.thread_keywords:
            raise FilterError("Thread keyword conditions are not available here.")
        return thread_keyword_sql(value, params, quantifier)

    def _c_allInThreadHaveKeyword(self, value: Any, params: Params) -> str:
        return self._thread_keyword(value, params, "all")

    def _c_someInThreadHaveKeyword(self, value: Any, params: Params) -> str:
        return self._thread_keyword(value, params, "some")

    def _c_noneInThreadHaveKeyword(self, value: Any, params: Params) -> str:
        return self._thread_keyword(value, params, "none")

    def _c_inMailbox(self, value: Any, params: Params) -> str:
        if not self.vocabulary.mailboxes:
            raise FilterError("Use 'hasLabel' in rules.")
        if self.vocabulary.mailboxes_are_labels:
            label = params.add(_int_id(value, "inMailbox"))
            return f"EXISTS (SELECT 1 FROM message_label ml WHERE ml.message_id = m.id AND ml.label_id = {label})"
        binding = params.add(_int_id(value, "inMailbox"))
        return (f"EXISTS (SELECT 1 FROM message_label ml JOIN label_binding b ON b.label_id = ml.label_id "
                f"WHERE ml.message_id = m.id AND b.id = {binding} AND b.account_id = m.account_id)")

    def _c_inMailboxOtherThan(self, value: Any, params: Params) -> str:
        if not self.vocabulary.mailboxes:
            raise FilterError("Use 'notLabel' in rules.")
        if not isinstance(value, list):
            raise FilterError("'inMailboxOtherThan' takes a list of mailbox ids.", "invalidArguments")
        ids = params.add([_int_id(v, "inMailboxOtherThan") for v in value])
        if self.vocabulary.mailboxes_are_labels:
            return (f"EXISTS (SELECT 1 FROM message_label ml WHERE ml.message_id = m.id "
                    f"AND ml.label_id <> ALL({ids}::int[]))")
        return (f"EXISTS (SELECT 1 FROM message_label ml WHERE ml.message_id = m.id AND ml.label_id NOT IN "
                f"(SELECT b.label_id FROM label_binding b WHERE b.id = ANY({ids}::int[])))")

    def _c_hasLabel(self, value: Any, params: Params) -> str:
        if not self.vocabulary.labels:
            raise FilterError("Filtering by 'hasLabel' is not supported here.")
        label = params.add(_int_id(value, "hasLabel"))
        return f"EXISTS (SELECT 1 FROM message_label ml WHERE ml.message_id = m.id AND ml.label_id = {label})"

    def _c_notLabel(self, value: Any, params: Params) -> str:
        return f"(NOT {self._c_hasLabel(value, params)})"

    def _c_account(self, value: Any, params: Params) -> str:
        if not self.vocabulary.accounts:
            raise FilterError("Filtering by 'account' is not supported here.")
        return f"(m.account_id = {params.add(_int_id(value, 'account'))})"

    def _c_threadCategory(self, value: Any, params: Params) -> str:
        if not isinstance(value, str):
            raise FilterError("'threadCategory' takes a category name.", "invalidArguments")
        category = params.add(value)
        tab = thread_tab("tc")
        return f"EXISTS (SELECT 1 FROM message_thread tc WHERE tc.id = m.thread_id AND {tab} = {category})"


# The search box's address operators and the field their terms are kept under (table message_address_term).
ADDRESS_WORD_FIELDS = {"fromWords": "f", "toWords": "t", "ccWords": "c", "bccWords": "b"}


def address_words(value: Any, name: str) -> list[str]:
    """The words of an address condition, lowercased (str.lower knows umlauts whatever the database's locale)."""
    if not isinstance(value, str):
        raise FilterError(f"'{name}' takes text.", "invalidArguments")
    words = [w for w in _WORDS.findall(value.lower()) if w.strip(".@-_+")]
    if not words:
        raise FilterError(f"'{name}' needs a word.", "invalidArguments")
    return words[:8]


def address_terms_sql(field: str, words: list[str], params: Params, alias: str = "m") -> str:
    """Whether every term of `words` is one of the message's address terms in `field` (all of them: a
    multi-word value is an AND). The terms are the lexemes the database's parser makes of the words."""
    terms = f"plmail_query_address_terms({params.add(words)}::text[])"
    return (f"(cardinality({terms}) > 0 AND NOT EXISTS (SELECT 1 FROM unnest({terms}) q(term) WHERE NOT EXISTS ("
            f"SELECT 1 FROM message_address_term x WHERE x.message_id = {alias}.id AND x.field = '{field}' "
            f"AND x.term = q.term COLLATE \"C\")))")


def keyword_sql(value: Any, params: Params, alias: str = "m") -> str:
    """Whether the message `alias` has the keyword (RFC 8621 §4.1.1: case-insensitive)."""
    if not isinstance(value, str) or not _KEYWORD_TEXT.match(value):
        raise FilterError("A keyword is a string of 1-255 printable ASCII characters.", "invalidArguments")
    lowered = value.lower()
    column = _KEYWORDS.get(lowered)
    if column is not None:
        return column.replace("m.", f"{alias}.")
    names = params.add([lowered, *([_SYSTEM_FLAGS[lowered].lower()] if lowered in _SYSTEM_FLAGS else [])])
    return (f"EXISTS (SELECT 1 FROM jsonb_array_elements_text({alias}.flags) kf "
            f"WHERE lower(kf) = ANY({names}::text[]))")


def thread_keyword_sql(value: Any, params: Params, quantifier: str, alias: str = "m") -> str:
    """Whether all, some or none of the messages in the thread of `alias` have the keyword."""
    inner = keyword_sql(value, params, "t2")
    thread = f"t2.thread_id = {alias}.thread_id"
    if quantifier == "all":
        return f"(NOT EXISTS (SELECT 1 FROM message t2 WHERE {thread} AND NOT {inner}))"
    exists = f"EXISTS (SELECT 1 FROM message t2 WHERE {thread} AND {inner})"
    return exists if quantifier == "some" else f"(NOT {exists})"


def _number(value: Any, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise FilterError(f"'{name}' takes a non-negative number.", "invalidArguments")
    return value


def _int_id(value: Any, name: str) -> int:
    try:
        number = int(value)
    except (TypeError, ValueError):
        raise FilterError(f"'{name}' takes an id.", "invalidArguments") from None
    if number <= 0 or number > 2**63 - 1:
        raise FilterError(f"'{name}' takes an id.", "invalidArguments")
    return number


def _instant(value: Any, name: str) -> datetime:
    if isinstance(value, datetime):
        moment = value
    elif isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            raise FilterError(f"'{name}' takes a UTC date such as 2026-03-01T00:00:00Z.", "invalidArguments") from None
    else:
        raise FilterError(f"'{name}' takes a date.", "invalidArguments")
    if moment.tzinfo is None:
        raise FilterError(f"'{name}' needs a time zone (use Z for UTC).", "invalidArguments")
    return moment
