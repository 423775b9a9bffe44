"""core/held_connections.py: which brokers stay connected, by enable.sparse.connections."""

from __future__ import annotations

from kafkawire.core.held_connections import Holding, held


def test_sparse_holds_nothing() -> None:
    """The default: a connection is made for a request, none is held for its own sake."""
    assert Holding.from_sparse(True) is Holding.NEEDED
    assert held(Holding.NEEDED, [1, 2, 3]) == frozenset()
    assert held(Holding.NEEDED, [-1, -2]) == frozenset()


def test_not_sparse_holds_every_broker_known() -> None:
    """false: the brokers the metadata names (or, before it, the bootstrap connections) are all held."""
    assert Holding.from_sparse(False) is Holding.EVERY_BROKER
    assert held(Holding.EVERY_BROKER, [-1, -2, -3]) == {-1, -2, -3}
    assert held(Holding.EVERY_BROKER, iter([1, 2, 3])) == {1, 2, 3}


def test_a_broker_no_longer_named_is_let_go() -> None:
    """Each answer decides afresh: a broker missing from it is not held, one named again is."""
    assert held(Holding.EVERY_BROKER, [1, 2]) == {1, 2}
    assert held(Holding.EVERY_BROKER, [1, 2, 3]) == {1, 2, 3}
    assert held(Holding.EVERY_BROKER, []) == frozenset()
