"""Data-contract rule executors (CEL, JSONata, encryption): the optional extra ``kafkawire[rules]``."""
