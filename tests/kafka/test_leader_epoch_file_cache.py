"""Apache Kafka's ``LeaderEpochFileCacheTest`` (core, kafka.server.epoch, 4.3.1)
restated on replicheck's two epoch caches: the model's, derived from a log's
records (``model.epoch_entries`` / ``model.end_offset_for_epoch``, a leader's
current epoch entering at its LESO), and the SUT's ``LeaderEpochFileCache``
(``assign``, ``truncate_from_end``, ``end_offset_for``). Every test drives both
the way Kafka drives its cache and asserts Kafka's values on each. (The storage
module has no LeaderEpochFileCacheTest of its own in 4.3.1.)

Kafka's wording -> the model's log: ``assign(epoch, offset)`` writes the records
from ``offset`` on in ``epoch`` (the log truncated to ``offset`` if longer, grown
to it in the latest epoch if shorter; an epoch without records yet is the
leader's current entry); "the log end offset is n" grows the log to n in the
latest epoch; ``truncateFromEnd(n)`` truncates the log to n. The model's logs
start at offset 0 and Kafka's cache at its first entry (the model has no log
start offset): the model's offsets are rebased on the first assigned offset.
Kafka's ``(UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)`` is ``None`` in both caches.

These are pure functions and an object outside any scenario: each test runs
once (``ENGINES = False``: no mirrored run).
"""

from __future__ import annotations

from typing import Optional

from model import Record, end_offset_for_epoch, epoch_entries
from sut.epoch_cache import LeaderEpochFileCache

ENGINES = False

UNDEFINED_EPOCH = -1
UNDEFINED_EPOCH_OFFSET = -1
UNDEFINED = (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)

NOT_EXPRESSIBLE = {
    "shouldPersistEpochsBetweenInstances": "checkpoint file (a new cache reading the old one's checkpoint)",
    "shouldWriteCheckpointOnTruncation": "checkpoint file (contents after truncations)",
    "shouldPreserveResetOffsetOnClearEarliestIfOneExists": "log start offset (truncateFromStart)",
    "shouldUpdateSavedOffsetWhenOffsetToClearToIsBetweenEpochs": "log start offset (truncateFromStart)",
    "shouldNotClearAnythingIfOffsetToEarly": "log start offset (truncateFromStart)",
    "shouldNotClearAnythingIfOffsetToFirstOffset": "log start offset (truncateFromStart)",
    "shouldRetainLatestEpochOnClearAllEarliest": "log start offset (truncateFromStart)",
    "shouldUpdateOffsetBetweenEpochBoundariesOnClearEarliest": "log start offset (truncateFromStart)",
    "shouldUpdateOffsetBetweenEpochBoundariesOnClearEarliest2": "log start offset (truncateFromStart)",
    "shouldRetainLatestEpochOnClearAllEarliestAndUpdateItsOffset": "log start offset (truncateFromStart)",
    "shouldNotResetEpochHistoryHeadIfUndefinedPassed": "log start offset (truncateFromStart)",
    "shouldClearEarliestOnEmptyCache": "log start offset (truncateFromStart)",
}



class EpochLog:
    """A model replica's log, grown as Kafka's test drives its cache (see the
    module docstring); its epoch cache is ``model.epoch_entries(log, current)``."""

    def __init__(self) -> None:
        self.base: Optional[int] = None    # Kafka's offset of the model's offset 0
        self.epochs: list[int] = []        # the epoch of each record
        self.current: Optional[tuple[int, int]] = None  # the latest assigned (epoch, model offset)

    def _at(self, offset: int) -> int:
        assert self.base is not None and offset >= self.base, (offset, self.base)
        return offset - self.base

    def assign(self, epoch: int, offset: int) -> None:
        if self.base is None or offset < self.base:  # a new log, or all of it truncated
            self.base, self.epochs, self.current = offset, [], None
        at = self._at(offset)
        del self.epochs[at:]
        self.grow_to(offset)
        assert not self.epochs or epoch >= max(self.epochs), "a model log never holds an epoch after a higher one"
        self.current = (epoch, at)

    def grow_to(self, leo: int) -> None:
        """The log end offset reaches ``leo``: records written in the latest epoch."""
        if self.base is None or self.current is None:
            return
        while len(self.epochs) < leo - self.base:
            self.epochs.append(self.current[0])

    def truncate_to(self, offset: int) -> None:
        if self.base is None:
            return
        at = max(0, offset - self.base)
        del self.epochs[at:]
        if self.current is not None and self.current[1] >= at:  # the latest epoch is the last record's
            entries = epoch_entries(self.log)
            self.current = entries[-1] if entries else None

    @property
    def log(self) -> tuple[Record, ...]:
        return tuple(Record(e, 0) for e in self.epochs)

    def entries_rebased(self) -> list[tuple[int, int]]:
        return epoch_entries(self.log, self.current)

    def entries(self) -> list[tuple[int, int]]:
        return [(e, start + self.base) for e, start in self.entries_rebased()]  # type: ignore[operator]

    def end_offset_for(self, epoch: int) -> Optional[tuple[int, int]]:
        eoe = end_offset_for_epoch(self.log, epoch, self.current)
        return None if eoe is None else (eoe.epoch, eoe.end_offset + self.base)  # type: ignore[operator]


