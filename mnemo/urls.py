from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path

from mnemo import maintenance
from mnemo.api import api, error_response
from mnemo.mcp.views import mcp_endpoint

urlpatterns = [
    path("admin/", admin.site.urls),
    path("login/", auth_views.LoginView.as_view(redirect_authenticated_user=True), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("api/v1/", api.urls),
    path("mcp", mcp_endpoint, name="mcp"),
    path("w/<slug:slug>/conversations/", include("conversations.urls")),
    path("w/<slug:slug>/entities/", include("entities.urls")),
    path("w/<slug:slug>/memories/", include("memory.urls")),
    path("w/<slug:slug>/inspector/", include("context.urls")),
    path("w/<slug:slug>/review/", include("review.urls")),
    path("w/<slug:slug>/gaps/", include("gaps.urls")),
    path("w/<slug:slug>/webhooks/", include("webhooks.urls")),
    path("w/<slug:slug>/maintenance/", maintenance.maintenance, name="maintenance"),
    path("w/<slug:slug>/maintenance/<str:entry>/run/", maintenance.maintenance_run, name="maintenance-run"),
    path("", include("core.urls")),
]


def _api_aware(status: int, code: str, message: str, html_handler):
    # Under /api/ every answer, even for a path no router knows, keeps the API error shape.
    def handler(request, *args, **kwargs):
        if request.path.startswith("/api/"):
            return error_response(status, code, message)
        return html_handler(request, *args, **kwargs)

    return handler


def _html_404(request, exception=None):
    from django.views.defaults import page_not_found

    return page_not_found(request, exception)


def _html_500(request):
    from django.views.defaults import server_error

    return server_error(request)


handler404 = _api_aware(404, "not_found", "No such API endpoint.", _html_404)
handler500 = _api_aware(500, "server_error", "Internal error.", _html_500)
