package io.dlock.torture;

/**
 * What an idempotency run measured: every request was issued once, with a request id of its own,
 * and retried with that id after an error; two requests compete for each token (or dedup key).
 *
 * @param requests requests issued (two per token or key)
 * @param repliesDropped store replies lost with a connection reset
 * @param retries calls repeated with the same request id after an error
 * @param appliedOnce tokens consumed (keys claimed) by exactly one request, which was told so
 * @param appliedTwice tokens (keys) two requests were told they consumed (claimed)
 * @param toldByOwnEarlierAttempt requests refused ({@code ALREADY_CONSUMED}, {@code InProgress} or
 *     another's result) although no other request was told it consumed (claimed) the token (key):
 *     their own earlier, unanswered attempt did
 * @param neverApplied tokens (keys) no request was told it consumed (claimed)
 * @param unresolved requests whose every attempt failed: the caller never learned the outcome
 * @param wrongResults requests told {@code Completed} with another result than the claimant's
 */
record Ledger(
    int requests,
    int repliesDropped,
    int retries,
    int appliedOnce,
    int appliedTwice,
    int toldByOwnEarlierAttempt,
    int neverApplied,
    int unresolved,
    int wrongResults) {

  static String tableHeader() {
    return "| target | scenario | s | requests | replies dropped | retries | applied once"
        + " | applied twice | refused by its own earlier attempt | never applied | unresolved"
        + " | wrong results | verdict |\n"
        + "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|\n";
  }
}