def both(value: object) -> dict[str, object]:
    return {"model": value, "sut": value}


class Caches:
    """The model's log and the SUT's cache, driven alike; each query answers
    ``{"model": ..., "sut": ...}`` in Kafka's terms (compare with ``both(x)``)."""

    def __init__(self, *assigns: tuple[int, int]) -> None:
        self.model = EpochLog()
        self.sut = LeaderEpochFileCache()
        for epoch, offset in assigns:
            self.assign(epoch, offset)

    def assign(self, epoch: int, offset: int) -> None:
        self.model.assign(epoch, offset)
        self.sut.assign(epoch, offset)

    def truncate_from_end(self, offset: int) -> None:
        self.model.truncate_to(offset)
        self.sut.truncate_from_end(offset)

    def end_offset_for(self, epoch: int, log_end_offset: int) -> dict[str, object]:
        """Kafka's ``endOffsetFor(epoch, logEndOffset)``. Kafka passes a dummy LEO
        (below the entries) where the lookup does not read it; the model's log is
        only ever grown."""
        self.model.grow_to(log_end_offset)
        sut = self.sut.end_offset_for(epoch, log_end_offset)
        return {"model": self.model.end_offset_for(epoch) or UNDEFINED, "sut": UNDEFINED if sut is None else sut}

    def entries(self) -> dict[str, object]:
        return {"model": self.model.entries() if self.model.base is not None else [],
                "sut": [tuple(e) for e in self.sut.entries()]}

    def latest_epoch(self) -> dict[str, object]:
        model = self.entries()["model"]
        return {"model": model[-1][0] if model else None, "sut": self.sut.latest_epoch()}  # type: ignore[index]

    def map_entries(self, query) -> dict[str, object]:
        """``query(entries)`` on each cache's entries: Kafka's lookups that
        replicheck's caches do not offer (previousEpoch, nextEpoch, epochEntry)."""
        return {side: query(entries) for side, entries in self.entries().items()}  # type: ignore[arg-type]


def lower_entry(epoch: int):
    """Kafka's previousEntry(epoch): the entry of the highest epoch below ``epoch``."""
    return lambda entries: next((e for e in reversed(entries) if e[0] < epoch), None)


def lower_epoch(epoch: int):
    """Kafka's previousEpoch(epoch): the highest epoch below ``epoch``."""
    def query(entries):
        entry = lower_entry(epoch)(entries)
        return None if entry is None else entry[0]
    return query


def higher_epoch(epoch: int):
    """Kafka's nextEpoch(epoch): the lowest epoch above ``epoch``."""
    return lambda entries: next((e[0] for e in entries if e[0] > epoch), None)


def previous_epoch(entries):
    """Kafka's previousEpoch(): the epoch of the entry before the latest."""
    return entries[-2][0] if len(entries) > 1 else None


def entry_of(epoch: int):
    """Kafka's epochEntry(epoch)."""
    return lambda entries: next((e for e in entries if e[0] == epoch), None)


def three_epochs() -> Caches:
    """The set-up most of Kafka's truncation tests share: epochs 2, 3, 4 at 6, 8, 11."""
    return Caches((2, 6), (3, 8), (4, 11))


# ------------------------------------------------------------------- assign


