"""Where the model lives and how long new mail may wait for it; set on the admin page."""

from __future__ import annotations

import base64
from dataclasses import dataclass
from urllib.parse import urlsplit

from plmail.db.repos.settings import SettingsRepository
from plmail.domain.errors import CredentialError, ValidationError
from plmail.keys import CredentialBox

KEY = "assistant"
HOLD_DEFAULT = 60
HOLD_MIN, HOLD_MAX = 2, 300
MODEL_KINDS = ("openai", "ollama")


@dataclass(frozen=True, slots=True)
class ModelHost:
    kind: str  # "openai" (any chat-completions endpoint) or "ollama"
    url: str
    model: str
    has_key: bool


@dataclass(frozen=True, slots=True)
class AssistantSettings:
    host: ModelHost | None = None
    hold_enabled: bool = True
    hold_max_seconds: int = HOLD_DEFAULT
    timeout_seconds: float = 30.0

    @property
    def classifying(self) -> bool:
        return self.host is not None

    @property
    def holding(self) -> bool:
        """Without a model there is no verdict to wait for, so nothing is held."""
        return self.classifying and self.hold_enabled


def origin_of(url: str) -> str:
    """scheme://host[:port], the unit a key is bound to (a path change stays with the same server)."""
    parts = urlsplit(url.strip())
    return f"{parts.scheme.lower()}://{parts.netloc.lower()}"


KEY_FOR_OTHER_ORIGIN = "The URL points to another server now: enter its API key again."


class AssistantSettingsStore:
    """The stored API key is sent only to the origin it was saved for: a connection test against a typed URL,
    or a changed URL, never carries it elsewhere."""

    def __init__(self, repo: SettingsRepository, box: CredentialBox) -> None:
        self.repo = repo
        self.box = box

    async def load(self) -> AssistantSettings:
        raw = await self.repo.get(KEY)
        host = None
        if raw.get("url") and raw.get("model") and raw.get("kind") in MODEL_KINDS:
            host = ModelHost(str(raw["kind"]), str(raw["url"]), str(raw["model"]), bool(raw.get("api_key")))
        seconds = raw.get("hold_max_seconds", HOLD_DEFAULT)
        return AssistantSettings(
            host=host,
            hold_enabled=bool(raw.get("hold_enabled", True)),
            hold_max_seconds=min(max(int(seconds) if isinstance(seconds, int) else HOLD_DEFAULT, HOLD_MIN), HOLD_MAX),
            timeout_seconds=float(raw.get("timeout_seconds", 30.0)),
        )

    async def api_key(self, for_url: str | None = None) -> str | None:
        """The stored key, when `for_url` (default: the saved URL) has the origin the key was saved for."""
        raw = await self.repo.get(KEY)
        sealed = raw.get("api_key")
        if not sealed:
            return None
        try:
            opened = self.box.open(base64.b64decode(str(sealed)))
        except (CredentialError, ValueError):
            return None
        # A key saved before keys were bound to origins belongs to the URL it was saved with.
        bound = str(opened.get("origin") or origin_of(str(raw.get("url", ""))))
        target = for_url if for_url is not None else str(raw.get("url", ""))
        if not target or origin_of(target) != bound:
            return None
        return str(opened.get("key") or "") or None

    async def save(self, *, kind: str, url: str, model: str, api_key: str | None, hold_enabled: bool,
                   hold_max_seconds: int, timeout_seconds: float = 30.0) -> None:
        """Save the settings; an empty URL switches the assistant off. A blank key keeps the stored one."""
        current = await self.repo.get(KEY)
        value: dict[str, object] = {"hold_enabled": hold_enabled, "timeout_seconds": timeout_seconds}
        if not HOLD_MIN <= hold_max_seconds <= HOLD_MAX:
            raise ValidationError(f"Hold mail between {HOLD_MIN} and {HOLD_MAX} seconds.")
        value["hold_max_seconds"] = hold_max_seconds
        if not 1 <= timeout_seconds <= 300:
            raise ValidationError("Give the model between 1 and 300 seconds to answer.")
        if url.strip():
            if kind not in MODEL_KINDS:
                raise ValidationError("Choose an OpenAI-compatible or an Ollama endpoint.")
            parts = urlsplit(url.strip())
            if parts.scheme not in ("http", "https") or not parts.netloc:
                raise ValidationError("The model URL must start with http:// or https://.")
            if not model.strip():
                raise ValidationError("Name the model to use.")
            value.update(kind=kind, url=url.strip().rstrip("/"), model=model.strip())
            if api_key:
                sealed = self.box.seal({"key": api_key, "origin": origin_of(url)})
                value["api_key"] = base64.b64encode(sealed).decode()
            elif current.get("api_key"):
                if await self.api_key(for_url=url) is None:
                    raise ValidationError(KEY_FOR_OTHER_ORIGIN)
                value["api_key"] = current["api_key"]
        await self.repo.put(KEY, value)
