"""Scoring in parts: large delimited tables split by a hash of the key give the in-memory report byte for byte, and
whatever the in-memory path refuses or names is left to it."""

from __future__ import annotations

import csv
import hashlib
import io
import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import CALIBER as BASE
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tri_agent import MalformedInput, ScoreInputs, UsageError, score
from tri_agent.scoring import _parts
from tri_agent.scoring._channels import tally_tables as _tally
from tri_agent.scoring._tables import records as _records

CALIBER = BASE + "drift: {min_cases: 2}\n"  # the drift audit on: its counts must add up across parts too
COLUMNS = ["case", "group", "avg", "share", "n", "state", "label"]
# what may happen to a row of the answers in the target's table
EDITS = ["same", "drop", "in_tolerance", "out_of_tolerance", "unreadable", "swap", "label", "twice", "thrice",
         "blank_key"]
LABELS = ["x", "a, \"b\"", "line\nbreak", "Ärger", " ", ""]


def _csv(path: Path, rows: list[dict[str, str]], dialect: str = "csv", blank_lines: int = 0) -> Path:
    buf = io.StringIO()
    if dialect == "csv":
        writer = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    else:
        buf.write("\t".join(COLUMNS) + "\n" + "".join("\t".join(r[c] for c in COLUMNS) + "\n" for r in rows))
    path.write_text(buf.getvalue() + "\n" * blank_lines, encoding="utf-8")
    return path


def _answers(n: int, labels: list[str]) -> list[dict[str, str]]:
    return [{"case": f"c-{k % 7}", "group": f"g{k}", "avg": f"{k}.{k % 100:02d}", "share": f"0.{k:06d}",
             "n": str(k), "state": ("ok", "late")[k % 2], "label": labels[k % len(labels)]} for k in range(n)]


def _edited(rows: list[dict[str, str]], edits: list[str]) -> list[dict[str, str]]:
    out = []
    for row, edit in zip(rows, [*edits, *["same"] * len(rows)], strict=False):
        r = dict(row)
        if edit == "drop":
            continue
        r["avg"] = {"in_tolerance": f"{r['avg']}9", "out_of_tolerance": f"{float(r['avg']) + 0.5:.2f}",
                    "unreadable": "n/a"}.get(edit, r["avg"])
        r["state"] = {"swap": "ok" if r["state"] == "late" else "late"}.get(edit, r["state"])
        r["label"] = r["label"] + "!" if edit == "label" else r["label"]
        r["group"] = "" if edit == "blank_key" else r["group"]
        out += [dict(r) for _ in range({"twice": 2, "thrice": 3}.get(edit, 1))]
    return [*out, {**rows[0], "group": "extra"}] if rows else out


def _outcome(inputs: ScoreInputs) -> str:
    """The report as canonical JSON, or the refusal, in the words and place it names."""
    try:
        return score(inputs).to_json()
    except (MalformedInput, UsageError) as exc:
        return f"{type(exc).__name__}: {exc.line()}"


