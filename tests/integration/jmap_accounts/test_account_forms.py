"""The JMAP plugin's add-account form, offered through the provider registry (domain/account_forms.py) and shown
by pages and a command that name no provider: the accounts page links it, the form adds the account or says what
to change, and `plmail account add --kind jmap` asks for the same fields."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import httpx

from plmail.config import Settings
from plmail.services import Services
from tests.integration.jmap_accounts.conftest import UpstreamServer, make_upstream_user
from tests.support.web import post_form, sign_up_admin


async def test_the_accounts_page_offers_the_jmap_form_and_it_adds_the_account(
    client: httpx.AsyncClient, services: Services, upstream_server: UpstreamServer, tmp_path: Path,
) -> None:
    up = make_upstream_user(upstream_server, tmp_path, inbox=1, projects=0)
    await sign_up_admin(client)
    page = await client.get("/accounts/")
    assert 'href="/accounts/new/jmap"' in page.text and "Add a JMAP account" in page.text
    form = await client.get("/accounts/new/jmap")
    assert form.status_code == 200
    for name in ("email", "secret", "server", "username", "bearer", "name"):
        assert f'name="{name}"' in form.text
    assert (await client.get("/accounts/new/nosuchkind")).status_code == 404

    data = {"email": up.email, "secret": "wrong", "server": up.url, "name": "Upstream"}
    refused = await post_form(client, "/accounts/new/jmap", data, token_from="/accounts/new/jmap")
    assert refused.status_code == 400
    assert "The JMAP server refused this app password or token." in refused.text
    assert f'value="{up.email}"' in refused.text and 'value="wrong"' not in refused.text  # the secret is typed again
    added = await post_form(client, "/accounts/new/jmap", {**data, "secret": up.token},
                            token_from="/accounts/new/jmap")
    match = re.search(r"/accounts/(\d+)$", str(added.url))
    assert added.status_code == 200 and match, added.url
    row = await services.db.fetchrow("SELECT provider_kind, name FROM account WHERE id = $1", int(match.group(1)))
    assert row is not None and (row["provider_kind"], row["name"]) == ("jmap", "Upstream")


async def test_the_command_line_asks_for_the_same_fields(
    services: Services, settings: Settings, database_url: str, upstream_server: UpstreamServer, tmp_path: Path,
) -> None:
    up = make_upstream_user(upstream_server, tmp_path, inbox=0, projects=0)
    await services.users.create_user("owner@example.com", "correct horse battery")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PLMAIL_")}
    env.update(PLMAIL_DATA_DIR=str(settings.data_dir), PLMAIL_DATABASE_URL=database_url,
               PLMAIL_TEST_FETCH_ALLOW="127.0.0.0/8")

    def plmail(*args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "plmail.cli", "account", "add", *args], env=env, input=stdin,
                              capture_output=True, text=True, timeout=120, check=False)

    listed = plmail("--kind", "jmap", "--user", "owner@example.com", "--field", "list")
    assert listed.returncode == 0 and "secret\tpassword (required)" in listed.stdout
    given_secret = plmail("--kind", "jmap", "--user", "owner@example.com", "--field", f"secret={up.token}")
    assert given_secret.returncode != 0 and "standard input" in given_secret.stderr
    added = plmail("--kind", "jmap", "--user", "owner@example.com", "--field", f"email={up.email}",
                   "--field", f"server={up.url}", stdin=f"{up.token}\n")
    assert added.returncode == 0, added.stderr
    assert await services.db.fetchval("SELECT count(*) FROM account WHERE provider_kind = 'jmap'") == 1
