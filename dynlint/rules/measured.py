"""What each rule's findings were on real code: written by `python bench/zoo/score.py --write docs/accuracy.md`
from the zoo (bench/zoo/), read by `dynlint rules` and by the choice of preview rules. Data only."""

MEASURED: dict = {}
