"""Re-exports what the tablegen'd builders (``_adjit_ops_gen.py``) import."""
from mlir.dialects._ods_common import (  # noqa: F401
    _cext,
    equally_sized_accessor,
    get_default_loc_context,
    get_op_result_or_op_results,
    get_op_result_or_value,
    get_op_results_or_values,
    segmented_accessor,
)
