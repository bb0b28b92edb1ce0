from pathlib import Path

from envcfg import load_env, parse_env

FIXTURE = Path(__file__).parent / "fixtures" / "sample.env"


def test_simple_pair():
    assert parse_env("A=1") == {"A": "1"}


def test_comments_and_blank_lines_are_ignored():
    assert parse_env("# comment\n\nA=1\n   \n") == {"A": "1"}


def test_value_may_contain_equals():
    assert parse_env("URL=http://x/?a=1&b=2") == {"URL": "http://x/?a=1&b=2"}


def test_quotes_are_stripped():
    assert parse_env("A=\"two words\"\nB='single'") == {"A": "two words", "B": "single"}


def test_export_prefix_and_spaces():
    assert parse_env("export  A = 1 ") == {"A": "1"}


def test_fixture_file():
    assert load_env(FIXTURE) == {
        "APP_NAME": "billing",
        "LOG_LEVEL": "debug",
        "DATABASE_URL": "postgres://user:pa55@localhost:5432/app?sslmode=disable",
        "GREETING": "hello world",
        "WORKERS": "4",
    }
