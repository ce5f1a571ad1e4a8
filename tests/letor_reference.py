"""A line-by-line transcription of LETOR's Eval-Score-3.0.pl rules, one query
at a time, used as an independent reference for rsrank.evaluation.metrics."""

import math

GAIN = {0: 0.0, 1: 1.0, 2: 3.0, 3: 7.0, 4: 15.0}


def _ranked_labels(labels, scores):
    # Python's sort is stable: tied scores keep file order, as in the script.
    order = sorted(range(len(labels)), key=lambda i: -scores[i])
    return [labels[i] for i in order]


def _dcg(labels, top_n):
    dcg = []
    for pos in range(min(top_n, len(labels))):
        term = GAIN[labels[pos]] if pos < 2 else GAIN[labels[pos]] * math.log(2.0) / math.log(pos + 1.0)
        dcg.append((dcg[-1] if dcg else 0.0) + term)
    return dcg


def query_ndcg(labels, scores, top_n=10):
    ranked = _ranked_labels(labels, scores)
    ideal = sorted(labels, reverse=True)
    dcg, ideal_dcg = _dcg(ranked, top_n), _dcg(ideal, top_n)
    out = []
    for pos in range(top_n):
        if pos < len(labels) and ideal_dcg[pos] != 0:
            out.append(dcg[pos] / ideal_dcg[pos])
        else:
            out.append(0.0)
    return out


def query_precision(labels, scores, top_n=10):
    ranked = _ranked_labels(labels, scores)
    out, hits = [], 0
    for pos in range(top_n):
        if pos < len(ranked):
            hits += ranked[pos] > 0
            out.append(hits / (pos + 1))
        else:
            out.append(0.0)  # undefined in Perl, added as 0
    return out


def query_ap(labels, scores):
    ranked = _ranked_labels(labels, scores)
    hits, total = 0, 0.0
    for pos, label in enumerate(ranked):
        if label > 0:
            hits += 1
            total += hits / (pos + 1)
    return total / hits if hits else 0.0


def evaluate(y, scores, qid, top_n=10):
    """Mean NDCG@1..top_n, P@1..top_n and MAP over queries, LETOR style."""
    queries = {}
    for label, score, q in zip(y, scores, qid):
        queries.setdefault(q, ([], []))
        queries[q][0].append(int(label))
        queries[q][1].append(float(score))
    ndcg = [0.0] * top_n
    prec = [0.0] * top_n
    ap = 0.0
    for labels, query_scores in queries.values():
        for i, v in enumerate(query_ndcg(labels, query_scores, top_n)):
            ndcg[i] += v
        for i, v in enumerate(query_precision(labels, query_scores, top_n)):
            prec[i] += v
        ap += query_ap(labels, query_scores)
    n = len(queries)
    return [v / n for v in ndcg], [v / n for v in prec], ap / n