def test_LeaderEpochFileCacheTest_shouldAddEpochAndMessageOffsetToCache():
    """LeaderEpochFileCacheTest.shouldAddEpochAndMessageOffsetToCache: epoch 2 at 10;
    the latest epoch is 2, the entry (2, 10), its end offset the LEO (11)."""
    c = Caches((2, 10))
    assert c.latest_epoch() == both(2)
    assert c.end_offset_for(2, 11) == both((2, 11))
    assert c.entries() == both([(2, 10)])


def test_LeaderEpochFileCacheTest_shouldReturnLogEndOffsetIfLatestEpochRequested():
    """LeaderEpochFileCacheTest.shouldReturnLogEndOffsetIfLatestEpochRequested: the end
    offset of the latest epoch is the LEO."""
    c = Caches((2, 11), (2, 12))
    assert c.end_offset_for(2, 14) == both((2, 14))


def test_LeaderEpochFileCacheTest_shouldNotOverwriteLogEndOffsetForALeaderEpochOnceItHasBeenAssigned():
    """LeaderEpochFileCacheTest.shouldNotOverwriteLogEndOffsetForALeaderEpochOnceItHasBeenAssigned:
    epoch 2 assigned at 9 then at 10 keeps its start offset 9."""
    c = Caches((2, 9), (2, 10))
    assert c.entries() == both([(2, 9)])


def test_LeaderEpochFileCacheTest_shouldEnforceMonotonicallyIncreasingStartOffsets():
    """LeaderEpochFileCacheTest.shouldEnforceMonotonicallyIncreasingStartOffsets: a new
    epoch at the same start offset replaces the old entry."""
    c = Caches((2, 9), (3, 9))
    assert c.entries() == both([(3, 9)])


def test_LeaderEpochFileCacheTest_shouldNotOverwriteOffsetForALeaderEpochOnceItHasBeenAssigned():
    """LeaderEpochFileCacheTest.shouldNotOverwriteOffsetForALeaderEpochOnceItHasBeenAssigned:
    a later assignment of the same epoch at a greater offset is ignored."""
    c = Caches((2, 6), (2, 10))
    assert c.map_entries(lambda entries: entries[0][1]) == both(6)


def test_LeaderEpochFileCacheTest_shouldNotUpdateEpochAndStartOffsetIfItDidNotChange():
    """LeaderEpochFileCacheTest.shouldNotUpdateEpochAndStartOffsetIfItDidNotChange: one
    entry (2, 6) after assigning epoch 2 at 6 and 7."""
    c = Caches((2, 6), (2, 7))
    assert c.entries() == both([(2, 6)])


def test_LeaderEpochFileCacheTest_shouldSupportEpochsThatDoNotStartFromZero():
    """LeaderEpochFileCacheTest.shouldSupportEpochsThatDoNotStartFromZero: epoch 2 at 6,
    LEO 7: end offset (2, 7), one entry (2, 6)."""
    c = Caches((2, 6))
    assert c.end_offset_for(2, 7) == both((2, 7))
    assert c.entries() == both([(2, 6)])


def test_LeaderEpochFileCacheTest_shouldTruncateIfMatchingEpochButEarlierStartingOffset():
    """LeaderEpochFileCacheTest.shouldTruncateIfMatchingEpochButEarlierStartingOffset:
    epochs 5, 6, 7 at 11, 12, 13, then epoch 7 at 12: epoch 6 is gone, so epochs 5
    and 6 both end at 12."""
    c = Caches((5, 11), (6, 12), (7, 13), (7, 12))
    assert c.end_offset_for(5, 0) == both((5, 12))
    assert c.end_offset_for(6, 0) == both((5, 12))


def test_LeaderEpochFileCacheTest_shouldEnforceMonotonicallyIncreasingEpochs():
    """LeaderEpochFileCacheTest.shouldEnforceMonotonicallyIncreasingEpochs: epochs 1, 2
    at 5, 6, then epoch 1 at 7 removes the later epochs: latest epoch 1, entry (1, 7),
    end offset (1, 8) at LEO 8, epoch 2 undefined.

    A model log never holds epoch 1 after epoch 2 (Kafka's comment: the log "has
    already reached an inconsistent state"): the model's log is the one the cache
    then describes, epoch 1 from offset 7."""
    c = Caches((1, 5), (2, 6))
    c.sut.assign(1, 7)
    c.model = EpochLog()
    c.model.assign(1, 7)
    assert c.latest_epoch() == both(1)
    assert c.end_offset_for(1, 8) == both((1, 8))
    assert c.end_offset_for(2, 8) == both(UNDEFINED)
    assert c.map_entries(lambda entries: entries[0]) == both((1, 7))


