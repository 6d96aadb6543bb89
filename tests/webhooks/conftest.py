from __future__ import annotations

import pytest

from core.services import SYSTEM
from webhooks import services


@pytest.fixture
def make_endpoint(workspace):
    def make(url="http://127.0.0.1:9/hook", events=("*",), workspace_=None, active=True, description=""):
        return services.webhook_create(workspace=workspace_ or workspace, url=url, events=list(events), actor=SYSTEM,
                                       active=active, description=description)

    return make
