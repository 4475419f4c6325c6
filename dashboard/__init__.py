"""DeepVM Studio's Streamlit dashboard (``make run``; ``dashboard/app.py`` is the script).

A package installed with the project (``pip install -e .``): the pages and modules import each
other as ``dashboard.<module>``, so nothing depends on Streamlit putting ``dashboard/`` on
``sys.path``.
"""
