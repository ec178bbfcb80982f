package io.dlock.torture;

import java.util.List;

/**
 * One pass criterion of a lock run. A criterion measures the {@link RunHistory} when it is made;
 * its figures are its fields, for the report, and what it found wrong is {@link #failures}.
 */
interface Criterion {
  /** The failures in the report's words, in the order they are found; empty if the run passed. */
  List<String> failures();
}
