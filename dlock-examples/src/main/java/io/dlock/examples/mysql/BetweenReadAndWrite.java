package io.dlock.examples.mysql;

/**
 * What runs between a deduction's read and its write: nothing in an application; in the tests a
 * latch or a barrier, so that two buyers are made to read the same row before either writes (the
 * interleaving that a busy shop produces by chance, here produced every time).
 */
@FunctionalInterface
interface BetweenReadAndWrite {
  /** Does nothing. */
  BetweenReadAndWrite NOTHING = attempt -> {};

  /**
   * Runs after the read of the given attempt (1 for the first) and before its write.
   *
   * @throws Exception to abandon the deduction (a test that gives up waiting)
   */
  void run(int attempt) throws Exception;
}
