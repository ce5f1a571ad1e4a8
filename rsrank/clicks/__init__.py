"""Click logs: what a search engine showed and what its users clicked.

* :mod:`rsrank.clicks.log` reads a log, file or arrays, as a trust
  boundary: every value checked, a problem one line that names the file
  (or the row), the line and the fix;
* :mod:`rsrank.clicks.grading` takes the position's bias out of it
  (:mod:`rsrank.clicks.propensity`) and makes what a fit trains and validates on;
* :mod:`rsrank.clicks.splits` is the one reading of a training and a vali
  log with their features into what a fit takes (debiased, plain, or both);
* :mod:`rsrank.clicks.arrays` turns a log given as arrays into what a fit
  takes (:class:`~rsrank.RSRank`, :class:`~rsrank.RSRankCV`,
  :func:`~rsrank.learning.path.regularization_path`), and
  :mod:`rsrank.clicks.folds` a log file into the folds ``rsrank train
  --clicks`` trains on: the debiased reading, plain clicks, or both;
* :mod:`rsrank.clicks.choice` keeps the better of the two readings
  (``--debias auto``), and :mod:`rsrank.clicks.estimate` estimates a
  model's quality from a log (``rsrank evaluate/compare --clicks``).
"""

from .folds import CLICK_FILES, has_click_logs, load_click_fold, load_click_folds
from .grading import (CASCADE_REPEATS, MAX_CLICK_WEIGHT, GradedClicks, click_preferences,
                      feature_rows, grade_clicks, graded_eval_set, plain_clicks,
                      reads_to_first_click, session_lists)
from .log import (AGGREGATED_COLUMNS, MAX_ID, MAX_IMPRESSIONS, MAX_LINE, MAX_POSITION,
                  SESSION_COLUMNS, ClickLog, SessionClicks, check_log_arguments, document_keys,
                  impression_log)
from .reading import read_click_log

__all__ = ["ClickLog", "SessionClicks", "read_click_log", "feature_rows", "grade_clicks",
           "check_log_arguments", "click_preferences", "GradedClicks", "session_lists",
           "MAX_CLICK_WEIGHT", "CASCADE_REPEATS", "reads_to_first_click",
           "load_click_fold", "load_click_folds", "has_click_logs", "CLICK_FILES",
           "impression_log", "document_keys", "graded_eval_set",
           "plain_clicks", "SESSION_COLUMNS", "AGGREGATED_COLUMNS", "MAX_POSITION",
           "MAX_IMPRESSIONS", "MAX_ID", "MAX_LINE"]
