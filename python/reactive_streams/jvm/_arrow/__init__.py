"""Arrow conversion on the Python side, in one place (the JVM's is the Java package
``io.github.rspy.bridge.arrow``): rows both ways as Arrow record batches (`_rows`), their
columns' values both ways (`_columns`), Arrow record batches as elements, as IPC bytes or through
the C Data Interface (`_batches`), and rows against a schema the user gave (`_schema`). The rest
of the bridge imports from here, never from those modules. pyarrow is optional: only the
functions that need it import it, when called."""

from ._batches import ExportedBatches as ExportedBatches
from ._batches import decode_batches as decode_batches
from ._batches import encode_batches as encode_batches
from ._batches import import_c_batches as import_c_batches
from ._batches import is_record_batch as is_record_batch
from ._batches import is_record_batch_type as is_record_batch_type
from ._columns import arrow_array as arrow_array
from ._columns import python_values as python_values
from ._rows import RowBatch as RowBatch
from ._rows import available as available
from ._rows import decode_rows as decode_rows
from ._rows import encode_rows as encode_rows
from ._rows import rows_batch as rows_batch
from ._rows import rows_bytes as rows_bytes
from ._schema import RowSchemaError as RowSchemaError
from ._schema import SchemaEncoder as SchemaEncoder
from ._schema import column_label as column_label
from ._schema import first_misfit as first_misfit
from ._schema import schema_bytes as schema_bytes
from ._schema import short_repr as short_repr

__all__ = [
    "ExportedBatches",
    "RowBatch",
    "RowSchemaError",
    "SchemaEncoder",
    "arrow_array",
    "available",
    "column_label",
    "decode_batches",
    "decode_rows",
    "encode_batches",
    "encode_rows",
    "first_misfit",
    "import_c_batches",
    "is_record_batch",
    "is_record_batch_type",
    "python_values",
    "rows_batch",
    "rows_bytes",
    "schema_bytes",
    "short_repr",
]
