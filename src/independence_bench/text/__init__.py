"""Untrusted text: stored and hashed without loss, written out without control sequences.

The first layer: anything a server, a model or a user sends is text here, whatever code points
it holds (lone UTF-16 surrogates, NUL, escape sequences, bidi controls). `lossless.py` turns it
into bytes for hashes, the wire and the store without ever failing; `outputs.py` is the one
sanitiser per output kind (terminal, Markdown, CSV, SVG/XML, JSON exports); `counts.py` writes
a count with its noun in the right number ("1 run", "3 runs") for every output.
"""
