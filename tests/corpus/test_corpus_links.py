"""Security: nothing is written through a symbolic link planted inside a corpus
folder (one other local users can write in). A table or partition folder that
is a link is refused with one line naming it (``store.part``, the writer's
counterexample then printed, replayable), a link at a file's name is never
followed (``O_CREAT | O_EXCL | O_NOFOLLOW``; ``os.link`` onto a name that
exists fails), a ``.spark-stop`` link makes a campaign on Spark refuse the
corpus before Spark starts and is never written through later
(``campaign.spark_pool``), and a ``logs`` link is refused by ``replicheck
fuzz``. Each test checks that nothing outside the corpus was written."""

from __future__ import annotations

import datetime as dt
import errno
import io
import os
import warnings
from pathlib import Path

import pytest

from campaign.plan import Campaign
from campaign.spark_pool import STOP_FOLDER, SparkPool, _Job, stop_folder_problem
from campaign.targets import Target
from store.errors import CorpusWarning
from store.nofollow import LinkRefused, create_new, folder, replace_file
from store.part import write_part
from store.reader import read_counterexamples
from store.writer import UNWRITTEN_MARK, CorpusWriter, row_from_text

from corpus_support import HWM_CONFIG, HWM_TRACE, rows_for
from planted_links import outside, unchanged  # noqa: F401 (outside: a fixture)

DAY = dt.date(2024, 5, 1)
PARTITION = f"run_date={DAY.isoformat()}"


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    return rows_for(HWM_TRACE, HWM_CONFIG)


# ------------------------------------------------------------------ store.part


@pytest.mark.parametrize("planted", ["table", "partition"])
def test_a_linked_table_or_partition_folder_is_refused(tmp_path, outside, rows, planted):
    corpus = tmp_path / "corpus"
    if planted == "table":
        corpus.mkdir()
        (corpus / "counterexamples").symlink_to(outside, target_is_directory=True)
        linked = corpus / "counterexamples"
    else:
        (corpus / "counterexamples").mkdir(parents=True)
        (corpus / "counterexamples" / PARTITION).symlink_to(outside, target_is_directory=True)
        linked = corpus / "counterexamples" / PARTITION
    with pytest.raises(LinkRefused) as refused:
        write_part(corpus, "counterexamples", rows, "r", "w", run_date=DAY)
    assert refused.value.errno == errno.ELOOP
    assert str(refused.value).startswith(f"{linked} is a symbolic link: ") and "\n" not in str(refused.value)
    assert unchanged(outside)


def test_a_link_at_a_parts_name_is_not_followed(tmp_path, outside, rows):
    """A link planted at the name a part would take: the part takes the next
    ``seq``, the link and its target stay as they were."""
    partition = tmp_path / "corpus" / "counterexamples" / PARTITION
    partition.mkdir(parents=True)
    (partition / "part-r-w-0000.parquet").symlink_to(outside / "victim.txt")
    path = write_part(tmp_path / "corpus", "counterexamples", rows, "r", "w", run_date=DAY)
    assert path.name == "part-r-w-0001.parquet" and not path.is_symlink()
    assert (partition / "part-r-w-0000.parquet").is_symlink()
    assert unchanged(outside)


def test_a_new_file_is_never_created_through_a_link(tmp_path, outside):
    """``O_CREAT | O_EXCL`` (and ``O_NOFOLLOW``) fails on a link at the name,
    dangling or not: nothing is written through it."""
    (tmp_path / "to-victim").symlink_to(outside / "victim.txt")
    (tmp_path / "dangling").symlink_to(outside / "new.txt")
    with folder(tmp_path) as fd:
        for name in ("to-victim", "dangling"):
            with pytest.raises(FileExistsError):
                create_new(name, fd)
    assert unchanged(outside)


def test_a_file_replaced_in_place_replaces_a_link_at_its_name(tmp_path, outside):
    (tmp_path / "page.html").symlink_to(outside / "victim.txt")
    path = replace_file(tmp_path, "page.html", b"mine")
    assert not path.is_symlink() and path.read_bytes() == b"mine"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["outside", "page.html"]   # no temp file left
    assert unchanged(outside)


