"""Every API kafkawire speaks, one module each, collected here by key and by name."""

from ..schema import Api
from .api_versions import API_VERSIONS
from .produce import PRODUCE

# group A imports (producer, transactions, fetch, SASL)
# group B imports (admin)

ALL_APIS: tuple[Api, ...] = (
    PRODUCE,
    API_VERSIONS,
    # group A entries
    # group B entries
)

API_BY_KEY: dict[int, Api] = {a.key: a for a in ALL_APIS}
API_BY_NAME: dict[str, Api] = {a.name: a for a in ALL_APIS}
