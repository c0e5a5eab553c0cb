"""RFC 8620 request-level (§3.6.1) and method-level (§3.6.2) errors, each one we support, raw over HTTP."""

from __future__ import annotations

import json
from contextlib import AsyncExitStack
from typing import Any

import pytest

from plmail.jmap import routes
from plmail.jmap.api import ApiProcessor
from plmail.jmap.methods import core
from plmail.jmap.registry import MethodRegistry, MethodTable
from plmail.jmap.routes import API
from tests.integration.jmap.conftest import CORE, MAIL, USING, JmapBox, make_box
from tests.support.mail import make_message


async def _raw(box: JmapBox, body: bytes, content_type: str = "application/json") -> Any:
    return await box.http.post("/jmap/api", content=body,
                               headers={**box.headers, "Content-Type": content_type})


def _problem(response: Any, kind: str) -> dict[str, Any]:
    assert response.status_code == 400, response.text
    assert response.headers["content-type"].startswith("application/problem+json")
    body = dict(response.json())
    assert body["type"] == f"urn:ietf:params:jmap:error:{kind}", body
    return body


async def test_not_json(box: JmapBox) -> None:
    _problem(await _raw(box, b'{"using": [], "methodCalls": []}', "text/plain"), "notJSON")
    _problem(await _raw(box, b"{not json"), "notJSON")
    _problem(await _raw(box, b'{"using": [], "methodCalls": [], "x": NaN}'), "notJSON")
    _problem(await _raw(box, b"\xff\xfe"), "notJSON")


@pytest.mark.parametrize("body", [
    [], {"methodCalls": []}, {"using": "core", "methodCalls": []}, {"using": [CORE]},
    {"using": [CORE], "methodCalls": [["Core/echo", {}]]}, {"using": [CORE], "methodCalls": [["Core/echo", [], "a"]]},
    {"using": [CORE], "methodCalls": [], "createdIds": {"a": 1}},
])
async def test_not_request(box: JmapBox, body: Any) -> None:
    _problem(await _raw(box, json.dumps(body).encode()), "notRequest")


async def test_unknown_capability(box: JmapBox) -> None:
    body = _problem(await box.request([["Core/echo", {}, "a"]], using=[CORE, "urn:example:nope"]),
                    "unknownCapability")
    assert "urn:example:nope" in body["detail"]


async def test_limits_calls_size_and_concurrency(box: JmapBox) -> None:
    calls = [["Core/echo", {"n": i}, str(i)] for i in range(33)]
    assert _problem(await box.request(calls), "limit")["limit"] == "maxCallsInRequest"
    assert (await box.request(calls[:32])).status_code == 200
    huge = json.dumps({"using": [CORE], "methodCalls": [["Core/echo", {"pad": "x" * 10_000_001}, "a"]]}).encode()
    assert _problem(await _raw(box, huge), "limit")["limit"] == "maxSizeRequest"
    principal = await box.services.app_passwords.authenticate(box.headers["Authorization"], client="test")
    async with AsyncExitStack() as stack:
        for _ in range(4):
            await stack.enter_async_context(API.slot(principal))
        assert _problem(await box.request([["Core/echo", {}, "a"]]), "limit")["limit"] == "maxConcurrentRequests"
    assert (await box.request([["Core/echo", {}, "a"]])).status_code == 200


async def test_echo_and_call_ids_come_back_in_order(box: JmapBox) -> None:
    response = (await box.request([["Core/echo", {"a": 1}, "first"], ["Core/echo", {"b": [2]}, "second"]],
                                  using=[CORE])).json()
    assert response["methodResponses"] == [["Core/echo", {"a": 1}, "first"], ["Core/echo", {"b": [2]}, "second"]]
    assert "createdIds" not in response
    echoed = (await box.request([["Core/echo", {}, "a"]], using=[CORE], createdIds={"k": "1"})).json()
    assert echoed["createdIds"] == {"k": "1"}


async def test_unknown_method_and_method_outside_using(box: JmapBox) -> None:
    assert (await box.error("Foo/bar", {}))["type"] == "unknownMethod"
    assert (await box.error("Mailbox/get", {"accountId": box.account}, using=[CORE]))["type"] == "unknownMethod"
    assert (await box.error("EmailSubmission/frobnicate", {"accountId": box.account},
                            using=[*USING, "urn:ietf:params:jmap:submission"]))["type"] == "unknownMethod"


async def test_invalid_arguments(box: JmapBox) -> None:
    for name, arguments in [
        ("Mailbox/get", {"accountId": box.account, "bogus": 1}),
        ("Mailbox/get", {"accountId": 7}),
        ("Mailbox/get", {}),
        ("Email/get", {"accountId": box.account, "ids": "1"}),
        ("Email/get", {"accountId": box.account, "ids": [], "properties": ["nope"]}),
        ("Email/get", {"accountId": box.account, "ids": [], "properties": ["header:From:asNothing"]}),
        ("Email/get", {"accountId": box.account, "ids": [], "properties": ["header:Subject:asAddresses"]}),
        ("Email/query", {"accountId": box.account, "limit": -1}),
        ("Email/query", {"accountId": box.account, "filter": {"operator": "XOR", "conditions": []}}),
        ("Email/changes", {"accountId": box.account}),
        ("Email/changes", {"accountId": box.account, "sinceState": "0", "maxChanges": 0}),
        ("Email/get", {"accountId": box.account, "ids": [], "#ids": {"resultOf": "x", "name": "n", "path": "/"}}),
    ]:
        error = await box.error(name, arguments)
        assert error["type"] == "invalidArguments", (name, arguments, error)


