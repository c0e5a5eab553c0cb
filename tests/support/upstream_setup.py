"""What the JMAP upstream's command line does to set up a test's user, in one Python instead of one per command:
`user add`, `app-password create`, `import-mbox` for each mbox, and `account add-imap`, through the same services
those commands use (`plmail.cli.runtime.with_services`). Four command lines started four Pythons that import all of
plmail: 12-16 s of each JMAP test's setup on a busy machine.

Run as `python -m tests.support.upstream_setup` with the upstream's environment; reads one JSON request on stdin,
prints one JSON answer. Setting up in the test's own process is not an option: the database engine is global.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from plmail.config import Settings
from plmail.domain.account_services import MailServerAccountInput
from plmail.providers.imap.accounts import ImapAccountService
from plmail.services import Services


async def _set_up(services: Services, request: dict[str, Any]) -> dict[str, Any]:
    answer: dict[str, Any] = {}
    email = request["email"]
    if request.get("create"):
        await services.users.create_user(email, request["password"])
        answer["token"] = (await services.app_passwords.create_for_email(email, request["device"])).token
    user = await services.users.by_email(email)
    imported = []
    for label, path in request.get("mboxes", []):
        report = await services.archive_importer.import_path(user, Path(path), label_name=label)
        imported.append(report.imported)
    answer["imported"] = imported
    imap = request.get("imap")
    if imap:
        answer["account_id"] = await services.providers.get(ImapAccountService).add(
            user.id, MailServerAccountInput(**imap), operator=True)
    return answer


def main() -> None:
    from plmail.cli.runtime import with_services

    request = json.loads(sys.stdin.read())
    print(json.dumps(with_services(Settings.from_env(), lambda services: _set_up(services, request))))


if __name__ == "__main__":
    main()
