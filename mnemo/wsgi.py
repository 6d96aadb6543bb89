import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mnemo.settings")
application = get_wsgi_application()

if os.environ.get("MNEMO_WARM_UP") == "1":
    # Set by the launcher for the web processes: load the bundled embedding model and the
    # token counter now, so that the first /recall or /context does not wait ~2 s for them
    # (a remote embedder is left alone: nothing to load, and it may not be up yet).
    from django.conf import settings

    from core.providers import get_embedder, get_token_counter

    if settings.MNEMO_EMBEDDER == "local":
        get_embedder().embed(["warm-up"])
    get_token_counter().count("warm-up")
