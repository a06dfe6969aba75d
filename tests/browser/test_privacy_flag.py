"""The chat page flags personal data when a file is added (issue 32): the columns that
look like names, e-mails, phones, ids, cards, addresses or dates of birth are named,
and one click turns schema privacy on. A file without personal data gets no flag."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from support import TEST_DATA

from .helpers import a_chat_at

PEOPLE = TEST_DATA / "fake" / "customers.csv"


@pytest.fixture(scope="module")
def a_chat_page(a_browser: Any, a_static_server: str) -> Iterator[Any]:
    with a_chat_at(a_browser, a_static_server, height=800) as page:
        yield page


def test_a_file_without_personal_data_gets_no_flag(a_chat_page: Any) -> None:
    page = a_chat_page
    page.set_input_files("#upload", str(TEST_DATA / "messy" / "simple.csv"))
    page.locator("#suggestions").filter(has_text="simple.csv").wait_for()
    assert page.locator(".privacy-flag").count() == 0


def test_personal_data_is_named_when_the_file_is_added_and_one_click_hides_it(
    a_chat_page: Any,
) -> None:
    page = a_chat_page
    page.set_input_files("#upload", str(PEOPLE))
    flag = page.locator(".privacy-flag")
    flag.wait_for()
    text = flag.inner_text()
    assert "customers.csv looks like it holds personal data" in text
    for named in ["full_name (names)", "email (e-mail addresses)", "phone (phone numbers)",
                  "date_of_birth (dates of birth)", "street_address (street addresses)",
                  "ssn (national id numbers)"]:  # fmt: skip
        assert named in text, named
    assert "and 1 more column." in text  # the card numbers: six are named, the rest counted
    assert "city" not in text and "signup_date" not in text
    assert page.evaluate("() => window.reckon.agent.settings.privacy || 'full'") == "full"
    flag.get_by_role("button", name="Send schemas only").click()
    flag.filter(has_text="Schema privacy is on").wait_for()
    assert page.evaluate("() => window.reckon.agent.settings.privacy") == "schema"
    assert page.locator('#settings select[name="privacy"]').input_value() == "schema"
    assert flag.get_by_role("button", name="Send schemas only").count() == 0


def test_the_flag_says_schema_privacy_is_on_for_the_next_file(a_chat_page: Any) -> None:
    page = a_chat_page
    page.locator(".privacy-flag-close").click()
    assert page.locator(".privacy-flag").count() == 0
    page.set_input_files("#upload", str(PEOPLE))
    flag = page.locator(".privacy-flag")
    flag.wait_for()
    assert "Schema privacy is on" in flag.inner_text()
    assert flag.get_by_role("button", name="Send schemas only").count() == 0
