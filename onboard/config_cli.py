"""``aerie config``: check a configuration file and print it resolved, or print the reference.

An entry point on top of `onboard.config` (loading) and `onboard.config_reference`
(the Markdown reference), which itself reads the config's dataclasses.
"""

from __future__ import annotations

import argparse
import sys

from common.typed_config import ConfigError
from onboard.config import dump_config, load_config
from onboard.config_reference import reference_markdown


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="aerie config", description="Check or print a configuration file")
    parser.add_argument("--config", default=None, help="config file (default: the shipped config.yaml)")
    parser.add_argument("--reference", action="store_true", help="print the configuration reference (Markdown)")
    args = parser.parse_args(argv)
    if args.reference:
        sys.stdout.write(reference_markdown())
        return 0
    try:
        cfg = load_config(args.config)
    except ConfigError as exc:
        print(f"aerie config: {exc}", file=sys.stderr)
        return 1
    sys.stdout.write(dump_config(cfg))
    return 0
