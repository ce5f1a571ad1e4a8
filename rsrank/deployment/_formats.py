"""The engines a model is exported to, by the names ``export_model`` and
``rsrank export --format`` take (plain values: the command line shows them
without a numerical library)."""

__all__ = ["FORMATS"]

FORMATS = ("solr", "elasticsearch", "opensearch", "vespa")
