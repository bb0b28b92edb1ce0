"""Minimal dotenv-style loader used by the billing service."""


def parse_env(text):
    """Parse KEY=VALUE lines into a dict."""
    values = {}
    for line in text.splitlines():
        if not line:
            continue
        key, value = line.split("=")
        values[key] = value
    return values


def load_env(path):
    with open(path) as fh:
        return parse_env(fh.read())
