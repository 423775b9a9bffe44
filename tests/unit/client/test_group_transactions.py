"""client/group_transactions.py: a group member waits for this process's transactions that carry
its group's offsets (issue 39), on its IO thread, once, until they end or expire."""

from __future__ import annotations

from collections.abc import Callable

from kafkawire.client.group_transactions import GroupTransactions


class Timers:
    """The IO engine's two calls, run by hand."""

    def __init__(self) -> None:
        self.soon: list[Callable[[], None]] = []
        self.later: list[tuple[float, Callable[[], None]]] = []

    def call_soon(self, fn: Callable[[], None]) -> None:
        self.soon.append(fn)

    def call_later(self, delay: float, fn: Callable[[], None]) -> object:
        self.later.append((delay, fn))
        return fn

    def run_soon(self) -> None:
        calls, self.soon = self.soon, []
        for fn in calls:
            fn()


def test_a_member_goes_on_at_once_when_no_transaction_holds_its_offsets() -> None:
    registry, timers, ran = GroupTransactions(), Timers(), []
    registry.opened("txn-other", "other-group", 60)
    registry.after("g", timers, lambda: ran.append("g"))
    assert ran == ["g"] and not timers.later


def test_a_member_waits_for_every_open_transaction_of_its_group_then_goes_once() -> None:
    registry, timers, ran = GroupTransactions(), Timers(), []
    registry.opened("txn-1", "g", 60)
    registry.opened("txn-2", "g", 60)
    registry.after("g", timers, lambda: ran.append("joined"))
    assert ran == [] and len(timers.later) == 1 and 59 < timers.later[0][0] <= 60
    registry.ended("txn-1")
    timers.run_soon()
    assert ran == []  # txn-2 still open
    registry.ended("txn-2")
    assert ran == []  # on the member's IO thread, not the producer's
    timers.run_soon()
    assert ran == ["joined"]
    timers.later[0][1]()  # the expiry timer fires later: nothing more
    registry.ended("txn-2")  # ended twice (commit, then close): nothing more
    timers.run_soon()
    assert ran == ["joined"]


def test_a_transaction_never_ended_stops_holding_the_member_at_its_timeout() -> None:
    registry, timers, ran = GroupTransactions(), Timers(), []
    registry.opened("txn", "g", 30)
    registry.after("g", timers, lambda: ran.append("joined"))
    delay, expire = timers.later[0]
    assert 29 < delay <= 30
    expire()
    assert ran == ["joined"]
    registry.opened("expired", "h", -1)  # expired already: holds nobody
    registry.after("h", timers, lambda: ran.append("h"))
    assert ran == ["joined", "h"]


def test_a_committed_transactions_offsets_are_a_floor_until_an_offset_fetch_shows_them() -> None:
    """Issue 39: EndTxn is answered before the commit marker reaches the offsets partition; an
    OffsetFetch in between shows the offsets the transaction replaced (Kafka < 2.5). A member of the
    process reading such an answer asks again rather than copying those records twice."""
    registry = GroupTransactions()
    txn, other = object(), object()
    registry.opened(txn, "g", timeout=60.0)
    registry.ended(txn, {("t", 0): 120, ("t", 1): 80})
    assert registry.floor("g", ("t", 0), 100) == 120  # not visible yet: ask again
    assert registry.floor("h", ("t", 0), 100) is None  # another group's offsets
    assert registry.floor("g", ("t", 0), 120) is None  # shown: the floor is forgotten
    assert registry.floor("g", ("t", 0), 100) is None  # (an earlier offset later is someone's seek)
    registry.opened(other, "g", timeout=0.0)  # expired at once: the broker aborted it by now
    registry.ended(other, {("t", 2): 50})
    assert registry.floor("g", ("t", 2), 10) is None
    registry.opened(txn, "g", timeout=60.0)
    registry.ended(txn)  # aborted: no floor
    assert registry.floor("g", ("t", 1), 70) == 80  # (the committed one's still holds)


def test_a_member_that_lost_its_partitions_fences_only_its_own_open_transactions() -> None:
    """Issue 39: Kafka 2.3 took the commit of a member it had already replaced (its successor had
    read the offsets before): that member's open transactions become abortable, others' do not."""
    registry = GroupTransactions()
    fenced: list[str] = []
    mine, theirs, done = object(), object(), object()
    registry.opened(mine, "g", 60.0, ("m1", lambda: fenced.append("mine")))
    registry.opened(theirs, "g", 60.0, ("m2", lambda: fenced.append("theirs")))
    registry.opened(done, "g", 60.0, ("m1", lambda: fenced.append("done")))
    registry.ended(done, {})
    registry.lost("g", "m1")
    registry.lost("h", "m2")
    assert fenced == ["mine"]