def test_LeaderEpochFileCacheTest_shouldEnforceOffsetsIncreaseMonotonically():
    """LeaderEpochFileCacheTest.shouldEnforceOffsetsIncreaseMonotonically: epoch 2 at 6,
    then epoch 3 at 5: the last assignment wins, the first entry is (3, 5)."""
    c = Caches((2, 6), (3, 5))
    assert c.map_entries(lambda entries: entries[0]) == both((3, 5))


def test_LeaderEpochFileCacheTest_shouldIncreaseAndTrackEpochsAsLeadersChangeManyTimes():
    """LeaderEpochFileCacheTest.shouldIncreaseAndTrackEpochsAsLeadersChangeManyTimes:
    epochs 0 and 1 both at 0 (no record in 0): latest epoch 1 ending at the LEO (0,
    then 5), epoch 0 ending at 0; epoch 2 at 5, LEO 10: 2 ends at 10, 1 at 5, 0 at 0."""
    c = Caches((0, 0), (1, 0))
    assert c.latest_epoch() == both(1)
    assert c.end_offset_for(1, 0) == both((1, 0))
    assert c.end_offset_for(0, 0) == both((0, 0))
    assert c.end_offset_for(1, 5) == both((1, 5))
    assert c.end_offset_for(0, 5) == both((0, 0))
    c.assign(2, 5)
    assert c.end_offset_for(2, 10) == both((2, 10))
    assert c.end_offset_for(1, 10) == both((1, 5))
    assert c.end_offset_for(0, 10) == both((0, 0))


def test_LeaderEpochFileCacheTest_shouldIncreaseAndTrackEpochsAsFollowerReceivesManyMessages():
    """LeaderEpochFileCacheTest.shouldIncreaseAndTrackEpochsAsFollowerReceivesManyMessages:
    three records in each of epochs 0, 1, 2: the latest epoch ends at the LEO, the
    older ones at the start of the next."""
    c = Caches()
    for epoch in (0, 1, 2):
        for offset in range(3 * epoch, 3 * epoch + 3):
            c.assign(epoch, offset)
        leo = 3 * epoch + 3
        assert c.latest_epoch() == both(epoch)
        assert c.end_offset_for(epoch, leo) == both((epoch, leo))
    assert c.end_offset_for(0, 9) == both((0, 3))
    assert c.end_offset_for(1, 9) == both((1, 6))


# ------------------------------------------------------------------- endOffsetFor


def test_LeaderEpochFileCacheTest_shouldReturnUndefinedOffsetIfUndefinedEpochRequested():
    """LeaderEpochFileCacheTest.shouldReturnUndefinedOffsetIfUndefinedEpochRequested:
    epochs 2, 3 at 11, 12; a bootstrapping follower asks for UNDEFINED_EPOCH: answer
    (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)."""
    c = Caches((2, 11), (3, 12))
    assert c.end_offset_for(UNDEFINED_EPOCH, 0) == both(UNDEFINED)


def test_LeaderEpochFileCacheTest_shouldReturnUnsupportedIfNoEpochRecorded():
    """LeaderEpochFileCacheTest.shouldReturnUnsupportedIfNoEpochRecorded: an empty cache
    answers (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET) for epoch 0."""
    assert Caches().end_offset_for(0, 0) == both(UNDEFINED)


def test_LeaderEpochFileCacheTest_shouldFetchEndOffsetOfEmptyCache():
    """LeaderEpochFileCacheTest.shouldFetchEndOffsetOfEmptyCache: an empty cache answers
    (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET) for epoch 7."""
    assert Caches().end_offset_for(7, 0) == both(UNDEFINED)


def test_LeaderEpochFileCacheTest_shouldReturnUnsupportedIfNoEpochRecordedAndUndefinedEpochRequested():
    """LeaderEpochFileCacheTest.shouldReturnUnsupportedIfNoEpochRecordedAndUndefinedEpochRequested:
    an empty cache answers (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET) for UNDEFINED_EPOCH."""
    assert Caches().end_offset_for(UNDEFINED_EPOCH, 73) == both(UNDEFINED)


