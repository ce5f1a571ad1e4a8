"""The commands of ``rsrank`` as a table: each one's name, the module that
defines it and its one-line help, known without importing the module (as
pip's command table), so that ``rsrank --help`` and ``rsrank --version``
import no numerical library."""

#: name -> one-line help, in the order ``rsrank --help`` lists them; the
#: command ``name`` lives in ``rsrank.cli.<name>``
COMMANDS = {
    "info": "summarise a LETOR file or a directory of folds",
    "fetch": "download a public learning-to-rank dataset and print its directory",
    "train": "grid search per fold on vali, report test",
    "evaluate": "LETOR table of a model or a score file",
    "compare": "paired significance tests between runs on the same queries",
    "predict": "scores of a LETOR file: one per line, a TSV or a TREC run",
    "export": "a model for Solr, Elasticsearch, OpenSearch or Vespa",
    "plot": "an additive model's shape functions as a picture",
    "path": "regularization path on one fold",
}
