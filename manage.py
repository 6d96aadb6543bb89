#!/usr/bin/env python
"""Django's command-line utility. Without DATABASE_URL it finds the embedded PostgreSQL
under var/pg (the one `make run` started), or starts it for the command's duration."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "mnemo.settings")
    if not os.environ.get("DATABASE_URL"):
        from mnemo.launcher import embedded_database_for_command

        embedded_database_for_command()
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
