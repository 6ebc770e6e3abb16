from typing import Callable, Dict, List

from ._ecat import Network as Network, SimError as SimError

presets: Callable[[], List[str]]
_published: Dict[str, Network]

def publish(net: Network, name: str) -> str: ...
def unpublish(name: str) -> None: ...
