"""Columns that look like personal data, named in an upload's description (inspect's
``personal``): judged on real uploads from public projects, which must not be flagged
wrongly, and on a realistic people file with fake data, which must be."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from reckon.kernel import inspect
from reckon.kernel._personal import KINDS, personal_columns
from support import TEST_DATA

REAL = sorted(
    [*(TEST_DATA / "csv-spectrum" / "csvs").glob("*.csv"), *(TEST_DATA / "messy").iterdir()]
)
REAL = [p for p in REAL if p.name != "LICENSE"]
# What the real uploads hold, read value by value: each of these columns does hold
# that kind (211.csv is a directory of services with their staff's names, phones,
# e-mails and street addresses; the .ods files list people's first names; the
# Chinese file's 景點服務電話 is "the sight's service phone", +886 numbers).
DIRECTORY = {
    **dict.fromkeys(["MailingAddress1", "PhysicalAddress1", "OtherAddress1"], "address"),
    **dict.fromkeys(["Phone1Number", "Phone2Number", "Phone3Number", "Phone4Number",
                     "Phone5Number", "PhoneFax", "PhoneTollFree", "PhoneNumberBusinessLine",
                     "PhoneNumberOutOfArea", "PhoneNumberAfterHours",
                     "SeniorWorkerPhoneNumber", "MainContactPhoneNumber"], "phone"),
    **dict.fromkeys(["EmailAddressMain", "SeniorWorkerEmailAddress",
                     "MainContactEmailAddress"], "email"),
    **dict.fromkeys(["SeniorWorkerName", "MainContactName"], "name"),
}  # fmt: skip
FLAGGED = {
    "comma_in_quotes.csv": {"first": "name", "last": "name", "address": "address"},
    "211.csv": DIRECTORY,
    "blank_line.ods": {"Name": "name"},
    "loffice-4.4.1.2.ods": {"Name": "name"},
    "simple.ods": {"Name": "name"},
    "characters.csv": {"景點服務電話": "phone"},
}
PEOPLE = TEST_DATA / "fake" / "customers.csv"


def flagged(path: Path) -> dict[str, str]:
    info = inspect(str(path))
    if info["status"] != "ok" or info["kind"] != "table":
        assert "personal" not in info
        return {}
    return {entry["column"]: entry["kind"] for entry in info["personal"]}


@pytest.mark.parametrize("path", REAL, ids=lambda p: p.name)
def test_real_uploads_are_flagged_only_where_they_hold_personal_data(path: Path) -> None:
    columns = flagged(path)
    assert columns == FLAGGED.get(path.name, {})
    # Every flagged column is one of the table's own (the page names them).
    if columns:
        names = {c["name"] for c in inspect(str(path))["columns"]}
        assert set(columns) <= names or path.name == "211.csv"  # 96 columns, 50 listed


def test_a_people_file_is_flagged_column_by_column() -> None:
    assert flagged(PEOPLE) == {
        "full_name": "name",
        "email": "email",
        "phone": "phone",
        "date_of_birth": "birth_date",
        "street_address": "address",
        "ssn": "national_id",
        "card_number": "card",
    }  # and not customer_id, city, signup_date, plan or monthly_spend


def test_the_same_people_in_a_workbook_and_as_json_are_flagged(tmp_path: Path) -> None:
    frame = pd.read_csv(PEOPLE)
    frame.to_excel(tmp_path / "people.xlsx", index=False)
    frame.to_json(tmp_path / "people.json", orient="records")
    expected = flagged(PEOPLE)
    assert flagged(tmp_path / "people.xlsx") == expected
    assert flagged(tmp_path / "people.json") == expected


def column(name: str, values: list[Any]) -> list[dict[str, str]]:
    return personal_columns(pd.DataFrame({name: values}))


@pytest.mark.parametrize(
    ("name", "values", "kind"),
    [
        pytest.param("contact", ["ann@example.org", "b.lee@mail.example.com"], "email",
                     id="e-mails-whatever-the-column-is-called"),
        pytest.param("pan", ["4111 1111 1111 1111", "5500-0055-5555-5559", "378282246310005"],
                     "card", id="cards-that-pass-luhn"),
        pytest.param("ref", ["555-01-2345", "078-05-1120", "219-09-9999"], "national_id",
                     id="us-social-security-numbers"),
        pytest.param("who", ["AB 12 34 56 C", "JG103759A"], "national_id", id="uk-ni-numbers"),
        pytest.param("Passport No", ["X1234567", "K7654321", "P0001234"], "national_id",
                     id="ids-in-a-column-named-for-them"),
        pytest.param("x", ["+44 20 7946 0958", "(202) 767-0450", "020 7946 0321"], "phone",
                     id="phones-as-written"),
        pytest.param("mobile", ["07700900123", "07700900456"], "phone",
                     id="bare-digits-in-a-phone-column"),
        pytest.param("DOB", ["1984-03-02", "02/11/1979", "12 March 1990"], "birth_date",
                     id="dates-in-a-birth-column"),
        pytest.param("Geburtsdatum", pd.to_datetime(["1984-03-02", "1979-11-02"]).tolist(),
                     "birth_date", id="datetimes-in-a-birth-column"),
        pytest.param("where", ["12 Elm Street", "Hauptstraße 5", "3 Rue des Lilas"], "address",
                     id="street-addresses"),
        pytest.param("Surname", ["Okafor", "van Dijk", "O'Neill", "Lindqvist"], "name",
                     id="surnames"),
        pytest.param("customer name", ["Ann Lee", "Bob Quist", "Carla Mendez"], "name",
                     id="a-person-and-name"),
    ],
)  # fmt: skip
def test_each_kind(name: str, values: list[Any], kind: str) -> None:
    assert kind in KINDS
    assert column(name, values) == [{"column": name, "kind": kind}]


@pytest.mark.parametrize(
    ("name", "values"),
    [
        pytest.param("email", ["SKU-1", "SKU-2", "SKU-3"], id="an-email-column-of-codes"),
        pytest.param("card", ["4111 1111 1111 1112", "1234 5678 9012 3456"],
                     id="sixteen-digits-failing-luhn"),
        pytest.param("customer_id", ["C-100231", "C-100232", "C-100233"], id="customer-ids"),
        pytest.param("date", ["1984-03-02", "1979-11-02"], id="dates-not-of-birth"),
        pytest.param("x", ["2011-01-01", "2012-06-22 00:00:00"], id="dates-are-no-phones"),
        pytest.param("lat", [38.908569, -77.017972, 51.5072], id="coordinates"),
        pytest.param("amount", ["6,000,000", "1,234,567"], id="big-numbers"),
        pytest.param("zip", ["20009-1234", "20032-0001"], id="zip-codes"),
        pytest.param("name", ["Main Number", "Intake Number", "Main Number", "Intake Number",
                              "Main Number", "Fax Number"], id="labels-that-repeat"),
        pytest.param("PublicName", ["Centronia Community Center", "Family Support Center"],
                     id="names-of-places"),
        pytest.param("city", ["Paris", "Lyon", "New York"], id="cities"),
        pytest.param("product name", ["Blue Widget 3000", "Red Widget 2000"], id="products"),
        pytest.param("hours", ["7:00 am - 6:00 pm, Monday - Friday"], id="opening-hours"),
    ],
)  # fmt: skip
def test_what_is_not_personal_data(name: str, values: list[Any]) -> None:
    assert column(name, values) == []
