"""Run csvstat (csvkit) over one table: stats.py INPUT_DIR OUTPUT.csv.

INPUT_DIR holds table.csv and format.txt (the --decimal-format to print numbers with). The csvkit package beside
this file, when there is one, is used before an installed one (the acceptance vendors it so that mutants of it
can be made)."""

import locale
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from csvkit.utilities import csvstat


def format_decimal(d, f="%.3f", no_grouping_separator=False):
    """csvstat's printing of a decimal, with trailing zeros stripped only after a decimal point: csvkit 2.2.0
    strips them from any number, so at %.0f 1200 prints as 12 and 0 as nothing."""
    text = locale.format_string(f, d, grouping=not no_grouping_separator)
    point = locale.localeconv()["decimal_point"]
    return text.rstrip("0").rstrip(point) if point in text else text


csvstat.format_decimal = format_decimal


def main() -> None:
    folder, out = Path(sys.argv[1]), Path(sys.argv[2])
    fmt = (folder / "format.txt").read_text(encoding="utf-8").strip()
    with out.open("w", encoding="utf-8", newline="") as handle:
        csvstat.CSVStat(["--csv", "--decimal-format", fmt, str(folder / "table.csv")], handle).run()


if __name__ == "__main__":
    main()
