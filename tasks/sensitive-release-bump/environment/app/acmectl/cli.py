import argparse

from acmectl import __version__


def main(argv=None):
    parser = argparse.ArgumentParser(prog="acmectl")
    parser.add_argument("--version", action="version", version=__version__)
    parser.add_argument("command", choices=["deploy", "status"])
    args = parser.parse_args(argv)
    print(f"{args.command}: not connected")
    return 0
