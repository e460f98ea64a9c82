# Writes pyarrow_v2_lists.parquet (pyarrow 26.0.1): a Baseten-shaped trace of
# 1,000 rows with null prompts and session ids and total_hashes lists of 0-9
# entries, in v2 data pages with snappy. Its levels end in a padded
# bit-packed group that does not start on a multiple of 8 values, which an
# earlier Parquet check refused.
import random

import pyarrow as pa
import pyarrow.parquet as pq

random.seed(7)
n = 1000
schema = pa.schema([
    ("timestamp_start_unix_ms", pa.int64()), ("prompt", pa.string()),
    ("input_tokens", pa.int64()), ("output_tokens", pa.int64()),
    ("total_hashes", pa.list_(pa.int64())), ("provided_session_id", pa.string()),
])
table = pa.table(dict(
    timestamp_start_unix_ms=[1_700_000_000_000 + i * 37 for i in range(n)],
    prompt=[None if i % 3 == 0 else "word " * (1 + i % 5) for i in range(n)],
    input_tokens=[10 + i % 7 for i in range(n)],
    output_tokens=[5 + i % 3 for i in range(n)],
    total_hashes=[list(range(random.randint(0, 9))) for i in range(n)],
    provided_session_id=[None if i % 4 else f"s{i % 5}" for i in range(n)],
), schema=schema)
pq.write_table(table, "pyarrow_v2_lists.parquet", data_page_version="2.0", compression="snappy")
