package io.dlock.idempotency;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Base64;
import java.util.HexFormat;
import java.util.Objects;

/**
 * Token values and their hashes, shared by the stores: 160 bits from one {@link SecureRandom},
 * base64url without padding; stores keep the SHA-256 (hex) of a token, never the token, so that a
 * leaked table or key dump cannot be replayed.
 */
public final class Tokens {
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final int TOKEN_BYTES = 20;

  /** The longest request id accepted, in characters. */
  public static final int MAX_REQUEST_ID_LENGTH = 128;

  private Tokens() {}

  /** A new unguessable token: 160 random bits, 27 URL-safe characters. */
  public static String newToken() {
    byte[] bytes = new byte[TOKEN_BYTES];
    RANDOM.nextBytes(bytes);
    return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
  }

  /**
   * Checks a request id: the caller's name for one request, the same on every retry of it.
   *
   * @throws IllegalArgumentException if it is empty, longer than {@value #MAX_REQUEST_ID_LENGTH}
   *     characters or has control characters
   */
  public static String checkRequestId(String requestId) {
    Objects.requireNonNull(requestId, "requestId");
    if (requestId.isEmpty() || requestId.length() > MAX_REQUEST_ID_LENGTH) {
      throw new IllegalArgumentException(
          "requestId must have 1 to "
              + MAX_REQUEST_ID_LENGTH
              + " characters, but has "
              + requestId.length());
    }
    if (requestId.chars().anyMatch(Character::isISOControl)) {
      throw new IllegalArgumentException("requestId must not contain control characters");
    }
    return requestId;
  }

  /**
   * What the stores keep of a request id: its SHA-256, base64url without padding (43 characters),
   * so that it fits the stores' columns whatever its length, and a dump does not show it.
   */
  public static String requestIdHash(String requestId) {
    return Base64.getUrlEncoder()
        .withoutPadding()
        .encodeToString(sha256(checkRequestId(requestId).getBytes(StandardCharsets.UTF_8)));
  }

  /** The SHA-256 of {@code value} (UTF-8), 64 lowercase hex characters. */
  public static String sha256Hex(String value) {
    return HexFormat.of().formatHex(sha256(value.getBytes(StandardCharsets.UTF_8)));
  }

  /** The SHA-256 of {@code bytes}. */
  public static byte[] sha256(byte[] bytes) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(bytes);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is missing from this JVM", e);
    }
  }

  /** Checks a time to live against {@link TokenStore}'s range. */
  public static Duration checkTimeToLive(Duration timeToLive) {
    return checkRange(
        "timeToLive", timeToLive, TokenStore.MIN_TIME_TO_LIVE, TokenStore.MAX_TIME_TO_LIVE);
  }

  /**
   * Checks that {@code value} is from {@code min} to {@code max}.
   *
   * @throws IllegalArgumentException naming {@code parameter} and the range
   */
  public static Duration checkRange(String parameter, Duration value, Duration min, Duration max) {
    Objects.requireNonNull(value, parameter);
    if (value.compareTo(min) < 0 || value.compareTo(max) > 0) {
      throw new IllegalArgumentException(
          parameter + " must be from " + min + " to " + max + ", but was " + value);
    }
    return value;
  }
}
