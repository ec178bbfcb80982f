package io.dlock.torture;

/**
 * One line of a history: what happened, where, and when on the machine's monotonic clock ({@code
 * System.nanoTime}, which on Linux is {@code CLOCK_MONOTONIC} and therefore comparable between the
 * processes of one machine).
 *
 * @param nanos when, on the machine's monotonic clock
 * @param source the worker ({@code w1}, {@code w2}, ...), {@code probe}, {@code register} or {@code
 *     faults}
 * @param kind what happened
 * @param lock the lock name, or {@code -}
 * @param token the fencing token, or 0
 * @param detail free text without tabs or line breaks (a reason, a result, a worker id)
 */
record Event(long nanos, String source, Kind kind, String lock, long token, String detail) {

  /** Everything a history can say. */
  enum Kind {
    /** A worker process started. */
    START,
    /** acquire() is called. */
    ACQUIRING,
    /** acquire() returned this grant. */
    GRANT,
    /** acquire() gave up: detail says why (timeout, unavailable). */
    NO_GRANT,
    /** The lease's loss listener fired; detail is the reason. */
    LOST,
    /** The worker found isValid() false before it touched the registers. */
    INVALID,
    /** The worker is about to call release(). */
    RELEASING,
    /** release() returned; detail is true, false or the exception. */
    RELEASED,
    /** Register operations: detail is ok, lost-update, rejected or stale. */
    UREAD,
    UWRITE,
    FREAD,
    FWRITE,
    /**
     * A semaphore run's fence found a token it had seen listed no longer listed by the backend
     * ({@link PermitFence}): by then the server no longer counted that grant's permits.
     */
    FDELISTED,
    /** Faults injected; detail names the victim or the fault's parameters. */
    KILL,
    STOP,
    CONT,
    RESTART_BEGIN,
    RESTART_END,
    CUT_BEGIN,
    CUT_END,
    DELAY_BEGIN,
    DELAY_END,
    /** The lock deleted on the server while held (an administrator's forced release). */
    FORCE_RELEASE,
    /** A waiting client's connections cut (detail: its source), and healed. */
    WAITER_CUT_BEGIN,
    WAITER_CUT_END,
    /** One member of the backend cut off from the others (detail: which), and healed. */
    MEMBER_CUT_BEGIN,
    MEMBER_CUT_END,
    /** The run's start and end. */
    RUN_BEGIN,
    RUN_END,
    /**
     * An asynchronous acquisition's future cancelled by its worker: detail is what {@code cancel}
     * returned, the acquisition's id ({@code a12}) and how long after the call it was cancelled.
     */
    CANCEL,
    /**
     * An asynchronous acquisition's future ended (its completion callback ran): detail is its id
     * and {@code granted}, {@code cancelled} or {@code failed} with the exception.
     */
    ASYNC_END,
    /**
     * A grant the worker's client still listed ({@code LockClient.heldLeases}) at the worker's end,
     * after every hold of the worker was released and an operation timeout for undos passed: held
     * (and renewed) by nobody's account.
     */
    HELD_AT_END,
    /** A worker's client closed (fault {@code client-close}) while it held the lock. */
    CLIENT_CLOSE,
    /** The worker is about to close its client, holding this lock, with waiters for it. */
    CLOSE_BEGIN,
    /** The worker's {@code LockClient.close()} returned. */
    CLOSE_END,
    /** The worker connected a new client after closing its last. */
    CLIENT_NEW,
    /**
     * Election runs: the candidate was told {@code elected} (a term begins: the token is its epoch,
     * detail its number, {@code #3}). A term is a hold of the election's lock for every criterion.
     */
    ELECTED,
    /** The leader was told {@code uncertain}: it pauses leader-only work (the term stands). */
    UNCERTAIN,
    /** The leader was told {@code restored}: it resumes. */
    RESTORED,
    /**
     * The candidate was told {@code revoked}: the term ends; detail is its number, the reason and
     * the candidacy's detail ({@code #3 EXPIRED ...}). Every reason but {@code RESIGNED} is a loss.
     */
    REVOKED
  }

  String format() {
    return nanos + "\t" + source + "\t" + kind + "\t" + lock + "\t" + token + "\t" + detail;
  }

  static Event parse(String line) {
    String[] f = line.split("\t", 6);
    if (f.length != 6) {
      throw new IllegalArgumentException("not a history line: " + line);
    }
    return new Event(
        Long.parseLong(f[0]), f[1], Kind.valueOf(f[2]), f[3], Long.parseLong(f[4]), f[5]);
  }

  static String clean(String text) {
    return text == null ? "" : text.replace('\t', ' ').replace('\n', ' ').replace('\r', ' ');
  }
}
