"""kombu's filesystem transport with messages written atomically.

kombu writes a message by creating its file under the final name and then writing into it,
while a consumer moves and reads any file with that name, unlocked: under load a worker can
read a message before its bytes are there, fail to decode it and stop (seen under the scale
benchmark's single client, a few packs a second, each enqueuing its reinforcement). Here a
message is written under a name no consumer looks at and renamed into place, which is
atomic on one filesystem. Installed in place of kombu's "filesystem" alias by mnemo.celery,
so broker URLs stay the same."""

from __future__ import annotations

import os
import uuid
from time import monotonic

from kombu.exceptions import ChannelError
from kombu.transport import filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps


class Channel(filesystem.Channel):
    def _put(self, queue, payload, **kwargs):
        name = f"{int(round(monotonic() * 1000))}_{uuid.uuid4()}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        partial = os.path.join(self.data_folder_out, f".{name}.part")  # never "<queue>.msg"
        try:
            with open(partial, "wb") as f:
                f.write(str_to_bytes(dumps(payload)))
            os.replace(partial, final)
        except OSError as exc:
            raise ChannelError(f"Cannot add file {final!r} to directory") from exc


class Transport(filesystem.Transport):
    Channel = Channel


def install() -> None:
    from kombu.transport import TRANSPORT_ALIASES

    TRANSPORT_ALIASES["filesystem"] = "mnemo.broker:Transport"
