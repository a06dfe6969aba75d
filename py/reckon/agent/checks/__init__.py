"""Checking answers: numbers traced to the steps that printed them, the method in plain
words, answers sent back once (rechecks), date questions put right, the second
route."""
