"""Client services shared by every client (producer, consumer, admin, Spark): the cluster connection
manager, the one retrying request driver, coordinator lookup, and the callback executor."""
