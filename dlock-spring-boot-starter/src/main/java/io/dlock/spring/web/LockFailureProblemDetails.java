package io.dlock.spring.web;

import io.dlock.BackendUnavailableException;
import io.dlock.LockTimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.core.Ordered;
import org.springframework.http.HttpStatus;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.bind.annotation.ExceptionHandler;

/**
 * Answers a request whose {@code @Locked} method (or direct lock call) did not get its lock with an
 * RFC 9457 problem instead of a 500 logged as an error: {@link LockTimeoutException} (another
 * request held the lock for the whole wait) with 409 Conflict or 423 Locked, {@link
 * BackendUnavailableException} (the lock server did not answer) with 503. Both are expected under
 * contention or a server outage, so they are logged at debug only.
 *
 * <p>The problem's detail does not carry the lock name: names carry keys ({@code stock:sku-42},
 * sometimes a user's id) that are not the caller's to see.
 *
 * <p>Switched on by {@code dlock.web.problem-details.enabled=true}. Ordered first among controller
 * advice, as Spring Boot's own problem-details handler: the application asked for it, and a
 * catch-all {@code @ExceptionHandler(Exception.class)} would otherwise take these first. Handlers
 * in the controller class itself still come before any advice.
 */
@ControllerAdvice
public class LockFailureProblemDetails implements Ordered {
  private static final Logger log = LoggerFactory.getLogger(LockFailureProblemDetails.class);

  private final HttpStatusCode lockTimeoutStatus;

  /**
   * @param lockTimeoutStatus the status of a lock not acquired within its wait, 400 to 599
   * @throws IllegalArgumentException if the status is out of that range
   */
  public LockFailureProblemDetails(int lockTimeoutStatus) {
    if (lockTimeoutStatus < 400 || lockTimeoutStatus > 599) {
      throw new IllegalArgumentException(
          "dlock.web.problem-details.lock-timeout-status must be from 400 to 599 (409 Conflict or"
              + " 423 Locked), but was "
              + lockTimeoutStatus);
    }
    this.lockTimeoutStatus = HttpStatusCode.valueOf(lockTimeoutStatus);
  }

  @ExceptionHandler(LockTimeoutException.class)
  public ResponseEntity<ProblemDetail> lockTimeout(LockTimeoutException e) {
    log.debug("answered {}: {}", lockTimeoutStatus, e.getMessage());
    return problem(
        lockTimeoutStatus,
        "The resource is in use by another request; try again later.",
        "lock-timeout");
  }

  @ExceptionHandler(BackendUnavailableException.class)
  public ResponseEntity<ProblemDetail> backendUnavailable(BackendUnavailableException e) {
    log.debug("answered 503: {}", e.getMessage());
    return problem(
        HttpStatus.SERVICE_UNAVAILABLE,
        "The lock service did not answer; try again later.",
        "lock-service-unavailable");
  }

  private static ResponseEntity<ProblemDetail> problem(
      HttpStatusCode status, String detail, String reason) {
    ProblemDetail problem = ProblemDetail.forStatusAndDetail(status, detail);
    problem.setProperty("reason", reason);
    return ResponseEntity.status(status).body(problem);
  }

  @Override
  public int getOrder() {
    return 0;
  }
}