def test_LeaderEpochFileCacheTest_shouldReturnFirstEpochIfRequestedEpochLessThanFirstEpoch():
    """LeaderEpochFileCacheTest.shouldReturnFirstEpochIfRequestedEpochLessThanFirstEpoch:
    epochs 5, 6, 7 at 11, 12, 13; epoch 4, below them all: (4, 11), the first start."""
    c = Caches((5, 11), (6, 12), (7, 13))
    assert c.end_offset_for(4, 0) == both((4, 11))


def test_LeaderEpochFileCacheTest_shouldGetFirstOffsetOfSubsequentEpochWhenOffsetRequestedForPreviousEpoch():
    """LeaderEpochFileCacheTest.shouldGetFirstOffsetOfSubsequentEpochWhenOffsetRequestedForPreviousEpoch:
    two records in each of epochs 1, 2, 3 from 11: epoch 2 ends at 15, where 3 starts."""
    c = Caches((1, 11), (1, 12), (2, 13), (2, 14), (3, 15), (3, 16))
    assert c.end_offset_for(2, 17) == both((2, 15))


def test_LeaderEpochFileCacheTest_shouldReturnNextAvailableEpochIfThereIsNoExactEpochForTheOneRequested():
    """LeaderEpochFileCacheTest.shouldReturnNextAvailableEpochIfThereIsNoExactEpochForTheOneRequested:
    epochs 0, 2, 4 at 10, 13, 17: epoch 1 -> (0, 13), 2 -> (2, 17), 3 -> (2, 17)."""
    c = Caches((0, 10), (2, 13), (4, 17))
    assert c.end_offset_for(1, 0) == both((0, 13))
    assert c.end_offset_for(2, 0) == both((2, 17))
    assert c.end_offset_for(3, 0) == both((2, 17))


def test_LeaderEpochFileCacheTest_shouldReturnInvalidOffsetIfEpochIsRequestedWhichIsNotCurrentlyTracked():
    """LeaderEpochFileCacheTest.shouldReturnInvalidOffsetIfEpochIsRequestedWhichIsNotCurrentlyTracked:
    epoch 2 at 100; epoch 3, above every epoch: (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)."""
    c = Caches((2, 100))
    assert c.end_offset_for(3, 100) == both(UNDEFINED)


def test_LeaderEpochFileCacheTest_shouldFetchLatestEpochOfEmptyCache():
    """LeaderEpochFileCacheTest.shouldFetchLatestEpochOfEmptyCache: no latest epoch."""
    assert Caches().latest_epoch() == both(None)


# ------------------------------------------------------------- truncateFromEnd


def test_LeaderEpochFileCacheTest_shouldDropEntriesOnEpochBoundaryWhenRemovingLatestEntries():
    """LeaderEpochFileCacheTest.shouldDropEntriesOnEpochBoundaryWhenRemovingLatestEntries:
    truncating to 8, where epoch 3 starts, removes epochs 3 and 4."""
    c = three_epochs()
    c.truncate_from_end(8)
    assert c.entries() == both([(2, 6)])


def test_LeaderEpochFileCacheTest_shouldDropEntriesBetweenEpochBoundaryWhenRemovingNewest():
    """LeaderEpochFileCacheTest.shouldDropEntriesBetweenEpochBoundaryWhenRemovingNewest:
    truncating to 9, inside epoch 3, keeps epochs 2 and 3 (latest 3)."""
    c = three_epochs()
    c.truncate_from_end(9)
    assert c.latest_epoch() == both(3)
    assert c.entries() == both([(2, 6), (3, 8)])


def test_LeaderEpochFileCacheTest_shouldNotResetEpochHistoryTailIfUndefinedPassed():
    """LeaderEpochFileCacheTest.shouldNotResetEpochHistoryTailIfUndefinedPassed:
    truncateFromEnd(UNDEFINED_EPOCH_OFFSET) changes nothing. The model never
    truncates to a negative offset (``truncation_offset`` is at least 0): only the
    SUT's cache is driven."""
    c = three_epochs()
    c.sut.truncate_from_end(UNDEFINED_EPOCH_OFFSET)
    assert len(c.sut.entries()) == 3


def test_LeaderEpochFileCacheTest_shouldClearLatestOnEmptyCache():
    """LeaderEpochFileCacheTest.shouldClearLatestOnEmptyCache: truncating an empty
    cache from the end is harmless."""
    c = Caches()
    c.truncate_from_end(7)
    assert c.entries() == both([])


