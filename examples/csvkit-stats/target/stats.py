"""Run csvstat (csvkit) over one table: stats.py INPUT_DIR OUTPUT.csv.

INPUT_DIR holds table.csv and format.txt (the --decimal-format to print numbers with). The csvkit package beside
this file, when there is one, is used before an installed one (the acceptance vendors it so that mutants of it
can be made)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from csvkit.utilities.csvstat import CSVStat


def main() -> None:
    folder, out = Path(sys.argv[1]), Path(sys.argv[2])
    fmt = (folder / "format.txt").read_text(encoding="utf-8").strip()
    with out.open("w", encoding="utf-8", newline="") as handle:
        CSVStat(["--csv", "--decimal-format", fmt, str(folder / "table.csv")], handle).run()


if __name__ == "__main__":
    main()
