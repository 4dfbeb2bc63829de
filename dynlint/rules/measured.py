"""What each rule's findings were on real code: written by `python bench/zoo/score.py --write docs/accuracy.md`
from the zoo (bench/zoo/: transformers 5.4.0, torch 2.13.0+cpu), read by `dynlint rules` and by the choice
of preview rules. Data only."""

MEASURED: dict = {
    "DYN101": {"right": 32, "false": 0, "unverified": 209, "sites": 32},
    "DYN102": {"right": 1, "false": 0, "unverified": 1, "sites": 1},
    "DYN106": {"right": 1, "false": 0, "unverified": 0, "sites": 1},
    "DYN201": {"right": 10, "false": 0, "unverified": 30, "sites": 10},
    "DYN202": {"right": 0, "false": 0, "unverified": 7, "sites": 0},
    "DYN203": {"right": 6, "false": 1, "unverified": 76, "sites": 6},
    "DYN206": {"right": 0, "false": 0, "unverified": 1, "sites": 0},
    "DYN207": {"right": 3, "false": 0, "unverified": 17, "sites": 3},
    "DYN301": {"right": 0, "false": 0, "unverified": 7, "sites": 0},
    "DYN302": {"right": 4, "false": 0, "unverified": 175, "sites": 4},
    "DYN303": {"right": 0, "false": 0, "unverified": 8, "sites": 0},
    "DYN305": {"right": 0, "false": 0, "unverified": 13, "sites": 0},
    "DYN306": {"right": 0, "false": 1, "unverified": 5, "sites": 0},
    "DYN309": {"right": 0, "false": 0, "unverified": 2, "sites": 0},
    "DYN314": {"right": 10, "false": 0, "unverified": 14, "sites": 10},
    "DYN316": {"right": 0, "false": 0, "unverified": 2, "sites": 0},
    "DYN317": {"right": 0, "false": 0, "unverified": 3, "sites": 0},
    "DYN401": {"right": 4, "false": 0, "unverified": 181, "sites": 4},
    "DYN402": {"right": 17, "false": 0, "unverified": 69, "sites": 17},
    "DYN403": {"right": 3, "false": 0, "unverified": 43, "sites": 3},
    "DYN404": {"right": 0, "false": 0, "unverified": 35, "sites": 0},
    "DYN405": {"right": 10, "false": 0, "unverified": 25, "sites": 10},
    "DYN502": {"right": 0, "false": 0, "unverified": 1, "sites": 0},
    "DYN602": {"right": 0, "false": 0, "unverified": 2, "sites": 0},
    "DYN604": {"right": 0, "false": 0, "unverified": 12, "sites": 0},
    "DYN606": {"right": 0, "false": 0, "unverified": 1, "sites": 0},
    "DYN607": {"right": 0, "false": 0, "unverified": 1, "sites": 0},
}