def test_the_writer_prints_a_counterexample_it_cannot_write_behind_a_link(tmp_path, outside, rows):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "counterexamples").symlink_to(outside, target_is_directory=True)
    err = io.StringIO()
    writer = CorpusWriter(corpus, run_id="r", worker="w", err=err)
    writer.add_counterexamples(rows)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CorpusWarning)
        with pytest.raises(LinkRefused):
            writer.flush()
    (line,) = [x for x in err.getvalue().splitlines() if x.startswith(UNWRITTEN_MARK)]
    assert row_from_text(line)["counterexample_id"] == rows[0]["counterexample_id"]
    assert "is a symbolic link" in err.getvalue()
    assert unchanged(outside)
    (corpus / "counterexamples").unlink()          # the link removed: the next write has it
    writer.flush()
    assert [r["counterexample_id"] for r in read_counterexamples(corpus).rows] == writer.written_ids


# ------------------------------------------------------------------ campaign.spark_pool's stop files


def test_a_campaign_on_spark_refuses_a_corpus_whose_stop_folder_is_a_link(tmp_path, outside):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / STOP_FOLDER).symlink_to(outside, target_is_directory=True)
    assert stop_folder_problem(corpus) == f"{corpus / STOP_FOLDER} is a symbolic link: replicheck writes nothing " \
        "through a link inside a corpus or report folder; remove it (or name the folder it points to)"
    with pytest.raises(ValueError, match="is a symbolic link"):   # before Spark starts
        SparkPool(Campaign([Target("correct")], budget_s=60.0, workers=1, master="local[1]",
                           corpus_dir=str(corpus)), work=print)
    assert stop_folder_problem(tmp_path / "elsewhere") is None and stop_folder_problem("s3://bucket/corpus") is None


def _pool_without_spark(corpus: Path) -> SparkPool:
    """A SparkPool's stop-file part alone (no Spark, no listener)."""
    pool = SparkPool.__new__(SparkPool)
    pool._listener, pool._corpus, pool._stop_files = None, str(corpus), []
    pool._stop_dir = str(corpus / STOP_FOLDER)
    return pool


def test_stop_files_are_never_written_through_a_link(tmp_path, outside):
    """A ``.spark-stop`` link planted once the campaign runs: no stop file is
    written (the tasks are cancelled after the grace instead); a link at a stop
    file's name: not followed, and not removed at the end (not ours)."""
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    pool = _pool_without_spark(corpus)
    (corpus / STOP_FOLDER).symlink_to(outside, target_is_directory=True)
    assert pool._ask_to_stop([_Job("u", "replicheck-x-0")]) is False
    assert unchanged(outside)
    (corpus / STOP_FOLDER).unlink()
    (corpus / STOP_FOLDER).mkdir()
    (corpus / STOP_FOLDER / "replicheck-x-1").symlink_to(outside / "victim.txt")
    assert pool._ask_to_stop([_Job("u", "replicheck-x-0"), _Job("u", "replicheck-x-1")]) is True
    assert (corpus / STOP_FOLDER / "replicheck-x-0").is_file() and pool._stop_files == ["replicheck-x-0"]
    pool._remove_stop_files()
    assert [p.name for p in (corpus / STOP_FOLDER).iterdir()] == ["replicheck-x-1"]
    assert unchanged(outside)


# ------------------------------------------------------------------ replicheck fuzz's logs folder


def test_fuzz_refuses_a_logs_folder_that_is_a_link(tmp_path, outside):
    from replicheck_cli.fuzz import FuzzRequest, _session
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    (corpus / "logs").symlink_to(outside, target_is_directory=True)
    with pytest.raises(ValueError, match=r"logs is a symbolic link: replicheck writes nothing through a link"):
        _session(FuzzRequest(minutes=0.1, corpus_dir=corpus, report_dir=None, live=False, seed=1))
    assert unchanged(outside)


def test_a_tasks_log_is_not_opened_through_a_link(tmp_path, outside):
    """A link planted at the name of the units' log (in the corpus's logs
    folder): the task's output is not sent through it."""
    from campaign.spark_pool import _output_to
    (tmp_path / "campaign-x.log").symlink_to(outside / "victim.txt")
    with pytest.raises(OSError) as refused:
        with _output_to(str(tmp_path / "campaign-x.log")):
            print("through the link")
    assert refused.value.errno == errno.ELOOP
    assert unchanged(outside)
