"""The bundled data files of DeepVM Studio (``data/README.md``), installed as the package
``deepvm_core.bundled_data`` (``setup.py`` maps this folder there). Read them through
:mod:`deepvm_core.bundled`, never by a path relative to the source tree."""
