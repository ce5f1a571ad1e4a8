"""Every command's arguments, without its action: ``rsrank CMD --help``
and a usage error need only this module and the light tables it reads
(:mod:`rsrank.learning.defaults`, the metric conventions, the export
formats), never the numerical libraries. The action of command ``name``
is ``rsrank.cli.<name>.run``, imported once the command line is read."""

from ..deployment._formats import FORMATS
from ..evaluation._conventions import CONVENTIONS
from ..learning.defaults import (DEFAULT_L1_RATIO, DEFAULT_WITHIN, SPARSE_L1_RATIO,
                                 SPARSE_VALI_CV, SPARSE_WITHIN)
from ._arguments import (add_data_options, add_training_options, jobs, metric, non_negative_int,
                         number_list, pair_weights, positive, within)
from ._commands import COMMANDS

__all__ = ["PARSERS", "DEFAULT_METRICS"]

#: the metrics ``rsrank compare`` tests unless ``--metrics`` names others
DEFAULT_METRICS = "NDCG@1,NDCG@3,NDCG@5,NDCG@10,MAP"


def _info(commands):
    info = commands.add_parser("info", help=COMMANDS["info"])
    info.add_argument("path", nargs="?", help="LETOR file, fold root or a directory with "
                      "rank.train/rank.test or train.txt/test.txt (default: bundled data)")


def _fetch(commands):
    fetch = commands.add_parser(
        "fetch", help=COMMANDS["fetch"],
        description="Download a dataset of the registry (its files' SHA-256 checked, a cut-off "
        "transfer resumed, nothing left behind on failure) into the data home, once, and "
        "print its directory: rsrank train \"$(rsrank fetch OHSUMED)\". Each file is checked "
        "against its SHA-256 or its git blob id, stops at its registry size, and the free "
        "space is checked first.")
    fetch.add_argument("name", nargs="?", help="a registry name (see --list)")
    fetch.add_argument("--list", action="store_true", help="list the registry's datasets")
    fetch.add_argument("--data-home", default=None, help="where datasets are kept (default: "
                       "$RSRANK_DATA, the data/ directory of a source checkout, or "
                       "~/rsrank_data)")
    fetch.add_argument("--url", default=None, help="a mirror: the URL of the dataset's own "
                       "folder, holding its files uncompressed at the registry's paths "
                       "(Fold1/train.txt, ... or rank.train, ...; a local copy is served with "
                       "'python -m http.server' in that folder), or for a dataset published as "
                       "an archive (MSLR, Istella) the archive's own URL; the checksums still "
                       "apply")
    fetch.add_argument("--quiet", action="store_true", help="no progress bar")


