"""The study: ``bench`` (polytune against compilers, tuning strategies side by side), ``report`` (tables and
figures from recorded results), ``plots`` (the figures), ``records`` (what bench writes and report reads)."""
