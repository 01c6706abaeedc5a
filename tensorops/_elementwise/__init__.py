"""Element-wise ops with named broadcasting: the public functions live in `_api`."""

from tensorops._elementwise._api import ELEMENTWISE_OPS as ELEMENTWISE_OPS
from tensorops._elementwise._api import add as add
from tensorops._elementwise._api import align_operands as align_operands
from tensorops._elementwise._api import divide as divide
from tensorops._elementwise._api import elementwise as elementwise
from tensorops._elementwise._api import finish_result as finish_result
from tensorops._elementwise._api import logaddexp as logaddexp
from tensorops._elementwise._api import maximum as maximum
from tensorops._elementwise._api import minimum as minimum
from tensorops._elementwise._api import multiply as multiply
from tensorops._elementwise._api import subtract as subtract
from tensorops._elementwise._api import where as where
