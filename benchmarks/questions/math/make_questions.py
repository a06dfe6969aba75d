"""Writes questions.jsonl: 20 grade-school word problems with no files, written for this
project in the style of GSM8K (several steps of arithmetic, one number as the answer).
Each answer is computed here, by the formula beside its problem, never typed.

    .venv/bin/python benchmarks/questions/math/make_questions.py

The check takes the answer's last number, as GSM8K's own scoring does.
"""

from __future__ import annotations

import json
from fractions import Fraction
from pathlib import Path

PROBLEMS: list[tuple[str, str, Fraction | int]] = [
    (
        "bakery",
        "A bakery bakes 14 trays of muffins with 12 muffins on each tray. It sells "
        "three quarters of the muffins in the morning and 19 more in the afternoon. How many "
        "muffins are left at the end of the day?",
        14 * 12 - Fraction(3, 4) * 14 * 12 - 19,
    ),
    (
        "garden",
        "Maya plants 6 rows of tulips with 15 tulips in each row. A third of the "
        "tulips are red, and half of the rest are yellow; the others are white. How many white "
        "tulips are there?",
        (6 * 15 - Fraction(6 * 15, 3)) / 2,
    ),
    (
        "bus",
        "A bus starts with 38 passengers. At the first stop 11 get off and 7 get on. At "
        "the second stop half of the passengers get off and 13 get on. How many passengers are "
        "on the bus now?",
        Fraction(38 - 11 + 7, 2) + 13,
    ),
    (
        "savings",
        "Leo earns $12 an hour and works 3 hours every Saturday and 2 hours every "
        "Sunday. He saves two thirds of what he earns. How much does he save in 6 weeks, in "
        "dollars?",
        Fraction(2, 3) * 12 * (3 + 2) * 6,
    ),
    (
        "paint",
        "One can of paint covers 35 square meters. A fence is 84 meters long and 2 "
        "meters high, and both sides must be painted twice. How many cans are needed, if only "
        "whole cans can be bought?",
        -(-(84 * 2 * 2 * 2) // 35),
    ),
    (
        "books",
        "A library has 1,250 books. It lends out 18% of them, and 40 of the lent books "
        "come back. How many books are in the library now?",
        1250 - Fraction(18, 100) * 1250 + 40,
    ),
    (
        "train",
        "A train travels at 72 km per hour for 2 hours and 15 minutes, then at 60 km "
        "per hour for 45 minutes. How many kilometers does it travel in all?",
        72 * Fraction(9, 4) + 60 * Fraction(3, 4),
    ),
    (
        "pizza",
        "Eight friends order 5 pizzas cut into 8 slices each. Each friend eats 4 "
        "slices, and the rest are shared equally by 2 neighbors. How many slices does each "
        "neighbor get?",
        Fraction(5 * 8 - 8 * 4, 2),
    ),
    (
        "shop",
        "A shirt costs $24 and a pair of trousers costs $15 more than the shirt. Tom "
        "buys 3 shirts and 2 pairs of trousers and pays with two $100 notes. How much change "
        "does he get, in dollars?",
        200 - (3 * 24 + 2 * (24 + 15)),
    ),
    (
        "eggs",
        "A farm's 45 hens lay 5 eggs each per week. The farm sells eggs in boxes of 6 "
        "for $3 a box. How many dollars does it make in 4 weeks, selling only full boxes?",
        (45 * 5 * 4 // 6) * 3,
    ),
    (
        "ages",
        "Anna is 4 years older than twice her brother's age. Her brother is 9. Their "
        "mother is 3 times as old as Anna was 5 years ago. How old is their mother?",
        3 * ((2 * 9 + 4) - 5),
    ),
    (
        "water",
        "A tank holds 480 liters. It is 25% full. A pump adds 18 liters a minute. How "
        "many minutes until the tank is full?",
        Fraction(480 - Fraction(1, 4) * 480, 18),
    ),
    (
        "school",
        "A school has 620 students. 45% are girls. Of the boys, 1 in 11 plays in the "
        "band. How many boys play in the band?",
        (620 - Fraction(45, 100) * 620) / 11,
    ),
    (
        "cookies",
        "Sam bakes 3 batches of 28 cookies. He gives 15 to his teacher, puts the "
        "rest into bags of 9, and eats the cookies that do not fill a bag. How many cookies "
        "does he eat?",
        (3 * 28 - 15) % 9,
    ),
    (
        "marathon",
        "A runner runs 5 km on Monday and each day after runs 2 km more than the "
        "day before. How many km does she run from Monday to Sunday in all?",
        sum(5 + 2 * d for d in range(7)),
    ),
    (
        "rent",
        "Four roommates split a rent of $2,390 a month. One of them has the big room "
        "and pays $150 more than each of the other three, who pay the same. How many dollars "
        "does the big room cost a month?",
        Fraction(2390 - 150, 4) + 150,
    ),
    (
        "stamps",
        "Jo has 3 times as many stamps as Kim. Kim has 14 fewer than Lee, who has "
        "50. After Jo gives Kim 20 stamps, how many stamps does Jo have?",
        3 * (50 - 14) - 20,
    ),
    (
        "orchard",
        "An orchard has 17 rows of 23 apple trees. Each tree gives 120 apples. 8% "
        "of the apples are bruised and thrown away; the rest are packed 40 to a crate. How "
        "many crates are filled?",
        (17 * 23 * 120 * Fraction(92, 100)) // 40,
    ),
    (
        "clock",
        "A clock gains 3 minutes every 2 hours. It is set right at 6:00 in the "
        "morning. How many minutes fast is it at 8:00 in the evening of the next day?",
        Fraction(3, 2) * (24 + 14),
    ),
    (
        "tickets",
        "A concert sells 340 adult tickets at $45 and 3 times as many child tickets "
        "at $18. The hall's rent is $9,500. What is the profit in dollars?",
        340 * 45 + 3 * 340 * 18 - 9500,
    ),
]


def main() -> None:
    lines = []
    for key, question, answer in PROBLEMS:
        value = Fraction(answer)
        if value.denominator != 1:
            raise SystemExit(f"{key}: the answer {value} is not a whole number")
        check = f"bool(numbers) and close(numbers[-1], {int(value)})"
        lines.append({"id": f"math-{key}", "question": question, "check": check})
    out = Path(__file__).with_name("questions.jsonl")
    out.write_text("".join(json.dumps(q, ensure_ascii=False) + "\n" for q in lines))
    print(f"{len(lines)} questions -> {out}")


if __name__ == "__main__":
    main()
