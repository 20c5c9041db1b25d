#!/usr/bin/env python
"""Django's command-line utility for Redoubt."""

import os
import sys


def main():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from config.startup import run_or_explain
    from django.core.management import execute_from_command_line

    run_or_explain(lambda: execute_from_command_line(sys.argv))


if __name__ == "__main__":
    main()
