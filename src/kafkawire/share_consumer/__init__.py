"""The share consumer (KIP-932): `ShareConsumer`, its share fetch engine and its share group
membership; it stands on the group consumer's decoding, heartbeat loop, options and statistics."""