async def test_invalid_result_references(box: JmapBox) -> None:
    query = ["Email/query", {"accountId": box.account}, "q"]
    for reference in [{"resultOf": "missing", "name": "Email/query", "path": "/ids"},
                      {"resultOf": "q", "name": "Email/get", "path": "/ids"},
                      {"resultOf": "q", "name": "Email/query", "path": "/nothing/here"},
                      {"resultOf": "q", "name": "Email/query", "path": "ids"},
                      {"resultOf": "q"}]:
        response = (await box.request([query, ["Email/get", {"accountId": box.account, "#ids": reference},
                                                "g"]])).json()["methodResponses"]
        assert response[0][0] == "Email/query"
        assert response[1] == ["error", response[1][1], "g"]
        assert response[1][1]["type"] == "invalidResultReference", reference


async def test_account_not_found_for_unknown_and_for_someone_elses_account(box: JmapBox) -> None:
    other = await make_box(box.services, box.http, "other@example.org")
    for account in ("999999", other.account, "abc"):
        error = await box.error("Mailbox/get", {"accountId": account})
        assert error["type"] == "accountNotFound", account


async def test_request_too_large(box: JmapBox) -> None:
    ids = [str(i) for i in range(1, 502)]
    assert (await box.error("Email/get", {"accountId": box.account, "ids": ids}))["type"] == "requestTooLarge"
    destroy = {"accountId": box.account, "destroy": ids}
    assert (await box.error("Email/set", destroy))["type"] == "requestTooLarge"


async def test_cannot_calculate_changes_state_mismatch_and_query_errors(box: JmapBox) -> None:
    for since in ("abc", "99999999", "-1"):
        error = await box.error("Email/changes", {"accountId": box.account, "sinceState": since})
        assert error["type"] == "cannotCalculateChanges", since
    mismatch = await box.error("Email/set", {"accountId": box.account, "ifInState": "12345", "update": {}})
    assert mismatch["type"] == "stateMismatch"
    assert (await box.error("Email/query", {"accountId": box.account, "anchor": "424242"}))["type"] == \
        "anchorNotFound"
    assert (await box.error("Email/query", {"accountId": box.account,
                                            "sort": [{"property": "preview"}]}))["type"] == "unsupportedSort"
    # RFC 8621 §4.4.2: a keyword sort names its keyword
    assert (await box.error("Email/query", {"accountId": box.account,
                                            "sort": [{"property": "hasKeyword"}]}))["type"] == "invalidArguments"
    assert (await box.error("Email/query", {"accountId": box.account, "sort": [
        {"property": "subject", "collation": "i;klingon"}]}))["type"] == "unsupportedSort"
    assert (await box.error("Email/query", {"accountId": box.account,
                                            "filter": {"nonsense": 1}}))["type"] == "unsupportedFilter"
    assert (await box.error("Email/query", {"accountId": box.account, "filter": {"threadCategory": "social"}}
                            ))["type"] == "unsupportedFilter"  # the vendor capability is not in 'using'
    assert (await box.error("Mailbox/queryChanges", {"accountId": box.account, "sinceQueryState": "1"}
                            ))["type"] == "cannotCalculateChanges"


async def test_too_many_changes(box: JmapBox) -> None:
    state = (await box.call("Email/query", {}))["queryState"]
    await box.ingest(*[make_message(message_id=f"m{i}@x", subject=f"Note {i}") for i in range(3)])
    error = await box.error("Email/queryChanges", {"accountId": box.account, "sinceQueryState": state,
                                                   "maxChanges": 2})
    assert error["type"] == "tooManyChanges"


async def test_a_failing_method_is_server_fail_and_the_next_call_still_runs(box: JmapBox) -> None:
    broken = MethodTable()

    @broken.method("Broken/get", MAIL)
    async def fail(call: Any) -> dict[str, Any]:
        raise RuntimeError("bug")

    original = routes.API
    routes.API = ApiProcessor(MethodRegistry([broken, core.table]))
    try:
        response = await box.request([["Broken/get", {}, "a"], ["Core/echo", {"still": "here"}, "b"]])
    finally:
        routes.API = original
    assert response.status_code == 200
    assert response.json()["methodResponses"][0][:1] == ["error"]
    assert response.json()["methodResponses"][0][1]["type"] == "serverFail"
    assert response.json()["methodResponses"][1] == ["Core/echo", {"still": "here"}, "b"]