def _train(commands):
    train = commands.add_parser("train", help=COMMANDS["train"],
                                description="For each fold: train every grid point on train, "
                                "select on vali, evaluate on test; print the LETOR table.")
    add_data_options(train)
    clicks = train.add_argument_group("click logs", "train on what users clicked instead of "
                                      "the labels (docs/guide/clicks.md)")
    clicks.add_argument("--clicks", metavar="LOG", help="click log of the training queries "
                        "(CSV: session,qid,docid,position,click or qid,docid,position,"
                        "impressions,clicks), joined to --train's rows on qid and docid; a "
                        "Fold<k> root trains on clicks when its folds hold train.clicks.csv")
    clicks.add_argument("--vali-clicks", metavar="LOG", help="click log of --vali's queries: "
                        "selection and early stopping judge NDCG@10 on its clicks, with "
                        "the position's bias taken out")
    clicks.add_argument("--propensity", type=number_list(float), default=None,
                        metavar="P1,P2,...", help="the chance of examining each position, "
                        "from the top (for example from a randomised experiment), instead "
                        "of estimating it from the training log")
    clicks.add_argument("--debias", choices=("auto", "on", "off"), default="auto",
                        help="auto (default): fit both of the others and keep the one that "
                        "ranks the vali log's documents better, graded by their clicks "
                        "without the position's bias (plain on a tie); on: take the "
                        "position's bias out of the clicks; "
                        "off: plain click training, each session a query and its clicks "
                        "the labels (the baseline to compare with)")
    train.add_argument("--feature-names", help="file of feature names: one per line, or "
                       "'index name' lines (RankLib, Elasticsearch LTR feature lists)")
    train.add_argument("--folds", type=number_list(int), default=None,
                       help="comma-separated fold numbers (default: all found)")
    strengths = train.add_mutually_exclusive_group()
    strengths.add_argument("--l1-ratio", type=number_list(float), default=None,
                           help="comma-separated L1 strengths as fractions of each fold's "
                           "l1_max, the smallest l1 that keeps every weight at zero (default "
                           f"{','.join(f'{v:g}' for v in DEFAULT_L1_RATIO)}; with --within "
                           f"{SPARSE_WITHIN:g} or more "
                           f"{','.join(f'{v:g}' for v in SPARSE_L1_RATIO)})")
    strengths.add_argument("--l1", type=number_list(float), default=None,
                           help="comma-separated L1 strengths g, in the units of the scaled "
                           "features (instead of --l1-ratio)")
    train.add_argument("--vali-cv", type=non_negative_int, default=None, metavar="K",
                       help="also judge every grid point on K folds of the training queries "
                       "(each held-out query scored by the path fitted on the others), beside "
                       "vali: more queries to select on where vali has few (0: vali alone; "
                       f"default: vali alone, and {SPARSE_VALI_CV} with --within "
                       f"{SPARSE_WITHIN:g} or more unless --stream)")
    train.add_argument("--with-linear", action="store_true",
                       help="with --additive, also walk the linear model's path: the "
                       "selection keeps the linear model unless the shapes beat it on vali by "
                       "more than one standard error over the vali queries (about one more "
                       "linear run of time; results/kind_rule.md)")
    train.add_argument("--within", type=within, default=DEFAULT_WITHIN,
                       help="keep the sparsest grid point whose vali score is within this "
                       "fraction of the best (0 keeps the best), or '1se': within one "
                       "standard error of the best over the vali queries (default "
                       f"{DEFAULT_WITHIN}; {SPARSE_WITHIN:g} or more also takes the sparse "
                       "path and --vali-cv, results/sparse3.md)")
    train.add_argument("--truncation-period", type=number_list(int), default=None,
                       help="K of truncated gradient (comma-separated grid; default 1)")
    train.add_argument("--pair-weight", type=pair_weights, default=None,
                       help="pair weights: delta_ndcg (|Delta NDCG| of the swap, RSRank's), "
                       "unit (every pair 1, as RankSVM), comma-separated (default with "
                       "--learning-rate curvature: both, else delta_ndcg; a path of --interactions "
                       "on a sample, --path-rows, walks the first alone, which its pairs were "
                       "searched with)")
    add_training_options(train, grid=True)
    train.add_argument("--select", type=metric, default="ndcg@10",
                       help="validation metric: ndcg@K, p@K or map (default ndcg@10)")
    train.add_argument("--jobs", type=jobs, default=1,
                       help="folds in parallel (default 1; -1: one per core)")
    train.add_argument("--stream", type=positive(int), nargs="?", const=1000, default=None,
                       metavar="QUERIES", help="read training files from disk in blocks of "
                       "QUERIES queries (default 1000) every epoch instead of loading them")
    train.add_argument("--cache", nargs="?", const=True, default=None, metavar="DIR",
                       help="keep parsed files as memory-mappable arrays and reuse them "
                       "while the files are unchanged (default place: .rsrank-cache beside "
                       "the data, or ~/.cache/rsrank when that is read-only)")
    train.add_argument("--n-features", type=positive(int), default=None,
                       help="number of features (default: largest index in the files)")
    train.add_argument("--dtype", choices=["float32", "float64"], default="float32",
                       help="precision the features are kept in (default float32: half the "
                       "memory; float64 trains on the values exactly as written)")
    train.add_argument("--scheduler", metavar="ADDRESS",
                       help="run the folds on a Dask cluster (tcp://host:8786)")
    train.add_argument("--out", help="directory for results.json/.md, models, predictions")
    train.add_argument("--force", action="store_true", help="replace an existing --out")
    train.add_argument("--seeds", type=positive(int), default=None, metavar="N",
                       help="run every fold with N seeds (--seed, --seed + 1, ...): mean ± "
                       "std over folds and seeds, per-seed per-query values in results.json")
    train.add_argument("--quiet", action="store_true", help="no progress: without it, a line "
                       "per finished fold on stderr and, on a terminal, one bar over every fit "
                       "of the run")


