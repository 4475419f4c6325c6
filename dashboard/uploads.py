"""The dashboard's upload limit, derived from the core's (issue 20, item 6).

The core bounds what it reads: a catalog file is at most
:data:`deepvm_core.catalog.schema.MAX_CATALOG_BYTES` (8 MiB; the CLI honours the same). The
browser may send more than that, :data:`TRANSPORT_MB`, so that a file a little too large
reaches the page and is refused there, with the app's message naming the limit (not only
Streamlit's note on the file chip). ``dashboard/serve.py`` gives the server the same number
(``server.maxUploadSize``) and every ``st.file_uploader`` passes it as ``max_upload_size``.

No Streamlit import: ``serve.py`` reads it before the server starts.
"""

from __future__ import annotations

from deepvm_core.catalog.schema import MAX_CATALOG_BYTES

#: Streamlit counts upload sizes in MB of 2**20 bytes.
BYTES_PER_STREAMLIT_MB = 2**20
#: The largest file the browser sends, in Streamlit's MB: 4x the core's catalog limit (32).
TRANSPORT_MB = 4 * MAX_CATALOG_BYTES // BYTES_PER_STREAMLIT_MB
