"""Render dynlint's HTML report to a PNG with headless Chromium (Debian: `apt-get install chromium`).

    python bench/screenshot.py                         # examples/ with --verify -> docs/report.png
    python bench/screenshot.py --static                # without --verify (seconds instead of a minute or two)
    python bench/screenshot.py --html /tmp/report.html --out /tmp/report.png   # an existing report

The verify pass compiles the examples for real (on CPU it takes a minute or two). tests/test_html_report.py
drives the browser with this script's `screenshot` and `chromium_command` too.
"""
import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Optional, Tuple

ROOT = Path(__file__).resolve().parent.parent

# No network, no first-run chatter, a throw-away profile: the page must render from the file alone.
QUIET_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync",
               "--hide-scrollbars", "--force-device-scale-factor=1")


def chromium_command(page: Path, *flags: str, user_data_dir: Path, browser: str = "chromium") -> list:
    return [browser, *QUIET_FLAGS, f"--user-data-dir={user_data_dir}", *flags, Path(page).resolve().as_uri()]


def screenshot(page: Path, png: Path, size: Tuple[int, int] = (1400, 2400), browser: Optional[str] = None) -> Path:
    """Screenshot `page` (an HTML file) at `size` (the browser window) into `png`; returns png."""
    browser = browser or shutil.which("chromium") or shutil.which("chromium-browser")
    if not browser:
        raise SystemExit("chromium not found: apt-get update && apt-get install -y chromium")
    png = Path(png).resolve()
    png.unlink(missing_ok=True)
    with tempfile.TemporaryDirectory(prefix="dynlint-chromium-") as profile:
        cmd = chromium_command(page, f"--screenshot={png}", f"--window-size={size[0]},{size[1]}",
                               user_data_dir=Path(profile), browser=browser)
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if not png.is_file():
        raise RuntimeError(f"chromium wrote no screenshot (exit {done.returncode}):\n{done.stderr[-2000:]}")
    return png


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
