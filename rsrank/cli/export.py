"""``rsrank export``: a model for Solr, Elasticsearch, OpenSearch or Vespa, checked on the user's data if asked."""

import json
import sys

from ..reading._files import atomic_write_text, read_bounded_text
from ..reading.datasets import load_letor
from ..estimator import RSRank
from ..deployment.export import (engine_features, export_model, featureset_subset, guarantee,
                                 checked_engines, parity, solr_defaults, solr_feature_store,
                                 upload_hint)
from ._options import UsageError, check_file_output, fit_width


def run(args):
    subset, store_files = args.subset_featureset, args.solr_features
    check_file_output(args.out, [args.model] + (list(subset) if subset else [])
                      + (list(store_files) if store_files else [])
                      + ([args.check] if args.check else []))
    if subset:
        if args.format not in ("elasticsearch", "opensearch"):
            raise UsageError("--subset-featureset is for --format elasticsearch or opensearch")
        check_file_output(subset[1], [args.model, subset[0]] + ([args.out] if args.out else []),
                          "--subset-featureset OUT")
    if store_files:
        if args.format != "solr":
            raise UsageError("--solr-features is for --format solr")
        check_file_output(store_files[1], [args.model, store_files[0]]
                          + ([args.out] if args.out else []), "--solr-features OUT")
    model = RSRank.load(args.model)
    checked = None
    if args.check:  # read before anything is written: a bad file leaves no export
        X, _, qid = load_letor(args.check)
        checked = (fit_width(X, model, args.check), qid)
    if not args.guard and args.format not in ("elasticsearch", "opensearch"):
        raise UsageError("--no-nan-guard is for --format elasticsearch or opensearch")
    text = export_model(model, args.format, name=args.name, store=args.store, guard=args.guard)
    body = _model_features(subset[0], "featureset", featureset_subset, model) if subset \
        else None
    store = (_model_features(store_files[0], "feature store", solr_feature_store, model)
             if store_files else None)
    used = engine_features(model)
    listed = ", ".join(name for _, name in used)
    hint = upload_hint(args.format, featureset=args.featureset, store=args.store)
    if args.format in ("elasticsearch", "opensearch") and not subset:
        hint += (f"; the plugin computes every feature of {args.featureset}, so keep only these "
                 "in it (--subset-featureset FULL.json OUT.json writes that featureset)")
    defaults = solr_defaults(model) if args.format == "solr" else {}
    if defaults and not store_files:
        hint += (f"; a document lacking {', '.join(defaults)} scores as predict scores a missing "
                 "value only with their defaultValue in the feature store ("
                 + ", ".join(f"{name} {value}" for name, value in list(defaults.items())[:3])
                 + (", ..." if len(defaults) > 3 else "") + "; --solr-features FULL.json "
                 "OUT.json writes it), else as 0")
    print(f"rsrank export: the engine computes {len(used)} of {model.n_features_in_} "
          f"features: {listed}; {hint}", file=sys.stderr)
    print(f"rsrank export: {args.format}: {guarantee(args.format, model, args.guard)}",
          file=sys.stderr)
    if body is not None:
        atomic_write_text(subset[1], json.dumps(body, indent=2) + "\n")
    if store is not None:
        atomic_write_text(store_files[1], json.dumps(store, indent=2) + "\n")
    if args.out:
        atomic_write_text(args.out, text)
    else:
        sys.stdout.write(text)
    return _check_export(args, model, *checked) if args.check else 0


def _model_features(path, what, select, model):
    """``select(the JSON of path, model)``: the engine's feature definitions
    of the model's features, from the user's full ones in ``path``."""
    try:
        return select(json.loads(read_bounded_text(path, 1 << 26, what)), model)
    except (ValueError, AttributeError) as error:
        raise UsageError(f"{path}: {error}") from None


def _check_export(args, model, X, qid):
    """``--check DATA`` (its rows ``X`` and queries ``qid``): one line per
    version of the engine's rules; a version the export's promise leaves
    out (:func:`~rsrank.deployment.export.guarantee`) is reported as such and does not
    fail the check."""
    engines, outside = checked_engines(args.format, model, args.guard)
    results = parity(model, X, qid, engines, name=args.name, store=args.store,
                     guard=args.guard)
    failed = False
    for engine, result in results.items():
        note = (" (outside the promise: this version holds 0 for a lacking feature the "
                "model was trained with NaN in)" if engine in outside else "")
        if not result["accepted"]:
            failed |= not note
            print(f"rsrank export: check {engine}: refused: {result['error']}{note}",
                  file=sys.stderr)
            continue
        if not note:
            failed |= bool(result["reordered"] or result["reordered_missing"])
        largest = max(result["max_abs_difference"], result["max_abs_difference_missing"])
        print(f"rsrank export: check {engine}{note} on {args.check}: {result['reordered']} of "
              f"{result['queries']} queries ordered differently from predict with every value "
              f"given, {result['reordered_missing']} with every 0 sent as a missing feature "
              f"(judged as 0, or as NaN where the model was trained with NaN; largest "
              f"difference {largest:.2g})", file=sys.stderr)
    return 1 if failed else 0