def _both(tmp: Path, inputs: ScoreInputs, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    """The outcome in memory and in parts (many small parts)."""
    monkeypatch.setattr(_parts, "STREAM_BYTES", 1 << 60)
    whole = _outcome(inputs)
    monkeypatch.setattr(_parts, "STREAM_BYTES", 0)
    monkeypatch.setattr(_parts, "PART_BYTES", 256)
    monkeypatch.setattr(_parts, "BLOCK_BYTES", 64)  # many blocks: every cut where a record ends is tried
    return whole, _outcome(inputs)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(n=st.integers(1, 60), edits=st.lists(st.sampled_from(EDITS), max_size=60),
       labels=st.lists(st.sampled_from(LABELS), min_size=1, max_size=4), blank_lines=st.integers(0, 2),
       dialect=st.sampled_from(["csv", "tsv"]), ordered=st.booleans())
def test_scored_in_parts_the_report_is_the_in_memory_one_byte_for_byte(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, n: int, edits: list[str], labels: list[str],
        blank_lines: int, dialect: str, ordered: bool) -> None:
    if dialect == "tsv":  # a TSV field holds neither a tab nor a line break, and no quoting
        labels = [x for x in labels if "\n" not in x and '"' not in x] or ["x"]
    answers = _in_key_order(_answers(n, labels)) if ordered else _answers(n, labels)  # in windows, or by hash
    suffix = "csv" if dialect == "csv" else "tsv"
    (tmp_path / "c.yaml").write_text(CALIBER)
    inputs = ScoreInputs(tmp_path / "c.yaml", _csv(tmp_path / f"a.{suffix}", answers, dialect),
                         _csv(tmp_path / f"x.{suffix}", _edited(answers, edits), dialect, blank_lines))
    whole, parted = _both(tmp_path, inputs, monkeypatch)
    assert parted == whole


def test_large_tables_are_split_and_every_part_is_judged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    answers = _answers(400, LABELS[:4])  # no blank label: the answer key must be valid
    (tmp_path / "c.yaml").write_text(CALIBER)
    edits = ["same", "drop", "in_tolerance", "out_of_tolerance", "twice", "blank_key"] * 60
    inputs = ScoreInputs(tmp_path / "c.yaml", _csv(tmp_path / "a.csv", answers),
                         _csv(tmp_path / "x.csv", _edited(answers, edits)))
    seen: list[int] = []
    real = _parts.tally_tables

    def counting(*args: object, **kwargs: object) -> object:
        tally = real(*args, **kwargs)  # type: ignore[arg-type]
        seen.append(tally.expected)
        return tally

    monkeypatch.setattr(_parts, "tally_tables", counting)
    _hashed_only(monkeypatch)
    whole, parted = _both(tmp_path, inputs, monkeypatch)
    assert parted == whole and len(seen) >= 10 and sum(seen) == 400
    assert sum(1 for s in seen if s > 0) >= 5  # the hash spread the keys
    report = score(inputs)
    # missing: 60 dropped, 60 whose key went blank, 60 given twice; unexpected: the 60 blank keys and 1 extra row
    assert report.answers.rows_missing == 180 and report.answers.rows_unexpected == 61
    assert {f.reason for f in report.answers.failures} >= {"duplicate_key", "blank_key", "out_of_tolerance"}


def test_what_the_in_memory_path_refuses_it_still_refuses_with_its_words(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    answers = _answers(30, ["x"])
    (tmp_path / "c.yaml").write_text(CALIBER)
    twice = _csv(tmp_path / "a.csv", [*answers, answers[3]])
    inputs = ScoreInputs(tmp_path / "c.yaml", twice, _csv(tmp_path / "x.csv", answers))
    monkeypatch.setattr(_parts, "STREAM_BYTES", 0)
    monkeypatch.setattr(_parts, "PART_BYTES", 256)
    with pytest.raises(MalformedInput, match=r"duplicate key \(case='c-3', group='g3'\), first at line 5") as exc:
        score(inputs)
    assert exc.value.where == f"{twice}:32"
    # a target's table polars cannot read: the in-memory path's defect, in the report
    ragged = tmp_path / "ragged.csv"
    ragged.write_text((tmp_path / "x.csv").read_text() + "c-1,g1,1,2,3,ok,x,surplus\n")
    whole, parted = _both(tmp_path, ScoreInputs(tmp_path / "c.yaml", _csv(tmp_path / "a2.csv", answers), ragged),
                          monkeypatch)
    assert parted == whole and '"actual_defects": [' in parted and "fields where the header has 7" in parted


@pytest.mark.parametrize("bad", ["blank", "thrice"])
def test_answers_with_a_blank_key_or_a_key_given_thrice_are_refused_in_parts_too(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, bad: str) -> None:
    """The split counts rows without a key and compacts repeated ones: in the answers, either is the in-memory
    path's refusal, in its words, never a report."""
    answers = _answers(300, ["x"])
    extra = [{**answers[3], "group": " "}] if bad == "blank" else [dict(answers[3]), dict(answers[3])]
    (tmp_path / "c.yaml").write_text(CALIBER)
    inputs = ScoreInputs(tmp_path / "c.yaml", _csv(tmp_path / "a.csv", [*answers[:100], *extra, *answers[100:]]),
                         _csv(tmp_path / "x.csv", answers))
    _hashed_only(monkeypatch)
    whole, parted = _both(tmp_path, inputs, monkeypatch)
    assert parted == whole and parted.startswith("MalformedInput")


def test_the_digest_names_the_bytes_that_were_scored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A table rewritten once it was read (by the target, or anyone): the report scores and names what was read."""
    answers = _answers(30, ["x"])
    (tmp_path / "c.yaml").write_text(CALIBER)
    actual = _csv(tmp_path / "x.csv", answers)
    read = hashlib.sha256(actual.read_bytes()).hexdigest()
    inputs = ScoreInputs(tmp_path / "c.yaml", _csv(tmp_path / "a.csv", answers), actual)
    real = _parts._split

    def rewriting(path: Path, *args: object) -> object:
        done = real(path, *args)  # type: ignore[arg-type]
        if path == actual:
            actual.write_text(actual.read_text().replace("g1,", "g1x,", 1))
        return done

    monkeypatch.setattr(_parts, "STREAM_BYTES", 0)
    monkeypatch.setattr(_parts, "_split", rewriting)
    report = score(inputs)
    assert report.verdict == "pass" and report.actual_sha256 == read != hashlib.sha256(actual.read_bytes()).hexdigest()
    assert [d.sha256 for d in report.inputs if d.role == "actual"] == [read]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cells=st.lists(st.text(alphabet='ab",\n ', max_size=6), min_size=2, max_size=40))
def test_stray_quotes_and_line_breaks_cut_nowhere_else_than_the_whole_file_reads(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cells: list[str]) -> None:
    """Raw text, quotes anywhere (balanced or not): in parts the outcome is the in-memory one, a report or the same
    refusal; a block never ends inside what polars reads as quoted."""
    (tmp_path / "c.yaml").write_text("schema_version: 1\nkey: [k]\nfields: {v: text}\n")
    body = "".join(f"k{n},{c}\n" for n, c in enumerate(cells))
    (tmp_path / "a.csv").write_text("k,v\n" + "".join(f"k{n},x\n" for n in range(len(cells))))
    (tmp_path / "x.csv").write_text("k,v\n" + body)
    whole, parted = _both(tmp_path, ScoreInputs(tmp_path / "c.yaml", tmp_path / "a.csv", tmp_path / "x.csv"),
                          monkeypatch)
    assert parted == whole


def test_blocks_end_only_where_a_record_ends(tmp_path: Path) -> None:
    from tri_agent.scoring._tables import DIALECTS, blocks

    text = 'h1,h2\n"a\nb",1\n"c""\n",2\nplain,3\n"open\n\n'
    (tmp_path / "t.csv").write_text(text)
    got = list(blocks(tmp_path / "t.csv", DIALECTS["csv"], 4))
    assert {h for h, _ in got} == {b"h1,h2\n"} and b"".join(b for _, b in got) == text.encode()[6:]
    assert [b for _, b in got] == [b'"a\nb",1\n', b'"c""\n",2\n', b"plain,3\n", b'"open\n\n']
    (tmp_path / "h.csv").write_text("h1,h2\n")
    assert list(blocks(tmp_path / "h.csv", DIALECTS["csv"], 4)) == [(b"h1,h2\n", b"")]


def test_only_large_delimited_tables_are_scored_in_parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    small, big, lines = tmp_path / "a.csv", tmp_path / "big.tsv", tmp_path / "big.jsonl"
    small.write_text("k\n1\n")
    big.write_bytes(b"k\n" + b"1\n" * 600)
    lines.write_bytes(b'{"k": 1}\n' * 200)
    monkeypatch.setattr(_parts, "STREAM_BYTES", 1000)
    assert not _parts.streamable(small, small)  # below the size: in memory
    assert _parts.streamable(big, small) and _parts.streamable(big, big)
    assert not _parts.streamable(big, lines) and not _parts.streamable(big, tmp_path / "absent.csv")


def _hashed_only(monkeypatch: pytest.MonkeyPatch) -> None:
    def unordered(*args: object) -> None:
        raise _parts._Unordered

    monkeypatch.setattr(_parts, "_in_windows", unordered)


def _parted(tmp: Path, monkeypatch: pytest.MonkeyPatch, caliber: str, answers: Path, actual: Path,
            part_bytes: int = 256) -> _parts.Parted:
    """Scored in parts directly (never handed to the in-memory path), beside the in-memory report."""
    from tri_agent import load_caliber

    (tmp / "c.yaml").write_text(caliber)
    cal, _ = load_caliber(tmp / "c.yaml")
    monkeypatch.setattr(_parts, "PART_BYTES", part_bytes)
    monkeypatch.setattr(_parts, "BLOCK_BYTES", 64)
    parted = _parts.score_in_parts(cal.key, dict(cal.fields), answers, actual, cal.drift,
                                   frozenset(cal.blank_keys or ()))
    assert parted is not None
    whole = score(ScoreInputs(tmp / "c.yaml", answers, actual))
    assert parted.channel == whole.answers and parted.actual.sha256 == whole.actual_sha256
    return parted


def test_a_key_given_a_thousand_times_never_makes_a_part_hold_the_table(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The attack: every row of a key lands in one part, so a target's table that repeats one key (one failure,
    duplicate_key, however often) would put the whole table in memory at once. Compacted parts hold at most
    two rows of a key, and rows without a key are counted, never stored; the rows left out still count in the
    report."""
    rows = _answers(200, ["x"])
    flood = [dict(rows[7]) for _ in range(3000)] + [{**rows[0], "group": "never"} for _ in range(3000)]
    blank = [{**rows[1], "group": ""} for _ in range(300)]  # no key: each row fails on its own, none is left out
    actual = [*rows[:100], *flood, *rows[100:], *blank]
    read = _reading(monkeypatch)
    _hashed_only(monkeypatch)
    parted = _parted(tmp_path, monkeypatch, CALIBER, _csv(tmp_path / "a.csv", rows), _csv(tmp_path / "x.csv", actual),
                     part_bytes=8192)
    assert parted.channel.rows_actual == 6500 and max(f.height for f in read if f is not None) < 150
    reasons = Counter(f.reason for f in parted.channel.failures)
    assert reasons == {"duplicate_key": 2, "blank_key": 300}  # key 7 and "never", each once


def test_a_part_of_many_keys_is_not_rewritten_at_every_block(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Compaction frees nothing when a part's keys are all distinct (a hash that puts every key in one part): its
    bound widens instead, so the part is rewritten a few times, not once a block."""
    import polars as pl

    rows = _answers(2000, ["x"])
    compactions: list[int] = []
    real = _parts._Parts._compact
    monkeypatch.setattr(_parts, "key_hash", lambda key, seed: pl.lit(0, pl.UInt64))
    monkeypatch.setattr(_parts._Parts, "_compact", lambda *a: compactions.append(1) or real(*a))
    _hashed_only(monkeypatch)
    _parted(tmp_path, monkeypatch, CALIBER, _csv(tmp_path / "a.csv", rows), _csv(tmp_path / "x.csv", rows),
            part_bytes=4096)
    # over 2,000 blocks appended to the one part of each table; rewritten about log2(100 kB / 4 kB) times each,
    # and a few more: with blocks this small, a rewrite frees their streams' headers
    assert 5 <= len(compactions) <= 40


def _reading(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every frame read back from a part file, as it is read."""
    frames: list[object] = []
    real = _parts._Parts.read

    def read(self: _parts._Parts, part: int) -> object:
        frames.append(real(self, part))
        return frames[-1]

    monkeypatch.setattr(_parts._Parts, "read", read)
    return frames


def test_no_table_can_be_written_to_fill_one_part(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The attack: with a hash anyone can compute, a target picks 3,000 keys of its own that all land in one part
    (each an unexpected row, but its whole row held in that part). The split's hash is seeded afresh for every
    scoring, so the picked keys spread like any others."""
    import polars as pl

    rows = _answers(200, ["x"])
    extra = [{**rows[0], "case": "z", "group": f"{k:08d}"} for k in range(3000)]
    answers, actual = _csv(tmp_path / "a.csv", rows), _csv(tmp_path / "x.csv", [*rows, *extra])
    monkeypatch.setattr(_parts, "PART_BYTES", 8192)
    parts = _parts.parts_for(answers, actual)
    candidates = pl.DataFrame({"case": "z", "group": [f"{k:08d}" for k in range(100 * 3000)]})
    landing = candidates.filter(pl.struct("case", "group").hash() % parts == 0)["group"].head(3000)
    _csv(actual, [*rows, *({**rows[0], "case": "z", "group": g} for g in landing)])
    assert len(landing) == 3000 and _parts.parts_for(answers, actual) == parts  # as wide: as many parts
    read = _reading(monkeypatch)
    _hashed_only(monkeypatch)
    parted = _parted(tmp_path, monkeypatch, CALIBER, answers, actual, part_bytes=8192)
    assert parted.channel.rows_unexpected == 3000
    assert max(f.height for f in read if f is not None) < 3 * 3200 // parts  # about 3,200 / parts each


def test_a_part_holds_only_the_columns_judging_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A column the caliber does not name (here a wide label) is never written to a part: a target cannot grow
    the parts with cells no rule reads."""
    rows = [{**r, "label": "w" * 2000} for r in _answers(100, ["x"])]
    read = _reading(monkeypatch)
    _hashed_only(monkeypatch)
    _parted(tmp_path, monkeypatch, CALIBER.replace("  label: text\n", ""), _csv(tmp_path / "a.csv", rows),
            _csv(tmp_path / "x.csv", rows[::-1]), part_bytes=8192)
    assert read and {c for f in read if f is not None for c in f.columns} == {_parts.ROW, "case", "group", "avg",
                                                                              "share", "n", "state", _parts._PART}


def test_blank_key_values_where_the_caliber_allows_them_are_scored_in_parts(tmp_path: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    rows = _answers(40, ["x"])
    for r in rows[:3]:
        r["group"] = ""  # an empty cell: a value in this column (cases c-0 to c-2: the keys stay unique)
    actual = [dict(r) for r in rows]
    actual[0]["avg"] = "999.00"  # a failure on a row whose key is blank
    parted = _parted(tmp_path, monkeypatch, CALIBER + "blank_keys: [group]\n", _csv(tmp_path / "a.csv", rows),
                     _csv(tmp_path / "x.csv", actual))
    [failure] = parted.channel.failures
    assert failure.key == {"case": "c-0", "group": ""} and failure.field == "avg"
    assert parted.failing == {("c-0", "")}


def test_the_parts_are_as_many_as_the_sizes_say_and_each_file_is_read_in_blocks(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rows = _answers(50, ["x"])
    answers, actual = _csv(tmp_path / "a.csv", rows), _csv(tmp_path / "x.csv", rows)
    judged, parsed = [], []
    _hashed_only(monkeypatch)
    monkeypatch.setattr(_parts, "tally_tables", lambda *a, **k: judged.append(1) or _tally(*a, **k))
    monkeypatch.setattr(_parts, "records", lambda *a, **k: parsed.append(1) or _records(*a, **k))
    _parted(tmp_path, monkeypatch, CALIBER, answers, actual)
    size = answers.stat().st_size + actual.stat().st_size
    assert len(judged) == _parts.parts_for(answers, actual) == -(-size // 256) and len(parsed) >= 2 * (size // 2 // 64)
    monkeypatch.setattr(_parts, "PART_BYTES", size)
    assert _parts.parts_for(answers, actual) == 1
    monkeypatch.setattr(_parts, "STREAM_BYTES", size)
    assert _parts.streamable(answers, actual)  # from exactly that size on


def test_an_answer_key_without_rows_is_refused_in_the_in_memory_words(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "c.yaml").write_text(CALIBER)
    inputs = ScoreInputs(tmp_path / "c.yaml", _csv(tmp_path / "a.csv", []),
                         _csv(tmp_path / "x.csv", _answers(5, ["x"])))
    whole, parted = _both(tmp_path, inputs, monkeypatch)
    assert parted == whole and "the answer key has no rows" in parted


def test_nothing_is_left_in_the_temporary_folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))
    rows = _answers(30, ["x"])
    _parted(tmp_path, monkeypatch, CALIBER, _csv(tmp_path / "a.csv", rows), _csv(tmp_path / "x.csv", rows))
    assert list(temp.iterdir()) == []


KV = "schema_version: 1\nkey: [c, g]\nfields: {v: text}\nblank_keys: [g]\n"
FILLER = "".join(f"c{i},g{i},x\n" for i in range(30))


@pytest.mark.parametrize(("answers", "actual"), [
    ('k1,"",x\n', "k1,,x\n"),  # the same key, quoted empty and left empty: in memory, one key (it passes)
    ('k1,"",x\nk1,,x\n', 'k1,"",x\nk1,,x\n'),  # twice in the answers, each way: in memory refused as a duplicate
    ('k1,"",x\n', 'k1,"",x\nk1,,x\n'),  # twice in the target's table: a duplicate_key in memory, not two rows
    ('k3,"",x\nk5,,x\n', 'k3,,x\nk5,"",x\n'),
])
def test_a_key_cell_left_empty_and_one_quoted_empty_are_one_key_in_parts_too(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, answers: str, actual: str) -> None:
    """Found by review: polars reads an empty cell as null and "" as the empty string, and the parts were hashed
    before blank_as_value made them alike, so one key went to two parts (a duplicate in the answers then passed)."""
    (tmp_path / "c.yaml").write_text(KV)
    (tmp_path / "a.csv").write_text("c,g,v\n" + answers + FILLER)
    (tmp_path / "x.csv").write_text("c,g,v\n" + actual + FILLER)
    whole, parted = _both(tmp_path, ScoreInputs(tmp_path / "c.yaml", tmp_path / "a.csv", tmp_path / "x.csv"),
                          monkeypatch)
    assert parted == whole


def test_the_header_is_checked_on_the_bytes_that_are_split(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Found by review: the header was read apart (and only its first FIELD_LIMIT bytes), so a repeated column past
    that point, or a header rewritten between the two reads, went unchecked while polars renamed the repeat."""
    (tmp_path / "c.yaml").write_text("schema_version: 1\nkey: [k]\nfields: {v: text}\n")
    (tmp_path / "a.csv").write_text("k,v\n" + "".join(f"k{i},x\n" for i in range(20)))
    (tmp_path / "x.csv").write_text("k,v," + "p" * 80 + ",v\n" + "".join(f"k{i},x,,WRONG\n" for i in range(20)))
    inputs = ScoreInputs(tmp_path / "c.yaml", tmp_path / "a.csv", tmp_path / "x.csv")
    whole, parted = _both(tmp_path, inputs, monkeypatch)
    assert parted == whole and "column 'v' appears twice in the header" in parted and '"verdict": "fail"' in parted
    # a quote the header line leaves open: in memory too it was a polars traceback (ColumnNotFoundError) from a
    # target's table; now the table is unreadable, said in one line, and the score red
    (tmp_path / "x.csv").write_text('k,"v\n' + "".join(f"k{i},x\n" for i in range(20)))
    whole, parted = _both(tmp_path, inputs, monkeypatch)
    assert parted == whole and "a quote it leaves open" in whole and '"verdict": "fail"' in whole


def test_a_quote_that_never_closes_is_scanned_once(tmp_path: Path) -> None:
    """Found by review: each read rescanned every byte held since the open quote, line by line (quadratic: a 256 MiB
    table would take hours before it fell back). Each byte is now searched for a record's end once."""
    from tri_agent.scoring import _tables

    (tmp_path / "t.csv").write_text('k,v\nk0,"' + "\n" * 5000)
    searched: list[int] = []
    real = _tables._record_end

    def spy(data: bytes, quotes: int | None) -> int:
        searched.append(len(data))
        return real(data, quotes)

    with pytest.MonkeyPatch.context() as m:
        m.setattr(_tables, "_record_end", spy)
        got = list(_tables.blocks(tmp_path / "t.csv", _tables.DIALECTS["csv"], 64))
    assert sum(searched) == (tmp_path / "t.csv").stat().st_size - 4 and max(searched) <= 64
    assert [b for _, b in got] == [b'k0,"' + b"\n" * 5000]


def _in_key_order(rows: list[dict[str, str]]) -> list[dict[str, str]]:
    return sorted(rows, key=lambda r: f"{r['case']}\x00{r['group']}")


def _windows_only(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Fail the test if the hash split is used; the window sizes (rows of the answers) judged."""
    def split(*args: object) -> None:
        raise AssertionError("tables in key order were split by hash")

    judged: list[int] = []

    def counting(*args: object, **kwargs: object) -> object:
        tally = _tally(*args, **kwargs)  # type: ignore[arg-type]
        judged.append(tally.expected)
        return tally

    monkeypatch.setattr(_parts, "_split", split)
    monkeypatch.setattr(_parts, "tally_tables", counting)
    return judged


def test_tables_in_key_order_are_judged_a_window_at_a_time_and_never_split(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    from tri_agent.scoring import _channels

    real_join = _channels._joined
    answers = _in_key_order(_answers(300, LABELS[:4]))
    edits = ["same", "drop", "in_tolerance", "out_of_tolerance", "unreadable", "swap", "label"] * 40
    actual = [*_edited(answers, edits)[:-1], {**answers[-1], "case": "c-9", "group": "zz"}]  # an extra row, last
    (tmp_path / "c.yaml").write_text(CALIBER)
    inputs = ScoreInputs(tmp_path / "c.yaml", _csv(tmp_path / "a.csv", answers), _csv(tmp_path / "x.csv", actual))
    judged = _windows_only(monkeypatch)
    joined: list[int] = []  # in key order the rows are paired by a merge: the join is for tables in any order
    monkeypatch.setattr(_channels, "_joined", lambda *a: joined.append(1) or real_join(*a))
    whole, parted = _both(tmp_path, inputs, monkeypatch)
    assert parted == whole and len(judged) >= 10 and sum(judged) == 300 and len(joined) == 1  # the whole, once
    report = score(inputs)
    assert report.answers.rows_missing == 40 and report.answers.rows_unexpected == 1
    assert {f.reason for f in report.answers.failures} >= {"missing_row", "out_of_tolerance", "unexpected_row"}


def test_keys_of_any_script_are_ordered_and_paired_as_the_join_pairs_them(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """The windows prove the order with one comparison and pair rows by a binary search with another: keys
    beyond ASCII (whose UTF-8 bytes sort as their code points) must meet both alike, missing and extra rows too."""
    groups = ["a", "z", "\u00c4rger", "\u00e9t\u00e9", "\u4e2d", "\U0001f600", "\u00c4", "zz", "\u00ff"]
    rows = _in_key_order([{**r, "group": groups[k % len(groups)] + str(k)} for k, r in enumerate(_answers(90, ["x"]))])
    actual = [r for k, r in enumerate(rows) if k % 11] + [{**rows[-1], "case": "\U0001f600", "group": "\u00ff"}]
    actual[5] = {**actual[5], "avg": "0.00"}
    (tmp_path / "c.yaml").write_text(CALIBER)
    inputs = ScoreInputs(tmp_path / "c.yaml", _csv(tmp_path / "a.csv", rows), _csv(tmp_path / "x.csv", actual))
    judged = _windows_only(monkeypatch)
    whole, parted = _both(tmp_path, inputs, monkeypatch)
    assert parted == whole and sum(judged) == 90
    report = score(inputs)
    assert report.answers.rows_missing == 9 and report.answers.rows_unexpected == 1
    assert report.answers.passed == 90 - 9 - 1


@pytest.mark.parametrize("disorder", ["late", "repeated", "null"])
def test_a_key_out_of_order_anywhere_hands_the_tables_to_the_hash_split(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, disorder: str) -> None:
    answers = _in_key_order(_answers(300, LABELS[:4]))
    actual = [dict(r) for r in answers]
    if disorder == "late":  # in order until the last block
        actual[-3], actual[-2] = actual[-2], actual[-3]
    elif disorder == "repeated":  # two rows of one key, side by side: not strictly increasing
        actual.insert(250, dict(actual[250]))
    else:  # a key cell left empty is null: no text to order by
        actual[200]["group"] = ""
    (tmp_path / "c.yaml").write_text(CALIBER)
    inputs = ScoreInputs(tmp_path / "c.yaml", _csv(tmp_path / "a.csv", answers), _csv(tmp_path / "x.csv", actual))
    split: list[Path] = []
    real = _parts._split
    monkeypatch.setattr(_parts, "_split", lambda path, *a: split.append(path) or real(path, *a))
    whole, parted = _both(tmp_path, inputs, monkeypatch)
    assert parted == whole and len(split) == 2
    assert (score(inputs).answers.verdict == "pass") == (disorder == "late")


def test_keys_that_join_into_one_text_share_a_window_and_are_told_apart(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    answers = _in_key_order(_answers(40, ["x"]))
    answers[-1] = {**answers[-1], "case": "c-8\x00g", "group": "1"}  # the text "c-8\0g\01"...
    actual = [dict(r) for r in answers]
    actual[-1] = {**answers[-1], "case": "c-8", "group": "g\x001"}  # ...and here too, but another key
    (tmp_path / "c.yaml").write_text(CALIBER)
    inputs = ScoreInputs(tmp_path / "c.yaml", _csv(tmp_path / "a.csv", answers), _csv(tmp_path / "x.csv", actual))
    _windows_only(monkeypatch)
    whole, parted = _both(tmp_path, inputs, monkeypatch)
    assert parted == whole
    report = score(inputs)
    assert report.answers.rows_missing == 1 and report.answers.rows_unexpected == 1


def test_a_key_of_two_cells_is_ordered_as_its_cells_joined_by_a_nul(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    rows = _in_key_order(_answers(20, ["x"]))
    # ("c-1", "z") before ("c-1!", "a"): a NUL sorts before any character, so the first cell decides
    rows += [{**rows[0], "case": "c-9", "group": "z"}, {**rows[0], "case": "c-9!", "group": "a"}]
    (tmp_path / "c.yaml").write_text(CALIBER)
    inputs = ScoreInputs(tmp_path / "c.yaml", _csv(tmp_path / "a.csv", rows), _csv(tmp_path / "x.csv", rows))
    _windows_only(monkeypatch)
    whole, parted = _both(tmp_path, inputs, monkeypatch)
    assert parted == whole and score(inputs).answers.passed == 22


def test_a_repeated_key_inside_one_block_goes_to_the_hash_split(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    answers = _in_key_order(_answers(30, ["x"]))
    actual = [*answers[:10], answers[10], *answers[10:]]  # side by side, in one block
    (tmp_path / "c.yaml").write_text(CALIBER)
    inputs = ScoreInputs(tmp_path / "c.yaml", _csv(tmp_path / "a.csv", answers), _csv(tmp_path / "x.csv", actual))
    whole = _outcome(inputs)
    split: list[Path] = []
    real = _parts._split
    monkeypatch.setattr(_parts, "_split", lambda path, *a: split.append(path) or real(path, *a))
    monkeypatch.setattr(_parts, "STREAM_BYTES", 0)
    monkeypatch.setattr(_parts, "BLOCK_BYTES", 1 << 20)
    assert _outcome(inputs) == whole and len(split) == 2
    assert "duplicate_key" in whole


def test_blocks_are_read_ahead_while_the_last_is_judged() -> None:
    """The next item is produced while the consumer still holds this one (not after it asks again)."""
    import threading

    made: list[int] = []
    second = threading.Event()

    def items() -> Iterator[int]:
        for n in range(3):
            made.append(n)
            if n == 1:
                second.set()
            yield n

    ahead = _parts._ahead(items())
    assert next(ahead) == 0
    assert second.wait(5)  # produced with no second next()
    assert list(ahead) == [1, 2] and made == [0, 1, 2]


def test_a_failure_while_reading_ahead_is_raised_where_its_block_would_have_been() -> None:
    def items() -> Iterator[int]:
        yield 1
        raise MalformedInput("broken block", where="a.csv:9")

    ahead = _parts._ahead(items())
    assert next(ahead) == 1
    with pytest.raises(MalformedInput, match="broken block"):
        next(ahead)


def test_a_consumer_that_stops_early_stops_the_reader() -> None:
    """A window that gives way to the hash split (a key out of order) abandons its reader: the reader must not go
    on reading the rest of the file."""
    import threading
    import time

    made: list[int] = []

    def endless() -> Iterator[int]:
        n = 0
        while True:
            made.append(n)
            yield n
            n += 1

    before = threading.active_count()
    ahead = _parts._ahead(endless())
    assert next(ahead) == 0
    ahead.close()
    deadline = time.monotonic() + 5
    while threading.active_count() > before and time.monotonic() < deadline:
        time.sleep(0.02)
    assert threading.active_count() == before and len(made) <= 3


def test_the_windows_readers_are_gone_before_the_hash_split_starts(tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Windows given up at a key out of order leave no thread reading on (it would hold blocks in memory while
    the split reads both files again)."""
    import threading

    answers = _in_key_order(_answers(300, LABELS[:4]))
    actual = answers[:40] + answers[40:][::-1]  # out of order from the first block on, read ahead to the end
    (tmp_path / "c.yaml").write_text(CALIBER)
    inputs = ScoreInputs(tmp_path / "c.yaml", _csv(tmp_path / "a.csv", answers), _csv(tmp_path / "x.csv", actual))
    readers: list[int] = []
    real = _parts._hashed

    def hashed(*args: object) -> object:
        readers.append(sum(t.name == _parts.READER for t in threading.enumerate()))
        return real(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(_parts, "_hashed", hashed)
    whole, parted = _both(tmp_path, inputs, monkeypatch)
    assert parted == whole and readers == [0]
