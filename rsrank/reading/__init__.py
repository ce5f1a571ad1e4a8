"""Reading data: LETOR/SVMlight and CSV files into query-grouped arrays,
checked line by line (:mod:`~rsrank.reading.datasets`), with their cache,
streaming in blocks, the layouts of folds and query splits
(:mod:`~rsrank.reading.layouts`), fetching public sets, the query-grouped
data a fit takes (:mod:`~rsrank.reading.querydata`) and generated data
(:mod:`~rsrank.reading.synthetic`)."""
