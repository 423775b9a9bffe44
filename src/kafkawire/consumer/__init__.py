"""The group consumer: confluent-kafka's `Consumer` over `ConsumerEngine` (fetching ahead,
group membership classic and KIP-848, commits, rebalance callbacks)."""