def _evaluate(commands):
    evaluate = commands.add_parser("evaluate", help=COMMANDS["evaluate"])
    evaluate.add_argument("model", nargs="?", help="model file written by train / save()")
    evaluate.add_argument("file", help="LETOR file with labels and qid")
    evaluate.add_argument("--scores", help="scores instead of a model: one per line in the "
                          "file's row order, or a TSV or TREC run from rsrank predict (matched "
                          "to the file by qid and docid)")
    evaluate.add_argument("--convention", choices=list(CONVENTIONS), default="letor",
                          help="letor (default): LETOR's Eval-Score-3.0; trec_eval: trec_eval's "
                          "ndcg_cut, P and map (ties by the file's docids); sklearn: "
                          "scikit-learn's ndcg_score; see rsrank.metrics")
    evaluate.add_argument("--clicks", metavar="LOG", help="a click log of FILE's queries "
                          "(FILE's rows with their docids): the model's NDCG@10 on the shown "
                          "documents graded by their clicks without the position's bias, as "
                          "rsrank train --debias auto compares models, with a 95%% interval "
                          "over queries, instead of FILE's labels")
    evaluate.add_argument("--per-query", action="store_true",
                          help="one TSV line per query (qid, NDCG@1..10, P@1..10, AP) instead "
                          "of the means")


def _compare(commands):
    compare_ = commands.add_parser(
        "compare", help=COMMANDS["compare"],
        description="Each run against the first (or --baseline), per metric: the paired "
        "t-test and the paired randomization test over queries, Holm-corrected across "
        "metrics and runs. A run is a directory written by rsrank train (its per-query test "
        "values, averaged over its seeds), a score file (one score per line) or a run (TSV "
        "or TREC) with --data, or a TREC run with --qrels.")
    compare_.add_argument("runs", nargs="+", metavar="RUN")
    judged = compare_.add_mutually_exclusive_group()
    judged.add_argument("--data", help="LETOR file that the score files score")
    judged.add_argument("--qrels", help="TREC qrels that the runs are judged by (as rsrank "
                        "train --out writes in trec/): every judged document must be in "
                        "each run")
    compare_.add_argument("--clicks", metavar="LOG", help="compare models (RUN: model files) "
                          "on a click log of --data's queries, before an A/B test: each "
                          "model's NDCG@10 on the shown documents graded by their clicks "
                          "without the position's bias (as rsrank train --debias auto "
                          "compares), and each one's difference from the first, paired over "
                          "queries, with its 95%% interval and p-value")
    compare_.add_argument("--metrics", default=DEFAULT_METRICS,
                          help="comma-separated (default NDCG@1,NDCG@3,NDCG@5,NDCG@10,MAP)")
    compare_.add_argument("--convention", choices=list(CONVENTIONS),
                          default=None, help="for score files (default: the directories', "
                          "else letor; trec_eval reproduces trec_eval's ndcg_cut and map on "
                          "TREC runs); directories must have been evaluated with it")
    compare_.add_argument("--baseline", help="the run the others are compared with "
                          "(default: the first)")
    compare_.add_argument("--resamples", type=int, default=100_000,
                          help="randomization-test resamples (default 100000)")
    compare_.add_argument("--seed", type=int, default=0,
                          help="seed of the randomization test (default 0)")
    compare_.add_argument("--json", action="store_true", help="print the tests as JSON")
    compare_.add_argument("--plot", metavar="FILE", help="also draw each run's per-query "
                          "difference from the baseline in NDCG@10 (or the first metric when "
                          "NDCG@10 is not compared), sorted, into FILE")


def _predict(commands):
    predict = commands.add_parser("predict", help=COMMANDS["predict"])
    predict.add_argument("model")
    predict.add_argument("file")
    predict.add_argument("--format", choices=["scores", "tsv", "trec"], default="scores",
                         help="scores: one per line (LETOR's Eval-Score input); tsv: qid, "
                         "docid, score; trec: 'qid Q0 docid rank score tag' (trec_eval, ranx)")
    predict.add_argument("--tag", default="rsrank", help="run tag of a TREC run")
    predict.add_argument("--out", help="output file (default: stdout)")


