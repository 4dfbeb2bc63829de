"""Render dynlint's HTML report to a PNG with headless Chromium (Debian: `apt-get install chromium`).

    python bench/screenshot.py                         # examples/ with --verify -> docs/report.png
    python bench/screenshot.py --static                # without --verify (seconds instead of a minute or two)
    python bench/screenshot.py --html /tmp/report.html --out /tmp/report.png   # an existing report

The verify pass compiles the examples for real (on CPU it takes a minute or two). The browser driving is
dynlint.testing's (tests/test_html_report.py uses it too).
"""
import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

from dynlint.testing import screenshot

ROOT = Path(__file__).resolve().parent.parent
def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--project", type=Path, default=ROOT / "examples")
    parser.add_argument("--static", action="store_true", help="skip --verify")
    parser.add_argument("--html", type=Path, help="screenshot this report instead of generating one")
    parser.add_argument("--report", type=Path, default=Path(tempfile.gettempdir()) / "dynlint-report.html",
                        help="where the generated report goes")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "report.png")
    parser.add_argument("--size", default="1400x2400", help="browser window, WIDTHxHEIGHT")
    args = parser.parse_args()
    page = args.html
    if page is None:
        page = args.report
        cmd = [sys.executable, "-m", "dynlint", "check", str(args.project), "--report", str(page), "--exit-zero",
               "--quiet", *([] if args.static else ["--verify"])]
        print("$", " ".join(cmd), file=sys.stderr)
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
    width, height = (int(v) for v in args.size.lower().split("x"))
    print(screenshot(page, args.out, (width, height)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
