"""The Litestar application: pages, health, and (in `plmail serve`) the job workers."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from litestar import Litestar, Request
from litestar.config.csrf import CSRFConfig
from litestar.exceptions import HTTPException, NotFoundException, PermissionDeniedException
from litestar.middleware.base import DefineMiddleware
from litestar.middleware.session.client_side import CookieBackendConfig
from litestar.plugins.htmx import HTMXPlugin
from litestar.plugins.jinja import JinjaTemplateEngine
from litestar.plugins.prometheus import PrometheusConfig
from litestar.response import Response, Template
from litestar.static_files import create_static_files_router
from litestar.status_codes import HTTP_413_REQUEST_ENTITY_TOO_LARGE
from litestar.template.config import TemplateConfig

from plmail.config import Settings
from plmail.dav.server import DAV_ROUTES
from plmail.domain.enums import QueueName
from plmail.domain.errors import NotFoundError, ValidationError
from plmail.jmap.routes import JMAP_ROUTES
from plmail.jobs.catalog import JobCatalog, default_catalog
from plmail.jobs.workers import WorkerSupervisor
from plmail.keys import InstallationKeys
from plmail.ops.metrics import HTTP_PREFIX
from plmail.services import Services, open_services
from plmail.web.auth import FLOW_COOKIE, RequireSignIn
from plmail.web.controllers.account_forms import AccountFormController
from plmail.web.controllers.accounts import AccountController
from plmail.web.controllers.actions import ActionController
from plmail.web.controllers.admin import AdminController
from plmail.web.controllers.app_shell import AppShellController
from plmail.web.controllers.assistant_admin import AssistantAdminController
from plmail.web.controllers.auth import AuthController
from plmail.web.controllers.calendar import CalendarController
from plmail.web.controllers.compose import COMPOSE_TOO_LARGE, COMPOSE_TOO_LARGE_TITLE, ComposeController
from plmail.web.controllers.devices import DevicesController
from plmail.web.controllers.health import healthz
from plmail.web.controllers.identity_confirm import IdentityConfirmController
from plmail.web.controllers.labels import LabelController
from plmail.web.controllers.live import mail_events
from plmail.web.controllers.mail import MailController
from plmail.web.controllers.metrics import metrics
from plmail.web.controllers.notifications import NotificationsController, notification_action
from plmail.web.controllers.oauth import OAuthAdminController, OAuthController
from plmail.web.controllers.provider_push import provider_push
from plmail.web.controllers.rules import RuleController
from plmail.web.controllers.sending_settings import SendingSettingsController
from plmail.web.controllers.sessions import SessionsController
from plmail.web.controllers.settings import SettingsController
from plmail.web.controllers.styleguide import StyleguideController
from plmail.web.controllers.two_factor import TwoFactorController
from plmail.web.pages import configure_jinja, locale_for
from plmail.web.proxy import TrustedProxies
from plmail.web.security import OriginCheck, SecurityHeaders, StyleNonce

log = logging.getLogger(__name__)

PACKAGE_DIR = Path(__file__).parent
FLOW_MAX_AGE = 3600  # the OAuth round trip and a sign-in waiting for its code; sessions live on the server
# /push/action: a notification's button, posted by the service worker with the notification's signed token.
_CSRF_EXEMPT = ["^/healthz", "^/metrics", "^/jmap", "^/.well-known/", "^/provider-push/", "^/push/action$"]


def _error_page(request: Request[Any, Any, Any], status: int, title: str, message: str) -> Response[Any]:
    if request.url.path.startswith(("/healthz", "/metrics", "/jmap", "/.well-known", "/provider-push/")):
        return Response({"status": status, "detail": message}, status_code=status)
    return Template(
        template_name="error.html",
        context={"user": request.scope.get("user"), "locale": locale_for(request).value, "title": title,
                 "message": message, "status": status},
        status_code=status,
    )


def _not_found(request: Request[Any, Any, Any], _: Exception) -> Response[Any]:
    return _error_page(request, 404, "Not found", "This page does not exist, or it belongs to someone else.")


def _forbidden(request: Request[Any, Any, Any], exc: PermissionDeniedException) -> Response[Any]:
    return _error_page(request, 403, "Not allowed", exc.detail or "Only administrators can open this page.")


def _invalid(request: Request[Any, Any, Any], exc: ValidationError) -> Response[Any]:
    return _error_page(request, 400, "Something went wrong", str(exc))


def _http_error(request: Request[Any, Any, Any], exc: HTTPException) -> Response[Any]:
    if exc.status_code == HTTP_413_REQUEST_ENTITY_TOO_LARGE and request.url.path.startswith("/compose"):
        # Read before the composer sees the form (the CSRF check reads it), so the page says it here.
        return _error_page(request, exc.status_code, COMPOSE_TOO_LARGE_TITLE, COMPOSE_TOO_LARGE)
    return _error_page(request, exc.status_code, "Something went wrong", exc.detail)


def create_app(
    settings: Settings,
    dsn: str,
    *,
    worker_queues: Sequence[QueueName] = tuple(QueueName),
    catalog: JobCatalog | None = None,
    services: Services | None = None,
) -> Litestar:
    """Build the app. With `worker_queues` empty the process serves pages only (a web-only node).

    Given `services`, the app uses them and leaves closing them to the caller.
    """
    keys = services.keys if services is not None else InstallationKeys.load(settings.secret_key_path)
    job_catalog = catalog or default_catalog()

    @asynccontextmanager
    async def lifespan(app: Litestar) -> AsyncIterator[None]:
        owned = services is None
        active = services if services is not None else await open_services(settings, dsn, keys=keys)
        app.state.services = active
        supervisor: WorkerSupervisor | None = None
        if worker_queues:
            supervisor = WorkerSupervisor(
                active, job_catalog, worker_queues, grace_seconds=settings.shutdown_grace_seconds
            )
            supervisor.start()
            app.state.supervisor = supervisor
        if QueueName.INGEST in worker_queues:
            active.start_watchers()  # IMAP IDLE lives with the workers that sync
        log.info("plmail ready (workers: %s)", ", ".join(q.value for q in worker_queues) or "none")
        try:
            yield
        finally:
            await active.stop_watchers()
            if supervisor is not None:
                await supervisor.stop()
            if owned:
                await active.close()

    flow = CookieBackendConfig(
        secret=keys.session_cookie,
        key=FLOW_COOKIE,
        max_age=FLOW_MAX_AGE,
        secure=settings.secure_cookies,
        httponly=True,
        samesite="lax",
        exclude=["^/static/", "^/healthz", "^/metrics", "^/jmap", "^/.well-known/", "^/provider-push/"],
    )
    csrf = CSRFConfig(
        secret=keys.csrf_secret,
        cookie_name="plmail_csrf",
        cookie_secure=settings.secure_cookies,
        cookie_samesite="strict",
        exclude=_CSRF_EXEMPT,
    )
    # With metrics off there is neither the route nor the timing of every request.
    observed = bool(settings.metrics_token)
    timing = PrometheusConfig(app_name="plmail", prefix=HTTP_PREFIX, group_path=True,
                              exclude=["^/static/", "^/metrics"])
    templates = TemplateConfig(
        directory=PACKAGE_DIR / "templates", engine=JinjaTemplateEngine, engine_callback=configure_jinja
    )
    return Litestar(
        route_handlers=[
            AuthController,
            MailController,
            ComposeController,
            ActionController,
            LabelController,
            RuleController,
            SettingsController,
            SendingSettingsController,
            AccountController,
            AccountFormController,
            OAuthController,
            DevicesController,
            SessionsController,
            TwoFactorController,
            IdentityConfirmController,
            *JMAP_ROUTES,
            *DAV_ROUTES,
            CalendarController,
            AdminController,
            AssistantAdminController,
            OAuthAdminController,
            StyleguideController,
            AppShellController,
            NotificationsController,
            notification_action,
            mail_events,
            healthz,
            provider_push,
            *([metrics] if observed else []),
            create_static_files_router(path="/static", directories=[PACKAGE_DIR / "static"], send_as_attachment=False),
        ],
        middleware=[
            DefineMiddleware(TrustedProxies, networks=settings.trusted_proxies),
            DefineMiddleware(OriginCheck),
            DefineMiddleware(StyleNonce),
            *([timing.middleware] if observed else []),
            flow.middleware,
            RequireSignIn(),
        ],
        before_send=[SecurityHeaders(always_secure=settings.secure_cookies)],
        csrf_config=csrf,
        template_config=templates,
        plugins=[HTMXPlugin()],
        lifespan=[lifespan],
        # No API explorer: its pages load their scripts from a CDN, which the CSP (rightly) refuses.
        openapi_config=None,
        logging_config=None,  # the command line configured logging; keep one format
        exception_handlers={
            NotFoundException: _not_found,
            NotFoundError: _not_found,
            ValidationError: _invalid,
            PermissionDeniedException: _forbidden,
            HTTPException: _http_error,
        },
    )