def test_LeaderEpochFileCacheTest_shouldClearAllEntries():
    """LeaderEpochFileCacheTest.shouldClearAllEntries: clearAndFlush empties the cache
    (the model: the whole log truncated; the SUT: ``clear``)."""
    c = three_epochs()
    c.model.truncate_to(c.model.base)  # type: ignore[arg-type]
    c.sut.clear()
    assert c.entries() == both([])


# ----------------------------------------------- lookups read from the entries


def assert_previous_story(query, expected: list) -> None:
    """The story of Kafka's testPreviousEpoch, testFindPreviousEpoch and
    testFindPreviousEntry: ``query(epoch)`` on an empty cache (epoch 2), after
    assigning epochs 2, 4, 10 at 10, 15, 20 (each the epoch just assigned), and
    for the latest epoch once truncating to 18 removed epoch 10: ``expected``."""
    c = Caches()
    assert c.map_entries(query(2)) == both(expected[0])
    for (epoch, offset), answer in zip([(2, 10), (4, 15), (10, 20)], expected[1:4]):
        c.assign(epoch, offset)
        assert c.map_entries(query(epoch)) == both(answer)
    c.truncate_from_end(18)
    assert c.map_entries(lambda entries: query(entries[-1][0])(entries)) == both(expected[4])


def test_LeaderEpochFileCacheTest_testPreviousEpoch():
    """LeaderEpochFileCacheTest.testPreviousEpoch: previousEpoch(), the epoch before the
    latest: none, none, 2, 4, and 2 once truncating to 18 removed epoch 10 (at 20)."""
    assert_previous_story(lambda _epoch: previous_epoch, [None, None, 2, 4, 2])


def test_LeaderEpochFileCacheTest_testFindPreviousEpoch():
    """LeaderEpochFileCacheTest.testFindPreviousEpoch: previousEpoch(e), the highest
    epoch below e: none for 2, 2 for 4, 4 for 10, and 2 below the latest after
    truncating to 18."""
    assert_previous_story(lower_epoch, [None, None, 2, 4, 2])


def test_LeaderEpochFileCacheTest_testFindPreviousEntry():
    """LeaderEpochFileCacheTest.testFindPreviousEntry: previousEntry(e): none for 2,
    (2, 10) for 4, (4, 15) for 10, and (2, 10) below the latest after truncating to 18."""
    assert_previous_story(lower_entry, [None, None, (2, 10), (4, 15), (2, 10)])


def test_LeaderEpochFileCacheTest_testFindNextEpoch():
    """LeaderEpochFileCacheTest.testFindNextEpoch: epochs 0, 1, 2 at 0, 100, 200:
    nextEpoch(-1) = 0, (0) = 1, (1) = 2, none above."""
    c = Caches((0, 0), (1, 100), (2, 200))
    for epoch, following in [(-1, 0), (0, 1), (1, 2), (2, None), (100, None)]:
        assert c.map_entries(higher_epoch(epoch)) == both(following)


def test_LeaderEpochFileCacheTest_testGetEpochEntry():
    """LeaderEpochFileCacheTest.testGetEpochEntry: epochEntry(e) for epochs 2, 3, 5 at
    100, 500, 1000."""
    c = Caches((2, 100), (3, 500), (5, 1000))
    for entry in [(2, 100), (3, 500), (5, 1000)]:
        assert c.map_entries(entry_of(entry[0])) == both(entry)


def test_LeaderEpochFileCacheTest_shouldFetchEpochForGivenOffset():
    """LeaderEpochFileCacheTest.shouldFetchEpochForGivenOffset: epochs 0, 1, 5 at 10, 20,
    30: the epoch of offsets 25, 20, 30, 50 is 1, 1, 5, 5; offset 5 has none (the
    SUT's ``epoch_for_offset``; the model: the epoch of the record there, the log
    grown to 51)."""
    c = Caches((0, 10), (1, 20), (5, 30))
    c.model.grow_to(51)
    m = c.model
    for offset, epoch in [(25, 1), (20, 1), (30, 5), (50, 5), (5, None)]:
        at = offset - m.base  # type: ignore[operator]
        model = m.log[at].epoch if 0 <= at < len(m.log) else None
        assert {"model": model, "sut": c.sut.epoch_for_offset(offset)} == both(epoch)
