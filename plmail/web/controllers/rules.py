"""The filter editor: rules listed in plain language, edited with a live preview, run on existing mail."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from litestar import Controller, Request, get, post
from litestar.exceptions import NotFoundException
from litestar.params import FromPath
from litestar.response import Redirect, Template

from plmail.domain.errors import FilterError, NotFoundError, ValidationError
from plmail.domain.models import RulePreviewMatch
from plmail.mail.rules.describe import describe_rule
from plmail.mail.rules.engine import PREVIEW_CAP
from plmail.mail.rules.model import PLAIN_ACTIONS, RuleDraft
from plmail.services import services_from
from plmail.web.controllers.forms import parse_form
from plmail.web.pages import locale_for, render, signed_in_user

# What each condition row and action checkbox says in the editor (English keys of the catalogue).
FIELD_LABELS = {
    "from": "From contains", "to": "To contains", "cc": "Cc contains", "subject": "Subject contains",
    "body": "Body contains", "text": "Anywhere in the message", "listId": "Mailing list is",
    "filename": "Attachment named", "hasAttachment": "Has an attachment", "minSize": "Larger than (KB)",
    "maxSize": "Smaller than (KB)", "hasLabel": "Has the label", "notLabel": "Does not have the label",
}
ACTION_LABELS = {"archive": "Archive it", "trash": "Move it to the trash", "markSpam": "Mark it as spam",
                 "star": "Star it", "markRead": "Mark it as read"}
CONDITION_FIELDS = tuple(FIELD_LABELS)


@dataclass(frozen=True)
class MoveForm:
    direction: str = "down"


@dataclass(frozen=True)
class RuleForm:
    name: str = ""
    account_id: str = ""
    match: str = "all"
    condition_field: list[str] = field(default_factory=list)
    condition_value: list[str] = field(default_factory=list)
    actions: list[str] = field(default_factory=list)
    apply_label: str = ""
    file_category: str = ""
    stop_processing: str = ""
    enabled: str = "on"


def conditions_from(form: RuleForm, label_paths: dict[int, str]) -> dict[str, Any]:
    """Form rows to a condition tree: all rows must match, or any of them. Labels are given by name."""
    by_path = {path.lower(): label_id for label_id, path in label_paths.items()}
    rows: list[dict[str, Any]] = []
    for name, raw in zip(form.condition_field, form.condition_value, strict=False):
        value = raw.strip()
        if name not in CONDITION_FIELDS or (not value and name != "hasAttachment"):
            continue
        if name == "hasAttachment":
            rows.append({name: True})
        elif name in ("minSize", "maxSize"):
            if not value.isdigit():
                raise ValidationError("Sizes are whole numbers of kilobytes.")
            rows.append({name: int(value) * 1024})
        elif name in ("hasLabel", "notLabel"):
            label_id = by_path.get(value.lower())
            if label_id is None:
                raise ValidationError(f"There is no label named {value!r}.")
            rows.append({name: label_id})
        else:
            rows.append({name: value})
    if not rows:
        return {}
    if len(rows) == 1:
        return rows[0]
    return {"operator": "OR" if form.match == "any" else "AND", "conditions": rows}


def actions_from(form: RuleForm) -> list[dict[str, Any]]:
    actions: list[dict[str, Any]] = [{"type": kind} for kind in form.actions if kind in PLAIN_ACTIONS]
    if form.apply_label.isdigit():
        actions.append({"type": "applyLabel", "labelId": int(form.apply_label)})
    if form.file_category:
        actions.append({"type": "fileIntoCategory", "category": form.file_category})
    return actions


class RuleController(Controller):
    path = "/rules"

    async def _names(self, request: Request[Any, Any, Any]) -> tuple[dict[int, str], dict[int, str]]:
        user = signed_in_user(request)
        services = services_from(request)
        labels = {label.id: label.path for label in await services.labels.all_for_user(user.id)}
        accounts = {a.id: a.name or a.email for a in await services.accounts.for_user(user.id)}
        return labels, accounts

    @get("/")
    async def page(self, request: Request[Any, Any, Any]) -> Template:
        user = signed_in_user(request)
        rules = await services_from(request).rules.for_user(user.id)
        labels, accounts = await self._names(request)
        described = [(r, describe_rule(r.conditions, r.actions, locale_for(request), labels, accounts)) for r in rules]
        return await render(request, "rules.html", rules=described)

    @get("/new")
    async def new(self, request: Request[Any, Any, Any]) -> Template:
        return await self._editor(request, None, RuleForm(condition_field=["from"], condition_value=[""]))

    @get("/{rule_id:int}")
    async def edit(self, request: Request[Any, Any, Any], rule_id: FromPath[int]) -> Template:
        user = signed_in_user(request)
        rule = await services_from(request).rules.owned(user.id, rule_id)
        if rule is None:
            raise NotFoundException()
        labels, _ = await self._names(request)
        return await self._editor(request, rule_id, _form_of(rule.name, rule.account_id, rule.conditions,
                                                             rule.actions, rule.stop_processing, rule.is_enabled,
                                                             labels))

    async def _editor(self, request: Request[Any, Any, Any], rule_id: int | None, form: RuleForm, *,
                      status_code: int = 200, error: str | None = None) -> Template:
        labels, accounts = await self._names(request)
        return await render(request, "rule_edit.html", status_code=status_code, rule_id=rule_id, form=form,
                            label_names=labels, account_names=accounts, field_labels=FIELD_LABELS,
                            action_labels=ACTION_LABELS, error=error)

    @post("/preview")
    async def preview(self, request: Request[Any, Any, Any]) -> Template:
        """The live restatement and match count shown while the rule is being written."""
        data = parse_form(await request.form(), RuleForm)
        user = signed_in_user(request)
        labels, accounts = await self._names(request)
        count: int | None = None
        matches: list[RulePreviewMatch] = []
        try:
            conditions = conditions_from(data, labels)
            actions = actions_from(data)
            account = int(data.account_id) if data.account_id.isdigit() else None
            count = await services_from(request).rules.preview(user.id, conditions, account)
            matches = await services_from(request).rules.preview_matches(user.id, conditions, account)
            text = describe_rule(conditions, actions, locale_for(request), labels, accounts) if actions else ""
            error = None
        except (ValidationError, FilterError) as exc:
            text, error = "", str(exc)
        return await render(request, "partials/rule_preview.html", bare=True, count=count, cap=PREVIEW_CAP,
                            description=text, error=error, matches=matches)

    @post("/")
    async def create(self, request: Request[Any, Any, Any]) -> Template | Redirect:
        return await self._save(request, None, parse_form(await request.form(), RuleForm))

    @post("/{rule_id:int}")
    async def update(self, request: Request[Any, Any, Any], rule_id: FromPath[int]) -> Template | Redirect:
        return await self._save(request, rule_id, parse_form(await request.form(), RuleForm))

    async def _save(self, request: Request[Any, Any, Any], rule_id: int | None, data: RuleForm
                    ) -> Template | Redirect:
        user = signed_in_user(request)
        services = services_from(request)
        labels, accounts = await self._names(request)
        try:
            draft = RuleDraft(
                name=data.name, account_id=int(data.account_id) if data.account_id.isdigit() else None,
                conditions=conditions_from(data, labels), actions=actions_from(data),
                is_enabled=data.enabled == "on", stop_processing=data.stop_processing == "on",
            )
            await services.rules.save(user.id, rule_id, draft, set(labels), set(accounts))
        except (ValidationError, NotFoundError) as exc:
            return await self._editor(request, rule_id, data, status_code=400, error=str(exc))
        return Redirect("/rules")

    @post("/{rule_id:int}/run")
    async def run(self, request: Request[Any, Any, Any], rule_id: FromPath[int]) -> Redirect:
        user = signed_in_user(request)
        try:
            await services_from(request).rules.request_run(user.id, rule_id)
        except NotFoundError:
            raise NotFoundException() from None
        return Redirect("/rules")

    @get("/{rule_id:int}/progress")
    async def progress(self, request: Request[Any, Any, Any], rule_id: FromPath[int]) -> Template:
        """The run on existing mail, polled by the filter list while it is queued or running."""
        user = signed_in_user(request)
        rule = await services_from(request).rules.owned(user.id, rule_id)
        if rule is None:
            raise NotFoundException()
        return await render(request, "partials/rule_progress.html", bare=True, rule=rule)

    @post("/{rule_id:int}/move")
    async def move(self, request: Request[Any, Any, Any], rule_id: FromPath[int]) -> Redirect:
        user = signed_in_user(request)
        data = parse_form(await request.form(), MoveForm)
        try:
            await services_from(request).rules.move(user.id, rule_id, -1 if data.direction == "up" else 1)
        except NotFoundError:
            raise NotFoundException() from None
        return Redirect(f"/rules#rule-{rule_id}")

    @post("/{rule_id:int}/delete")
    async def delete(self, request: Request[Any, Any, Any], rule_id: FromPath[int]) -> Redirect:
        user = signed_in_user(request)
        try:
            await services_from(request).rules.delete(user.id, rule_id)
        except NotFoundError:
            raise NotFoundException() from None
        return Redirect("/rules")


def _form_of(name: str, account_id: int | None, conditions: dict[str, Any], actions: list[dict[str, Any]],
             stop: bool, enabled: bool, labels: dict[int, str]) -> RuleForm:
    rows = conditions.get("conditions", []) if "operator" in conditions else ([conditions] if conditions else [])
    fields: list[str] = []
    values: list[str] = []
    for row in rows:
        for key, value in row.items():
            fields.append(key)
            if key in ("minSize", "maxSize"):
                values.append(str(value // 1024))
            elif key in ("hasLabel", "notLabel"):
                values.append(labels.get(int(value), str(value)))
            else:
                values.append("" if value is True else str(value))
    return RuleForm(
        name=name, account_id=str(account_id or ""), match="any" if conditions.get("operator") == "OR" else "all",
        condition_field=fields or ["from"], condition_value=values or [""],
        actions=[a["type"] for a in actions if a["type"] in PLAIN_ACTIONS],
        apply_label=next((str(a["labelId"]) for a in actions if a["type"] == "applyLabel"), ""),
        file_category=next((str(a["category"]) for a in actions if a["type"] == "fileIntoCategory"), ""),
        stop_processing="on" if stop else "", enabled="on" if enabled else "",
    )