def _export(commands):
    export = commands.add_parser("export", help=COMMANDS["export"])
    export.add_argument("model", help="a model file (rsrank train's models/Fold<k>.json, or "
                        "RSRank.save)")
    export.add_argument("--format", choices=FORMATS, required=True,
                        help="the engine: solr (the LTR module's model-store JSON), "
                        "elasticsearch or opensearch (the LTR plugin's _createmodel body), "
                        "vespa (a rank profile)")
    export.add_argument("--name", default="rsrank", help="model or rank-profile name")
    export.add_argument("--featureset", default="rsrank_features",
                        help="Elasticsearch/OpenSearch feature set of the upload URL")
    export.add_argument("--store", default="_DEFAULT_", help="Solr feature store")
    export.add_argument("--subset-featureset", nargs=2, metavar=("FULL", "OUT"),
                        help="Elasticsearch/OpenSearch: write to OUT the featureset FULL (a "
                        "_ltr/_featureset body) with only the model's features, the ones the "
                        "plugin then computes")
    export.add_argument("--solr-features", nargs=2, metavar=("FULL", "OUT"),
                        help="Solr: write to OUT the feature store FULL (the JSON list PUT to "
                        "/schema/feature-store) with only the model's features, each feature "
                        "the model was trained with missing values in given defaultValue \"NaN\" "
                        "(so that a document lacking it scores as predict scores NaN)")
    export.add_argument("--no-nan-guard", dest="guard", action="store_false",
                        help="Elasticsearch/OpenSearch, step models: leave out the trees' guard "
                        "that OpenSearch LTR 3.2-3.7 needs to score a lacking feature as predict "
                        "does; Elasticsearch LTR 1.5.9+ and OpenSearch LTR 3.8+ then also score "
                        "values beyond float32's range (above 3.4e38) as predict does, and "
                        "OpenSearch LTR 3.2-3.7 scores lacking features wrongly")
    export.add_argument("--out", help="output file (default: stdout)")
    export.add_argument("--check", metavar="DATA",
                        help="score DATA (a LETOR file) with the export by each version of the "
                        "engine's rules (rsrank.engines), with every value given and with every "
                        "0 sent as a missing feature (which predict scores as 0, or as NaN for a "
                        "feature the model was trained with NaN in), and say how many queries "
                        "any orders differently from predict (exit 1 if one does)")


def _plot(commands):
    plot = commands.add_parser("plot", help=COMMANDS["plot"])
    plot.add_argument("model", help="a model file (its shapes), or the results.json (or --out "
                      "directory) of rsrank train --clicks (its examination curve)")
    plot.add_argument("--out", required=True, help="picture file (.png, .svg, .pdf)")
    plot.add_argument("--columns", type=positive(int), default=3,
                      help="pictures per row (default 3)")


def _path(commands):
    path = commands.add_parser("path", help=COMMANDS["path"])
    add_data_options(path)
    path.add_argument("--fold", type=int, default=1, help="fold of a Fold<k> root (default 1)")
    path.add_argument("--l1", type=number_list(float), default=None,
                      help="L1 strengths (default: 10 on a log scale from the smallest that "
                      "keeps every weight at zero down to 1/1000 of it, and 0)")
    path.add_argument("--n-features", type=positive(int), default=None,
                      help="number of features (default: largest index in the files)")
    path.add_argument("--cache", nargs="?", const=True, default=None, metavar="DIR",
                      help="keep parsed files as memory-mappable arrays (as for train)")
    path.add_argument("--dtype", choices=["float32", "float64"], default="float32",
                      help="precision the features are kept in (as for train)")
    add_training_options(path, grid=False)
    path.add_argument("--out", help="directory for path.json and path.md")
    path.add_argument("--plot", metavar="FILE", help="also draw NDCG@10 against the "
                      "features in use, per split, into FILE (.png, .svg, .pdf)")
    path.add_argument("--force", action="store_true", help="replace an existing --out")


#: each command's parser, by name, in :data:`~rsrank.cli._commands.COMMANDS`' order
PARSERS = {name: globals()[f"_{name}"] for name in COMMANDS}
