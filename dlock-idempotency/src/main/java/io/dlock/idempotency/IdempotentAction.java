package io.dlock.idempotency;

/**
 * The work {@link DedupRecords#runOnce} runs at most once per key (while its record is retained). A
 * thrown exception marks the record failed, so a later call may run it again.
 *
 * @param <T> the result, stored through a {@link ResultCodec} and replayed to later calls
 */
@FunctionalInterface
public interface IdempotentAction<T> {
  /** Does the work and returns its result; never {@code null}. */
  T run() throws Exception;
}
